"""Pure functions from records and results to frames (``_frames``) and HoloViews elements
(``_elements``). No Panel here, and no numerics beyond arranging what the core computed."""

from ._elements import (
    accuracy_plot,
    block_norm_bars,
    bounds_curves,
    candidate_bars,
    convergence_curve,
    kept_curve,
    outer_marks,
    path_curves,
    schedule_plot,
    selection_map,
    weight_image,
)
from ._frames import (
    BOUNDS_COLUMNS,
    CONVERGENCE_COLUMNS,
    KEPT_COLUMNS,
    block_membership,
    bounds_row,
    candidate_scores,
    coefficient_paths,
    convergence_frames,
    convergence_rows,
    kept_row,
    selected_table,
    selection_matrix,
)

__all__ = [
    "block_norm_bars", "candidate_bars", "candidate_scores", "coefficient_paths",
    "path_curves", "BOUNDS_COLUMNS", "CONVERGENCE_COLUMNS", "KEPT_COLUMNS", "accuracy_plot",
    "block_membership", "bounds_curves", "bounds_row", "convergence_curve",
    "convergence_frames", "convergence_rows", "kept_curve", "kept_row", "outer_marks",
    "schedule_plot", "selected_table", "selection_map", "selection_matrix", "weight_image",
]
