"""Feature Selection Explorer: embedded feature selection on wide data.

Five published methods (FGM, FS-multi, GrFL, FSA, FS-Manifold) and classic baselines behind one
scikit-learn compatible contract, with the data layer, metrics and sweeps they share. The
dashboard lives in :mod:`explorer.ui` and is imported only when asked for.
"""

from .data import DataError, Dataset, catalogue, load
from .methods import (
    FGM,
    FSA,
    REGISTRY,
    FSManifold,
    FSMulti,
    GrFL,
    IterationRecord,
    get_method,
)

__version__ = "0.1.0"

__all__ = [
    "FGM", "FSA", "FSManifold", "FSMulti", "GrFL", "REGISTRY", "DataError", "Dataset",
    "IterationRecord", "catalogue", "get_method", "load",
]
