"""One engine per method, each built on the method-agnostic core (``explorer.optim``) through its
public names and independent of the others:

- ``fgm``: the ℓ1² problem of FGM's restricted master, its proximal Newton finish and the
  prune–refit–exchange refinement to exactly k features;
- ``fs_multi``: the bundle master of FS-multi, its cut problems and the most violated labelings;
- ``fsa``: FSA's annealing loop with its step rule and schedule;
- ``fs_manifold``: the manifold kernel and the SVM dual behind FS-Manifold's level method;
- ``grfl``: GrFL's group-ℓq master (FISTA or ADMM).

The estimators in ``explorer.methods`` declare the knobs, build an engine's problem and record
what it returns."""
