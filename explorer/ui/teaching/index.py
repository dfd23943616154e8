"""The lessons' index (/lessons): one card per lesson, each naming its method and data."""

from __future__ import annotations

from dataclasses import dataclass

import panel as pn


@dataclass(frozen=True)
class Lesson:
    path: str
    method: str
    title: str
    dataset: str
    summary: str


LESSONS = (
    Lesson("teach_fgm", "FGM", "Feature generation by cutting planes", "digits-3v8",
           "score every pixel against the current errors, add the best block, re-solve the "
           "master; the bounds close in on the optimum"),
    Lesson("teach_fsa", "FSA", "Feature selection with annealing", "fsa-correlated",
           "gradient steps that keep fewer coefficients at each iteration along a schedule; "
           "what μ does to its cost"),
    Lesson("teach_grfl", "GrFL", "Learning features by column generation", "xor",
           "draw random Fourier features, add the one that violates the optimality "
           "conditions most; the decision function bends to xor"),
    Lesson("teach_fs_multi", "FS-multi", "Selection for F1 and other measures", "digits-9vr",
           "the most violated labeling of each step, the block it brings, the bundle's gap "
           "closing"),
    Lesson("teach_fs_manifold", "FS-Manifold", "Semi-supervised selection", "digits-3v8-semi",
           "the level method's bounds, the weights on the capped simplex, and what τ can do"),
)


def index_page() -> pn.Column:
    """Every lesson with its link, method, data and what it shows; a link back to the
    explorer."""
    rows = "\n".join(f"| [{lesson.title}](./{lesson.path}) | {lesson.method} | "
                     f"`{lesson.dataset}` | {lesson.summary} |" for lesson in LESSONS)
    text = ("### Lessons: each method one step at a time\n"
            "Every lesson runs the real solver and stops after each iteration: press **Step** "
            "to see what the next one does, **Run to the end** to finish, **Restart** to "
            "start over.\n\n"
            "| lesson | method | data | what it shows |\n|---|---|---|---|\n" + rows +
            "\n\n[Back to the explorer](./explorer)")
    return pn.Column(pn.pane.Markdown(text, css_classes=["lesson-index"],
                                      sizing_mode="stretch_width"), sizing_mode="stretch_width")
