"""Feature spaces: which candidates exist, how they score against a signal, and their columns.

Linear columns (one by one or grouped), implicit degree-2 polynomial columns, and binned
additive responses for FGM; sampled random-Fourier and Gabor columns for GrFL and the
piecewise-linear basis for FSA live next to them.
"""

from ._base import Columns, FeatureSpace
from ._generated import FixedFamily, FourierFamily, GaborFamily, median_bandwidth
from ._linear import (
    NEGLIGIBLE_RMS,
    SCALE_SPREAD,
    LinearSpace,
    auto_scaling,
    negligible,
    scales_spread,
    tree_parents,
)
from ._nonlinear import BinnedSpace, Poly2Space
from ._piecewise import PiecewiseLinearBasis, second_difference
from ._sampled import SampledSpace

__all__ = ["NEGLIGIBLE_RMS", "SCALE_SPREAD", "BinnedSpace", "Columns", "FeatureSpace",
           "FixedFamily", "FourierFamily", "GaborFamily", "LinearSpace",
           "PiecewiseLinearBasis", "Poly2Space", "SampledSpace", "auto_scaling", "scales_spread",
           "median_bandwidth", "negligible", "second_difference", "tree_parents"]
