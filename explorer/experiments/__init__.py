"""Experiments over the estimator contract: what a researcher compares and concludes.

* :mod:`~explorer.experiments.sweeps` — accuracy (or any measure) versus the number of
  selected features, scored on the test split or by repeated cross-validation with every
  fold kept (:func:`sweep`, :func:`folds_frame`), and the choice of a
  point.
* :mod:`~explorer.experiments.comparison` — is one method really better? :func:`compare`
  scores methods at the same k on shared repeated folds and pairs them fold for fold.
* :mod:`~explorer.experiments.inference` — the corrected resampled t interval of a paired
  difference (Nadeau & Bengio) and its verdict in words.
* :mod:`~explorer.experiments.error_control` — how many of the chosen features are noise?
  :func:`stability_selection` with the bound the user chose (:mod:`~explorer.experiments.pfer`:
  two of pfer, cutoff and q, as in R's stabs) and :func:`permutation_check`.
* :mod:`~explorer.experiments.knockoffs` — :func:`knockoff_selection`: model-X knockoffs
  (hidimstat's sampler and statistics) with the thresholds of :mod:`~explorer.experiments.fdr`.
* :mod:`~explorer.experiments.resampling` — would I get these features again?
  :func:`stability` (Nogueira, Sechidis & Brown's Φ̂ with its interval) and :func:`agreement`
  between methods at the same number of features.
"""

from .comparison import DEFAULT_REPEATS, Comparison, compare
from .error_control import StabilitySelection, permutation_check, stability_selection
from .inference import LEVEL, PairedDifference, corrected_se, paired_difference, verdict
from .knockoffs import KnockoffSelection, knockoff_selection
from .paths import coefficient_path, redundancy
from .resampling import (
    AgreementResult,
    ChanceReference,
    StabilityResult,
    agreement,
    jaccard,
    mean_jaccard,
    phi,
    phi_interval,
    phi_variance,
    stability,
    stability_difference,
    subsample,
)
from .sweeps import (
    CHOICE_RULE,
    CHOICE_RULES,
    CONNECT_TIMEOUT,
    MAX_COUNT_FITS,
    ROW_COLUMNS,
    at_k,
    available_methods,
    check_compatible,
    choose_point,
    cv_folds,
    fit_at_k,
    fit_kwargs,
    fit_point,
    folds_frame,
    monotone_fraction,
    one_standard_error,
    repeated_folds,
    settings_for_task,
    sweep,
)

__all__ = [
    "agreement", "AgreementResult", "at_k", "available_methods", "ChanceReference",
    "check_compatible", "CHOICE_RULE", "CHOICE_RULES", "choose_point", "coefficient_path",
    "compare", "Comparison", "CONNECT_TIMEOUT", "corrected_se", "cv_folds", "DEFAULT_REPEATS",
    "fit_at_k", "fit_kwargs", "fit_point", "folds_frame", "jaccard", "knockoff_selection",
    "KnockoffSelection", "LEVEL", "MAX_COUNT_FITS", "mean_jaccard", "monotone_fraction",
    "one_standard_error", "paired_difference", "PairedDifference", "permutation_check", "phi",
    "phi_interval", "phi_variance", "redundancy", "repeated_folds", "ROW_COLUMNS",
    "settings_for_task", "stability", "stability_difference", "stability_selection",
    "StabilityResult", "StabilitySelection", "subsample", "sweep", "verdict",
]
