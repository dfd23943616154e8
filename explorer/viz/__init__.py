"""Pure functions from records and results to frames (``_frames``) and HoloViews elements
(``_elements``). No Panel here, and no numerics beyond arranging what the core computed."""

from ._compare import difference_plot
from ._elements import (
    BEST_LEGEND,
    LEGEND_OPTS,
    MAP_LABELS,
    SELECTED_COLOR,
    YOURS_COLOR,
    accuracy_plot,
    block_norm_bars,
    candidate_bars,
    convergence_curve,
    emptiest_corner,
    feature_at,
    fit_time_plot,
    gap_curve,
    given_marks,
    kept_curve,
    last_point,
    legend_in_emptiest_corner,
    outer_marks,
    path_curves,
    schedule_plot,
    selection_map,
    upper_steps,
    weight_image,
)
from ._error_control import (
    MOST_PATHS,
    coefficient_path_plot,
    redundancy_heatmap,
    stability_path_plot,
)
from ._export import add_svg_save, svg_save_everywhere
from ._frames import (
    BOUNDS_COLUMNS,
    CONVERGENCE_COLUMNS,
    KEPT_COLUMNS,
    block_membership,
    candidate_scores,
    coefficient_paths,
    convergence_frames,
    ever_selected,
    one_vs_rest_selection,
    relative_gap,
    selected_table,
    selection_matrix,
)
from ._lessons import (
    confusion_heatmap,
    decision_slice,
    gap_trace,
    group_norm_bars,
    level_bounds,
    ratio_curve,
    simplex_weights,
    violation_bars,
)
from ._stability import agreement_heatmap, frequency_bars, frequency_image, phi_plot

__all__ = [
    "BEST_LEGEND", "LEGEND_OPTS", "MAP_LABELS", "MOST_PATHS", "SELECTED_COLOR", "YOURS_COLOR",
    "add_svg_save", "agreement_heatmap", "difference_plot", "frequency_bars", "frequency_image",
    "phi_plot", "coefficient_path_plot", "redundancy_heatmap", "stability_path_plot",
    "svg_save_everywhere", "confusion_heatmap", "decision_slice", "gap_trace", "group_norm_bars",
    "level_bounds", "ratio_curve", "simplex_weights", "violation_bars",
    "block_norm_bars", "candidate_bars", "candidate_scores", "coefficient_paths",
    "path_curves", "BOUNDS_COLUMNS", "CONVERGENCE_COLUMNS", "KEPT_COLUMNS", "accuracy_plot",
    "block_membership", "convergence_curve",
    "convergence_frames", "emptiest_corner", "feature_at", "fit_time_plot", "ever_selected",
    "gap_curve", "given_marks",
    "last_point",
    "one_vs_rest_selection",
    "relative_gap",
    "upper_steps", "kept_curve", "outer_marks", "legend_in_emptiest_corner",
    "schedule_plot", "selected_table", "selection_map", "selection_matrix", "weight_image",
]
