"""GrFL against fixed random features, Nyström and the RBF SVM (Rakotomamonjy et al., §6).

Sections (``--only``):
  groups   test accuracy versus the number of groups G ∈ {5, 10, 20, 50, 100} on the nonlinear XOR
           set, digits 3 vs 8 and digits 9 vs rest, over 3 seeds: GrFL (random Fourier pairs,
           median-heuristic bandwidth, λ = 0.01·λ_max so that G binds), GrFL-M (bandwidth sampled
           too), scikit-learn's RBFSampler with 2G columns (the columns of G pairs) + a linear SVM
           with C tuned by 3-fold CV, Nyström with 2G columns + the same tuned SVM, best subset
           (abess, 2G columns) from a fixed bank of 1,000 random Fourier columns, and an RBF SVC
           (C tuned) with its support-vector count. GrFL's accuracy at G is the model after its
           G-th generated feature (one column-generation run to 100 groups; if it stops earlier its
           final model counts for the larger G).
  gabor    texture patches: Gabor GrFL versus a fixed bank of G random Gabor filters from the
           same family + a tuned linear SVM, and a linear SVM on the pixels.
  solvers  restricted-master solvers on the same master problem (fixed columns): time for FISTA
           and the ADMM of §4.1 to reach the optimum's objective within 10⁻³ and 10⁻⁶ relative
           (the paper's Table 3 pattern).
  path     time per fit, and a λ path (5 values from 0.5 to 0.02 λ_max) warm-started versus
           cold fits.
  inputs   GrFL asked for k input variables (``k`` = the planted support's size, backward
           elimination) on the catalogue's planted interactions (10 of 500), the |x| design
           (5 of 200) and XOR (2 of 200), 3 seeds: planted variables found, test accuracy,
           seconds; against the k inputs of largest importance from one fit without k, and FSA
           (piecewise-linear basis, ``model="rbf_svm"``) at the same k.

Run: ``.venv/bin/python benchmarks/bench_grfl.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import time

import numpy as np
from _common import Table, run
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from explorer import GrFL
from explorer.data import make
from explorer.engines.grfl.group_master import (
    GroupObjective,
    admm_master,
    fista_master,
    loss_gradient,
)
from explorer.features import FourierFamily, GaborFamily, median_bandwidth
from explorer.methods import Abess
from explorer.optim import Stopping

C_GRID = {"C": [0.01, 0.1, 1.0, 10.0, 100.0]}
GROUPS = (5, 10, 20, 50, 100)


def _dataset(name, seed):
    if name == "xor":
        return make("xor", seed=seed)
    return make(name).split(test_size=0.3, seed=seed)


def _tuned_linear(Z, y):
    return GridSearchCV(LinearSVC(max_iter=20000), C_GRID, cv=3).fit(Z, y)


def _grfl_curve(family, ds, seed, groups):
    """Accuracy after the G-th generated feature for each G, from one run."""
    lam_max = GrFL(family=family, max_features=1, random_state=seed).fit(ds.X, ds.y).lambda_max_
    est = GrFL(family=family, lam=0.01 * lam_max, max_features=max(groups), random_state=seed)
    acc = {}

    def record(r):
        g = r.info["n_generated"]
        if g in groups:
            acc[g] = est.score(ds.X_test, ds.y_test)

    est.fit(ds.X, ds.y, callback=record)
    final = est.score(ds.X_test, ds.y_test)
    reached = len(est.generated_params_)
    return {g: acc.get(g, final if g >= reached else np.nan) for g in groups}, reached


def section_groups(args, tables):
    names = ["xor", "digits-3v8"] if args.quick else ["xor", "digits-3v8", "digits-9vr"]
    seeds = range(2 if args.quick else 3)
    groups = GROUPS[:3] if args.quick else GROUPS
    for name in names:
        results = {k: {g: [] for g in groups} for k in
                   ("GrFL", "GrFL-M", "RFF + SVM", "Nyström + SVM", "RFF bank + abess")}
        svm_acc, svm_sv, reached = [], [], {"GrFL": [], "GrFL-M": []}
        for seed in seeds:
            ds = _dataset(name, seed)
            gamma = 1.0 / (2.0 * median_bandwidth(ds.X) ** 2)
            for label, family in (("GrFL", "fourier"), ("GrFL-M", "fourier-multi")):
                curve, got = _grfl_curve(family, ds, seed, groups)
                reached[label].append(got)
                for g in groups:
                    results[label][g].append(curve[g])
            for g in groups:
                rff = RBFSampler(gamma=gamma, n_components=2 * g, random_state=seed)
                Z = rff.fit_transform(ds.X)
                model = _tuned_linear(Z, ds.y)
                results["RFF + SVM"][g].append(model.score(rff.transform(ds.X_test), ds.y_test))
                nys = Nystroem(gamma=gamma, n_components=min(2 * g, len(ds.y)),
                               random_state=seed)
                Z = nys.fit_transform(ds.X)
                model = _tuned_linear(Z, ds.y)
                results["Nyström + SVM"][g].append(model.score(nys.transform(ds.X_test),
                                                               ds.y_test))
            bank = RBFSampler(gamma=gamma, n_components=1000, random_state=seed)
            Z, Z_test = bank.fit_transform(ds.X), bank.transform(ds.X_test)
            for g in groups:  # best subset of 2G columns of a fixed random bank
                model = Abess(k=2 * g).fit(Z, ds.y)
                results["RFF bank + abess"][g].append(model.score(Z_test, ds.y_test))
            svc = GridSearchCV(SVC(kernel="rbf", gamma=gamma), C_GRID, cv=3).fit(ds.X, ds.y)
            svm_acc.append(svc.score(ds.X_test, ds.y_test))
            svm_sv.append(int(svc.best_estimator_.n_support_.sum()))
        table = Table(f"{name}: mean test accuracy over {len(seeds)} seeds versus the number of "
                      f"groups G (a Fourier pair is one group; fixed features get 2G columns)",
                      ["method"] + [f"G={g}" for g in groups] + ["notes"])
        for label, per in results.items():
            note = ""
            if label in reached:
                note = f"reached {np.mean(reached[label]):.0f} groups"
            table.add(label, *[float(np.nanmean(per[g])) for g in groups], note)
        gap = [float(np.nanmean(results["GrFL"][g]) - np.nanmean(results["RFF + SVM"][g]))
               for g in groups]
        table.add("GrFL − RFF (points)", *[100 * v for v in gap], "")
        table.add("RBF SVC (C tuned)", *[float(np.mean(svm_acc))] * len(groups),
                  f"{np.mean(svm_sv):.0f} support vectors")
        tables.append(table)


def section_gabor(args, tables):
    seeds = range(2 if args.quick else 3)
    groups = (5, 10) if args.quick else (5, 10, 20)
    table = Table("Textures (3 classes, 16×16, noise 1.5): Gabor GrFL versus a fixed random "
                  "Gabor bank of the same size + tuned linear SVM",
                  ["G", "GrFL (Gabor)", "fixed Gabor bank + SVM", "pixels + linear SVM",
                   "GrFL s per fit"])
    rows = {g: {"grfl": [], "bank": [], "pix": [], "t": []} for g in groups}
    for seed in seeds:
        ds = make("textures", noise=1.5, n_per_class=100, seed=seed)
        pix = _tuned_linear(StandardScaler().fit_transform(ds.X), ds.y)
        scaler = StandardScaler().fit(ds.X)
        pix_acc = pix.score(scaler.transform(ds.X_test), ds.y_test)
        for g in groups:
            start = time.perf_counter()
            est = GrFL(family="gabor", max_features=g, random_state=seed).fit(
                ds.X, ds.y, image_shape=ds.image_shape)
            rows[g]["t"].append(time.perf_counter() - start)
            rows[g]["grfl"].append(est.score(ds.X_test, ds.y_test))
            fam = GaborFamily(ds.image_shape)
            bank = fam.sample(g, np.random.default_rng(seed))
            bank_model = make_pipeline(StandardScaler(), LinearSVC(max_iter=20000))
            search = GridSearchCV(bank_model, {"linearsvc__C": C_GRID["C"]}, cv=3)
            search.fit(fam.columns(ds.X, bank), ds.y)
            rows[g]["bank"].append(search.score(fam.columns(ds.X_test, bank), ds.y_test))
            rows[g]["pix"].append(pix_acc)
    for g in groups:
        r = rows[g]
        table.add(g, float(np.mean(r["grfl"])), float(np.mean(r["bank"])),
                  float(np.mean(r["pix"])), float(np.mean(r["t"])))
    tables.append(table)


def _time_to(trace, seconds, target, rel):
    """Seconds until the trace first reaches target·(1 + rel) (iterations have equal cost)."""
    trace = np.asarray(trace)
    hit = np.flatnonzero(trace <= target + rel * abs(target))
    if hit.size == 0:
        return np.nan
    return seconds * hit[0] / max(len(trace) - 1, 1)


def section_solvers(args, tables):
    sizes = (10, 50) if args.quick else (10, 50, 100, 200)
    table = Table("Restricted master (squared hinge, group ℓ1-ℓ2) on digits 9-vs-rest with G "
                  "fixed random Fourier groups: seconds to reach the optimum within a relative "
                  "gap", ["G (columns)", "FISTA 1e-3", "ADMM 1e-3", "FISTA 1e-6", "ADMM 1e-6",
                          "ADMM / FISTA at 1e-6"])
    ds = make("digits-9vr").split(test_size=0.3, seed=0)
    y = np.where(ds.y == ds.y.max(), 1.0, -1.0)[:, None] if set(np.unique(ds.y)) != {-1, 1} \
        else ds.y[:, None].astype(float)
    fam = FourierFamily(ds.n_features, [median_bandwidth(ds.X)])
    rng = np.random.default_rng(0)
    for g in sizes:
        Phi = fam.columns(ds.X, fam.sample(g, rng))
        Phi /= np.linalg.norm(Phi, axis=0)
        groups = [np.arange(2 * i, 2 * i + 2) for i in range(g)]
        lam = 0.05 * np.linalg.norm((Phi.T @ loss_gradient("squared_hinge", y, 0 * y))
                                    .reshape(g, -1), axis=1).max()
        spec = GroupObjective(y, "squared_hinge", lam)
        best = fista_master(Phi, groups, spec, stopping=Stopping(1e-9, 30000)).objective
        out = {}
        for label, solver in (("fista", fista_master), ("admm", admm_master)):
            start = time.perf_counter()
            res = solver(Phi, groups, spec, stopping=Stopping(1e-12, 20000))
            wall = time.perf_counter() - start
            out[label] = [_time_to(res.trace, wall, best, rel) for rel in (1e-3, 1e-6)]
        table.add(f"{g} ({2 * g})", out["fista"][0], out["admm"][0], out["fista"][1],
                  out["admm"][1], out["admm"][1] / out["fista"][1])
    tables.append(table)


def section_path(args, tables):
    names = ["xor", "digits-3v8"] if args.quick else ["xor", "digits-3v8", "digits-9vr"]
    table = Table("Time per fit (default λ = 0.1·λ_max, up to 100 groups) and a 5-point λ path "
                  "(0.5 → 0.02 λ_max, max 100 groups): warm-started versus cold fits",
                  ["dataset", "n × d", "default fit s", "groups", "test acc",
                   "path warm s", "path cold s", "cold / warm"])
    for name in names:
        ds = _dataset(name, 0)
        start = time.perf_counter()
        est = GrFL(max_features=100).fit(ds.X, ds.y)
        t_fit = time.perf_counter() - start
        lams = est.lambda_max_ * np.geomspace(0.5, 0.02, 5)
        start = time.perf_counter()
        GrFL(max_features=100).lam_path(ds.X, ds.y, lams)
        t_warm = time.perf_counter() - start
        start = time.perf_counter()
        for lam in lams:
            GrFL(max_features=100, lam=lam).fit(ds.X, ds.y)
        t_cold = time.perf_counter() - start
        table.add(name, f"{ds.n_samples} × {ds.n_features}", t_fit,
                  len(est.generated_params_), est.score(ds.X_test, ds.y_test), t_warm, t_cold,
                  t_cold / t_warm)
    tables.append(table)


def section_inputs(args, tables):
    from explorer import FSA

    designs = [("interactions", {}), ("fsa-nonlinear", {}),
               ("xor", {"n_features": 200, "n_informative": 2})]
    seeds = 1 if args.quick else 3
    table = Table(f"GrFL asked for k inputs, k = the planted support's size ({seeds} seeds)",
                  ["design", "k", "method", "found", "test acc", "s"])
    for name, params in designs:
        rows = {"GrFL k": [], "GrFL top-k importance (no k)": [], "FSA pwl + rbf_svm": []}
        for seed in range(seeds):
            ds = make(name, seed=seed, **params)
            k = len(ds.truth)
            fits = (("GrFL k", GrFL(k=k)),
                    ("GrFL top-k importance (no k)", GrFL()),
                    ("FSA pwl + rbf_svm", FSA(k=k, basis="piecewise_linear", model="rbf_svm")))
            for label, est in fits:
                start = time.perf_counter()
                est.fit(ds.X, ds.y)
                elapsed = time.perf_counter() - start
                chosen = est.selected_features_ if label != "GrFL top-k importance (no k)" \
                    else np.argsort(-est.input_importance_)[:k]
                rows[label].append((np.isin(chosen, ds.truth).sum(),
                                    est.score(ds.X_test, ds.y_test), elapsed))
        for label, got in rows.items():
            a = np.array(got, dtype=float)
            table.add(name, k, label, f"{a[:, 0].mean():.1f} of {k}", a[:, 1].mean(),
                      float(np.median(a[:, 2])))
    tables.append(table)


def main():
    run("grfl", __doc__, [("solvers", section_solvers), ("path", section_path),
                          ("gabor", section_gabor), ("groups", section_groups),
                          ("inputs", section_inputs)])


if __name__ == "__main__":
    main()
