"""What a user knows, on a real set: the grants applications (8,190 × 1,845, success or not).

Six of the predictors code an *unknown* value (``num_unk``, ``sponsor_code=Unk``, …): how the
record was kept, not what the application was, and in this data they go with the outcome. A
grants officer would not build on them, and wants the team size (``num_ci``) in every model.
This compares FSA and abess at k = 10 with and without that knowledge: the cross-validated
accuracy with its interval, the test accuracy on the held-out part (with FGM refine's beside
them), the chosen features and FSA's stability.

    python examples/knowledge.py
"""

import warnings

from explorer.data import load
from explorer.experiments import compare, stability
from explorer.methods import get_method

warnings.simplefilter("ignore")
grants = load("grants")
names = grants.names()
unknown = [n for n in names if n.lower().endswith("unk")]
knowledge = {"always_include": ["num_ci"], "exclude": unknown}
print("excluded:", ", ".join(unknown))
split = grants.split(test_size=0.3, seed=0)
for label, given in (("as given", {}), ("with what the officer knows", knowledge)):
    print(f"--- {label}")
    result = compare(["fsa", "abess"], grants, ks=[10], cv=5, repeats=2, knowledge=given)
    print(result.rows[["method", "accuracy", "accuracy_low", "accuracy_high"]]
          .round(3).to_string(index=False))
    print(*result.verdicts(), sep="\n")
    # the dataset's X carries the names; FGM's refinement pins and excludes too
    for method, extra in (("fsa", {}), ("abess", {}), ("fgm", {"refine": "auto"})):
        model = get_method(method)(k=10, **extra, **given).fit(split.X, split.y)
        print(f"{method}: test accuracy {model.score(split.X_test, split.y_test):.3f};",
              ", ".join(names[j] for j in model.selected_features_))
    print("fsa:", stability("fsa", grants, n_resamples=30, chance=0, k=10,
                            **given).verdict())
