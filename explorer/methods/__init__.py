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
from .baselines import L1SVM, FisherSVM, L1LogReg, RFESelector
from .fgm import FGM
from .fsa import FSA

__all__ = [
    "FGM", "FSA", "REGISTRY", "BaseSelector", "FisherSVM", "IterationRecord", "L1LogReg", "L1SVM",
    "ParamSpec", "RFESelector", "Recorder", "get_method", "register",
]
