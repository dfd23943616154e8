"""Experiments over the estimator contract: what a researcher compares and concludes.

* :mod:`~explorer.experiments.sweeps` — accuracy (or any measure) versus the number of
  selected features, scored on the test split or by repeated cross-validation with every
  fold kept (:func:`sweep`, :func:`folds_frame`), and the one-standard-error choice of a
  point.
* :mod:`~explorer.experiments.comparison` — is one method really better? :func:`compare`
  scores methods at the same k on shared repeated folds and pairs them fold for fold.
* :mod:`~explorer.experiments.inference` — the corrected resampled t interval of a paired
  difference (Nadeau & Bengio) and its verdict in words.
* :mod:`~explorer.experiments.error_control` — how many of the chosen features are noise?
  :func:`stability_selection` (with its bound on false selections) and
  :func:`knockoff_selection` (model-X knockoffs through hidimstat).
* :mod:`~explorer.experiments.resampling` — would I get these features again?
  :func:`stability` (Nogueira, Sechidis & Brown's Φ̂ with its interval) and :func:`agreement`
  between methods at the same number of features.
"""

from .comparison import DEFAULT_REPEATS, Comparison, compare
from .error_control import (
    KnockoffSelection,
    StabilitySelection,
    knockoff_selection,
    stability_selection,
)
from .inference import LEVEL, PairedDifference, corrected_se, paired_difference, verdict
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
    CONNECT_TIMEOUT,
    MAX_COUNT_FITS,
    ROW_COLUMNS,
    at_k,
    available_methods,
    check_compatible,
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
    "AgreementResult", "CONNECT_TIMEOUT", "ChanceReference", "Comparison", "DEFAULT_REPEATS",
    "KnockoffSelection", "LEVEL", "StabilitySelection", "knockoff_selection",
    "stability_selection", "coefficient_path", "redundancy",
    "MAX_COUNT_FITS", "PairedDifference", "ROW_COLUMNS", "StabilityResult", "agreement", "at_k",
    "available_methods", "check_compatible", "compare", "corrected_se", "cv_folds", "fit_at_k",
    "fit_kwargs", "fit_point", "folds_frame", "jaccard", "mean_jaccard", "monotone_fraction",
    "one_standard_error", "paired_difference", "phi", "phi_interval", "phi_variance",
    "repeated_folds", "settings_for_task", "stability", "stability_difference", "subsample",
    "sweep", "verdict",
]
