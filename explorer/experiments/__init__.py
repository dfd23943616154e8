"""Experiments over the estimator contract: what a researcher compares and concludes.

* :mod:`~explorer.experiments.sweeps` — accuracy (or any measure) versus the number of
  selected features, scored on the test split or cross-validated (:func:`sweep`,
  :func:`compare`), and the one-standard-error choice of a point.
* :mod:`~explorer.experiments.resampling` — would I get these features again?
  :func:`stability` (Nogueira, Sechidis & Brown's Φ̂ with its interval) and :func:`agreement`
  between methods at the same number of features.
"""

from .resampling import (
    MAX_COUNT_FITS,
    AgreementResult,
    StabilityResult,
    agreement,
    at_k,
    fit_at_k,
    jaccard,
    mean_jaccard,
    phi,
    phi_interval,
    phi_variance,
    stability,
    subsample,
)
from .sweeps import (
    CONNECT_TIMEOUT,
    ROW_COLUMNS,
    available_methods,
    check_compatible,
    compare,
    cv_folds,
    fit_kwargs,
    fit_point,
    monotone_fraction,
    one_standard_error,
    settings_for_task,
    sweep,
)

__all__ = [
    "AgreementResult", "CONNECT_TIMEOUT", "MAX_COUNT_FITS", "ROW_COLUMNS", "StabilityResult",
    "agreement", "at_k", "available_methods", "check_compatible", "compare", "cv_folds",
    "fit_at_k", "fit_kwargs", "fit_point", "jaccard", "mean_jaccard", "monotone_fraction",
    "one_standard_error", "phi", "phi_interval", "phi_variance", "settings_for_task",
    "stability", "subsample", "sweep",
]
