"""Methods and baselines behind one estimator contract, and the registry that names them."""

from ._cutting import k_grid
from .base import (
    REGISTRY,
    BaseSelector,
    IterationRecord,
    ParamSpec,
    Recorder,
    get_method,
    register,
)
from .baselines import L1SVM, FisherSVM, L1LogReg, LassoSelector, RandomSubset, RFESelector
from .best_subset import Abess, AbessRegressor
from .fgm import FGM
from .fs_manifold import FSManifold
from .fs_multi import FSMulti
from .fsa import FSA
from .grfl import GrFL

__all__ = [
    "Abess", "AbessRegressor", "FGM", "FSA", "FSManifold", "FSMulti", "GrFL", "L1SVM",
    "REGISTRY", "BaseSelector", "FisherSVM",
    "IterationRecord", "L1LogReg", "LassoSelector", "ParamSpec", "RFESelector", "RandomSubset",
    "Recorder",
    "get_method", "k_grid", "register",
]
