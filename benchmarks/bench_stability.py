"""Would the same features be chosen again? Every method at the same k on the catalogue's real
wide sets: Φ̂ (Nogueira et al., JMLR 2018) with its 95 % interval over ``--resamples``
stratified half-samples of the training rows (the interval covers the resampling of this one
training set), the chance reference beside it (the same method's Φ̂ on 10 permutations of the
labels, 5 half-samples each: its mean and the range a Φ̂ measured like the real one would fall
in if the labels carried nothing) and whether the real Φ̂ is above that range, the mean
pairwise Jaccard index, the mean size of the selected sets, the 5-fold cross-validated score at
k (selection inside each fold: accuracy for classes, R² for the regression set), and the
seconds per resample against one fit on all the training rows.

Sets (``--sets``): fine-foods, pd-speech, grants, hepatic-injury (3 classes), permeability
(regression); all rows but a 30 % test part, which is not used. Methods at their defaults but
k: FGM (paper), FGM refine (B = k), FS-multi, FSA, FS-Manifold (m = k, every training label
given), GrFL (its cap on learned features set to the one whose fit on all the training rows
holds k inputs, or the nearest: ``fit_at_k``), abess, ℓ1-SVM and ℓ1-LR at k (C bisected to k),
RFE and Fisher + SVM; on the regression set FSA and GrFL with the squared loss, abess and the
Lasso at k. A method that cannot fit the set (binary-only on three classes) is listed as such.

A method whose one fit on all the training rows takes more than ``--max-fit-s`` (120 s) is
listed with that time instead (FS-Manifold on grants: 351 s).

Run: ``.venv/bin/python benchmarks/bench_stability.py`` (``--quick``: pd-speech, 10
resamples; ``--methods`` picks rows by label).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import Table, run

from explorer.data import DataError, load
from explorer.experiments import at_k, cv_folds, fit_at_k, stability
from explorer.methods import get_method

CLASSIFIERS = {
    "FGM (paper)": ("fgm", {}),
    "FGM refine": ("fgm", {"refine": "auto", "B_is_k": True}),
    "FS-multi": ("fs-multi", {}),
    "FSA": ("fsa", {}),
    "FS-Manifold": ("fs-manifold", {}),
    "GrFL": ("grfl", {}),
    "abess": ("abess", {}),
    "ℓ1-SVM at k": ("l1-svm", {}),
    "ℓ1-LR at k": ("l1-logreg", {}),
    "RFE": ("rfe", {}),
    "Fisher + SVM": ("fisher", {}),
}
REGRESSORS = {
    "FSA (squared)": ("fsa", {"loss": "squared"}),
    "GrFL (squared)": ("grfl", {"loss": "squared"}),
    "abess": ("abess-reg", {}),
    "Lasso at k": ("lasso", {}),
}


def _params(name: str, extra: dict, k: int, data) -> tuple[dict, str]:
    """The method's knobs at k, and how k was reached when not asked directly."""
    params = {n: v for n, v in extra.items() if n != "B_is_k"}
    if extra.get("B_is_k"):
        params["B"] = k
    try:
        return {**params, **at_k(name, k)}, ""
    except ValueError:  # GrFL: a cap on learned features, searched on all the training rows
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est, setting = fit_at_k(name, data, k, params)
        knob, cap = next(iter(setting.items()))
        return {**params, **setting}, f" ({knob} {cap}: {est.n_selected_} inputs)"


def _cv_score(name, params, data) -> tuple[float, float]:
    scores = []
    for train, held in cv_folds(data, 5):
        est = get_method(name)(**params).fit(data.X[train], data.y[train])
        scores.append(est.score(data.X[held], data.y[held]))
    return float(np.mean(scores)), float(np.std(scores, ddof=1))


def _one_set(set_name, k, n_resamples, table, labels, max_fit_s):
    data = load(set_name).split(test_size=0.3, seed=0)
    regression = data.task == "regression"
    methods = REGRESSORS if regression else CLASSIFIERS
    for label, (name, extra) in methods.items():
        if labels and label not in labels:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                params, how = _params(name, extra, k, data)
                get_method(name)(**params).fit(data.X[:60], data.y[:60])  # compile, untimed
            except DataError as exc:
                table.add(set_name, label, f"cannot fit: {str(exc).split(':')[0]}", *["—"] * 8)
                continue
            start = time.perf_counter()
            get_method(name)(**params).fit(data.X, data.y)
            single = time.perf_counter() - start
            if single > max_fit_s:  # resamples and folds would take hours
                table.add(set_name, label, f"not run: one fit on the {data.n_samples:,} "
                          f"training rows took {single:.0f} s (> --max-fit-s)", *["—"] * 6,
                          f"{single:.0f}", "—")
                continue
            start = time.perf_counter()
            result = stability(name, data, n_resamples=n_resamples, **params)
            fits = result.n_resamples + result.chance.n_permutations * \
                result.chance.resamples_each
            per = (time.perf_counter() - start) / fits
            score, sd = _cv_score(name, params, data)
        low, high = result.phi_ci
        chance = result.chance
        above = "yes" if result.phi > chance.band[1] else "no"
        table.add(set_name, label + how, f"{result.phi:.3f} [{low:.3f}, {high:.3f}]",
                  f"{chance.phi:.3f} [{chance.band[0]:.3f}, {chance.band[1]:.3f}]", above,
                  f"{result.jaccard:.3f}", f"{result.selected.sum(axis=1).mean():.1f}",
                  f"{score:.3f} ± {sd:.3f}", per, single, f"{per / single:.2f}")


def main(args, tables):
    sets = ("pd-speech",) if args.quick else tuple(s for s in args.sets.split(",") if s)
    n_resamples = 10 if args.quick else args.resamples
    table = Table(f"Stability at k = {args.k} over {n_resamples} half-samples",
                  ["set", "method", "Φ̂ [95 % interval, this training set's resamples]",
                   "on permuted labels: Φ̂ [expected range]", "above chance",
                   "mean Jaccard", "mean #selected",
                   "CV score (5 folds; R² for permeability)", "s per resample",
                   "s per fit (all rows)", "resample / fit"])
    labels = {m for m in args.methods.split(",") if m}
    for set_name in sets:
        _one_set(set_name, args.k, n_resamples, table, labels, args.max_fit_s)
    tables.append(table)


def _arguments(p):
    p.add_argument("--sets", default="pd-speech,fine-foods,grants,hepatic-injury,permeability")
    p.add_argument("--methods", default="", help="comma-separated row labels (default: all)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--resamples", type=int, default=30)
    p.add_argument("--max-fit-s", type=float, default=120.0,
                   help="a method whose one fit takes longer is listed, not resampled")


if __name__ == "__main__":
    run("stability", __doc__, [("stability", main)], add_arguments=_arguments)
