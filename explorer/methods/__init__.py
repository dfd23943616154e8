"""Methods and baselines behind one estimator contract, and the registry that names them."""

from .base import (
    REGISTRY,
    BaseSelector,
    IterationRecord,
    ParamSpec,
    Recorder,
    get_method,
    register,
)
from .baselines import FisherSVM, L1LogReg, L1SVM, RFESelector

__all__ = [
    "REGISTRY", "BaseSelector", "FisherSVM", "IterationRecord", "L1LogReg", "L1SVM",
    "ParamSpec", "RFESelector", "Recorder", "get_method", "register",
]
