"""Background jobs of a session other than its fit, as plain data: one method's
accuracy-versus-#features curve (:class:`SweepJob`) and a stability run (:class:`StabilityJob`).
They hold no closure, so they travel to the server's fit worker processes like a fit request,
and run the same way in a thread of this process (notebooks, scripts). A job is called with
the data, a ``row`` callback (False: stop) and ``halted()`` (the user's Stop of a stability
run: the resamples done still make the result)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class SweepJob:
    """``experiments.sweep`` of one method over its sparsity values (None: ``n_points`` of
    them) or at numbers of features ``ks``, each point scored by ``repeats`` × ``cv``-fold CV
    of the training part."""

    name: str
    values: list | None
    n_points: int
    metrics: list
    cv: int
    params: dict = field(default_factory=dict)
    ks: list | None = None
    repeats: int = 1

    def __call__(self, data, row: Callable, halted: Callable[[], bool]) -> None:
        from ..experiments import sweep

        sweep(self.name, data, values=self.values, ks=self.ks, n_points=self.n_points,
              metrics=self.metrics, callback=row, cv=self.cv, repeats=self.repeats,
              **self.params)


@dataclass
class StabilityJob:
    """``n_resamples`` subsample fits of ``method`` streamed as rows (Φ̂ so far), then the
    result, then — unless halted — the agreement of ``others`` with it at ``k``."""

    method: str
    params: dict
    n_resamples: int
    others: list
    k: int | None
    knowledge: dict = field(default_factory=dict)  # given to the others alike

    def __call__(self, data, row: Callable, halted: Callable[[], bool]) -> None:
        from ..experiments import agreement, stability

        def each(update):
            return row({"kind": "resample", **update}) is not False and not halted()

        result = stability(self.method, data, n_resamples=self.n_resamples, callback=each,
                           **self.params)
        row({"kind": "result", "result": result})
        if self.others and self.k is not None and not halted():
            row({"kind": "agreement",
                 "result": agreement([self.method, *self.others], data, k=self.k,
                                     params={self.method: self.params},
                                     knowledge=self.knowledge)})


@dataclass
class ErrorControlJob:
    """How many of the chosen features are noise: stability selection of ``method`` at the
    ``pfer`` and ``cutoff`` the user chose (each pair's path streamed as a row: the ``shown``
    most probable features'), then the result, the coefficient path over the same ks, the
    correlations of the model's ``chosen`` features and model-X knockoffs at ``fdr`` —
    unless halted."""

    method: str
    params: dict
    n_pairs: int
    chosen: list
    pfer: float = 1.0
    cutoff: float = 0.75
    fdr: float = 0.1
    shown: int = 40

    def __call__(self, data, row: Callable, halted: Callable[[], bool]) -> None:
        import numpy as np

        from ..experiments import (
            coefficient_path,
            knockoff_selection,
            redundancy,
            stability_selection,
        )

        def each(update):
            P = update["probabilities"]
            top = np.argsort(-P.max(axis=0), kind="stable")[: self.shown]
            return row({"kind": "pair", "n_done": update["n_done"],
                        "n_pairs": update["n_pairs"], "ks": update["ks"], "features": top,
                        "probabilities": P[:, top]}) is not False and not halted()

        result = stability_selection(self.method, data, pfer=self.pfer, cutoff=self.cutoff,
                                     n_pairs=self.n_pairs, callback=each, **self.params)
        row({"kind": "selection", "result": result})
        if halted():
            return
        row({"kind": "path", "frame": coefficient_path(self.method, data, ks=result.ks,
                                                       **self.params)})
        if self.chosen and not halted():
            row({"kind": "redundancy", "frame": redundancy(data, self.chosen)})
        if not halted():
            row({"kind": "knockoffs",
                 "result": knockoff_selection(self.method, data, fdr=self.fdr,
                                              **self.params)})


@dataclass
class PermutationJob:
    """The check of a stability selection on permuted labels: ``result`` rerun the same way
    on one permutation of the labels (:func:`~explorer.experiments.permutation_check`)."""

    result: object

    def __call__(self, data, row: Callable, halted: Callable[[], bool]) -> None:
        from ..experiments import permutation_check

        row({"kind": "permuted", "result": permutation_check(self.result, data, 1)})
