"""Can the tool tell when its data cannot tell two methods apart?

``verdicts``: on every real set of the catalogue, the verdict of ``compare`` at k = 10 (5-fold
CV × the default repeats on the training part of one 70/30 split; every pair of methods, the
corrected resampled t interval) against the verdict of the test sets of 10 fresh 70/30 splits
of all the rows (each method fitted on the split's training part at k = 10 and scored on its
test part; the paired differences over the 10 splits with Nadeau & Bengio's correction for
overlapping training sets, n_test/n_train = 3/7). The CV verdict is taken on ``--cv-splits``
(3) different training splits. Reported per set and pair, and summed: how often the tool's
"A ahead" was right (the test says A ahead), how often the test could not tell (no
difference), how often it was wrong (the test says B ahead), how often the tool said "no
difference", and — what the tool reported before it had intervals — how often the CV mean's
winner was the test mean's winner.

``repeats``: how many repetitions of 5-fold CV a verdict needs, on the small real sets: one
training split, ``--shuffles`` (6) different shuffles of the folds, each with up to 10
repetitions; for R = 1, 2, 3, 5, 10 the share of (pair, shuffle) verdicts that differ from the
pair's most common verdict at that R, the share decided, and the time of one compare.

``simulation``: two logistic models on five features each of a planted design (a latent z,
y = [z + ε > 0], each method's features z plus noise of its own level) scored on the same
repeated folds: the rate at which the tool calls a difference where the true accuracies are
equal (n = 200, 100 seeds; the interval's level is 95 %, so about 5 % at most) and the rate at
which it finds a 4.5-point difference on 1,000 rows (40 seeds), for R = 1, 2, 3, 5, 10.

``power``: what difference a verdict can show. On the planted design above (a true gap of 4.5
points) at n = 100 … 2,000 rows (``--power-seeds`` seeds, 5-fold CV × 5): the share of
verdicts that decide, the median difference the data could have shown (the verdict's
"detectable", 4 times in 5), and among the "no difference" verdicts how many said a
detectable difference above the true 4.5 points (the words were right). On breast cancer
subsampled to 60 … 398 training rows (FGM against FSA and abess at k = 5, 3 subsamples each):
the same detectable difference against n.

``rules``: which choice of k holds on held-out data. On the real sets (``--rule-sets``), for
FGM, FSA and abess, on ``--rule-splits`` 70/30 splits: a sweep over k = 1 … 64 (8 points,
5-fold CV × 2 of the training part), the k each rule chooses (``best``: the best CV mean;
``one-se``: ESL's one-standard-error rule, sd/√(K·R); ``one-se-corrected``: the standard
error corrected for overlapping training sets), and the test accuracy at every k of the grid
(one fit on the training part each). A rule's choice "holds" when its test accuracy is within
one standard error (√(a(1 − a)/n_test)) of the best test accuracy on the grid.

Methods: FGM, FSA, abess, ℓ1-SVM and Fisher + SVM at their defaults (binary-only ones left
out on more than two classes); FSA (squared loss), abess and the Lasso at k on the regression
set, scored by RMSE. Sets (``--sets``): every real set of the catalogue; its test part, when
it ships one, is pooled with its training rows before the splits.

Run: ``.venv/bin/python benchmarks/bench_compare.py`` (``--quick``: breast-cancer and
pd-speech, 2 CV splits, 4 test splits, fewer shuffles and seeds).
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections import Counter

import numpy as np
import scipy.sparse as sp
from _common import Table, run

from explorer.data import DataError, Dataset, load
from explorer.experiments import DEFAULT_REPEATS, compare, fit_at_k, paired_difference
from explorer.experiments.sweeps import check_compatible, repeated_folds
from explorer.metrics import evaluate, metrics_for

REAL_SETS = ("breast-cancer", "wine", "digits-3v8", "digits-2v3", "digits-4v7", "digits-9vr",
             "digits", "pd-speech", "hepatic-injury", "permeability", "fine-foods", "grants")
CLASSIFIERS = ("fgm", "fsa", "abess", "l1-svm", "fisher")
REGRESSORS = ("fsa", "abess-reg", "lasso")
SETTINGS = {("fsa", "regression"): {"loss": "squared"}}
K = 10
TEST_TO_TRAIN = 0.3 / 0.7


def _pooled(name: str) -> Dataset:
    """All rows of the set (its shipped test part pooled with its training rows)."""
    data = load(name)
    if data.X_test is None:
        return data
    X = sp.vstack([data.X, data.X_test], format="csr") if sp.issparse(data.X) \
        else np.vstack([data.X, data.X_test])
    return Dataset(X=X, y=np.concatenate([data.y, data.y_test]), name=data.name,
                   feature_names=data.feature_names, task=data.task)


def _methods(data: Dataset) -> tuple[list[str], dict]:
    names = CLASSIFIERS if data.task == "classification" else REGRESSORS
    usable, params = [], {}
    for name in names:
        settings = SETTINGS.get((name, data.task), {})
        try:
            check_compatible(name, data, settings)
        except DataError:
            continue
        usable.append(name)
        if settings:
            params[name] = settings
    return usable, params


def _call(difference) -> str:
    """"a", "b" or "none": which of the pair the interval puts ahead."""
    winner = difference.winner
    return "none" if winner is None else ("a" if winner == difference.method else "b")


def _test_scores(data, methods, params, metric, splits, k):
    """Each method's test score at k on each fresh split (NaN where it failed)."""
    scores = {m: [] for m in methods}
    for seed in splits:
        part = data.split(test_size=0.3, seed=seed)
        for m in methods:
            try:
                est, _ = fit_at_k(m, part, k, params.get(m, {}))
                scores[m].append(evaluate(est, part.X_test, part.y_test, [metric])[metric])
            except Exception:  # a failed fit scores NaN and leaves the pair out of that split
                scores[m].append(float("nan"))
    return {m: np.array(v) for m, v in scores.items()}


def verdicts(args, tables):
    sets = ("breast-cancer", "pd-speech") if args.quick else \
        tuple(s for s in args.sets.split(",") if s)
    cv_splits = 2 if args.quick else args.cv_splits
    test_splits = list(range(100, 104 if args.quick else 110))
    per_set = Table(f"Verdicts at k = {K}: the tool's (5-fold CV × {DEFAULT_REPEATS} on one "
                    f"training split, {cv_splits} splits) against {len(test_splits)} fresh "
                    "test splits",
                    ["set", "pair", "tool's verdicts (one per training split)",
                     "test: A − B (95 % interval)", "test verdict", "CV mean winner = test "
                     "mean winner", "s per compare"])
    totals = Counter()
    for name in sets:
        data = _pooled(name)
        metric = metrics_for(data.task)[0]
        methods, params = _methods(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = _test_scores(data, methods, params, metric, test_splits, K)
            results, seconds = [], []
            for seed in range(cv_splits):
                start = time.perf_counter()
                results.append(compare(methods, data, ks=[K], metrics=[metric], cv=5,
                                       repeats=DEFAULT_REPEATS, params=params, seed=seed))
                seconds.append(time.perf_counter() - start)
        for a, b in itertools.combinations(methods, 2):
            truth = paired_difference(test[a], test[b], method=a, other=b, metric=metric,
                                      test_to_train=TEST_TO_TRAIN)
            truth_call = _call(truth)
            calls, same_winner = [], 0
            for result in results:
                d = result.pair(a, b, K, metric)
                call = _call(d)
                calls.append({"a": f"{a} ahead", "b": f"{b} ahead", "none": "no difference"}
                             [call])
                totals["verdicts"] += 1
                if call == "none":
                    totals["tool none"] += 1
                    totals["tool none, test decided"] += truth_call != "none"
                else:
                    totals["tool ahead"] += 1
                    totals[("tool ahead, test agrees" if truth_call == call else
                            "tool ahead, test cannot tell" if truth_call == "none" else
                            "tool ahead, test opposite")] += 1
                cv_winner = np.sign(d.mean)
                test_winner = np.sign(np.nanmean(test[a] - test[b]))
                same_winner += int(cv_winner == test_winner)
                totals["mean winners agree"] += int(cv_winner == test_winner)
            scale = 100.0 if metric != "rmse" else 1.0
            per_set.add(name, f"{a} − {b}", "; ".join(calls),
                        f"{truth.mean * scale:+.2f} [{truth.low * scale:+.2f}, "
                        f"{truth.high * scale:+.2f}]",
                        {"a": f"{a} ahead", "b": f"{b} ahead", "none": "no difference"}
                        [truth_call], f"{same_winner}/{len(results)}",
                        float(np.median(seconds)))
    tables.append(per_set)
    summary = Table("Summed over every set, pair and training split",
                    ["tool's verdicts", "said A ahead", "… test agrees", "… test cannot tell",
                     "… test says the opposite", "said no difference",
                     "… where the test found one", "CV mean winner = test mean winner"])
    summary.add(totals["verdicts"], totals["tool ahead"], totals["tool ahead, test agrees"],
                totals["tool ahead, test cannot tell"], totals["tool ahead, test opposite"],
                totals["tool none"], totals["tool none, test decided"],
                f"{totals['mean winners agree']}/{totals['verdicts']}")
    tables.append(summary)


def repeats(args, tables):
    sets = ("breast-cancer",) if args.quick else ("breast-cancer", "pd-speech",
                                                  "hepatic-injury", "wine")
    shuffles = 3 if args.quick else args.shuffles
    Rs = (1, 2, 3, 5, 10)
    table = Table(f"Repetitions of 5-fold CV: verdicts at k = {K} over {shuffles} shuffles "
                  "of the folds of one training split",
                  ["set", "R", "verdicts unlike the pair's most common", "decided",
                   "s per compare (all methods)"])
    for name in sets:
        data = _pooled(name).split(test_size=0.3, seed=0)
        metric = metrics_for(data.task)[0]
        methods, params = _methods(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = []
            for shuffle in range(shuffles):
                start = time.perf_counter()
                runs.append((compare(methods, data, ks=[K], metrics=[metric], cv=5,
                                     repeats=max(Rs), params=params, seed=1000 + shuffle),
                             time.perf_counter() - start))
        for R in Rs:
            calls = {}
            for result, _ in runs:
                for a, b in itertools.combinations(methods, 2):
                    x = result._folds_of(a, K, metric)[: 5 * R]
                    z = result._folds_of(b, K, metric)[: 5 * R]
                    d = paired_difference(x, z, method=a, other=b, metric=metric, runs=R)
                    calls.setdefault((a, b), []).append(_call(d))
            unlike = sum(len(c) - Counter(c).most_common(1)[0][1] for c in calls.values())
            total = sum(len(c) for c in calls.values())
            decided = sum(v != "none" for c in calls.values() for v in c)
            seconds = float(np.median([s for _, s in runs])) * R / max(Rs)
            table.add(name, R, f"{unlike}/{total}", f"{decided}/{total}", seconds)
    tables.append(table)


def simulation(args, tables):
    from sklearn.linear_model import LogisticRegression

    def design(n, rng, noise_b):
        z = rng.standard_normal(n)
        y = (z + 0.5 * rng.standard_normal(n) > 0).astype(int)
        X = np.hstack([z[:, None] + rng.standard_normal((n, 5)),
                       z[:, None] + noise_b * rng.standard_normal((n, 5))])
        return Dataset(X=X, y=y)

    def rate(n, R, seeds, noise_b):
        decided = 0
        for seed in range(seeds):
            data = design(n, np.random.default_rng(seed), noise_b)
            scores = {0: [], 1: []}
            for _, _, train, held in repeated_folds(data, 5, R, seed):
                for side, cols in ((0, slice(0, 5)), (1, slice(5, 10))):
                    model = LogisticRegression().fit(data.X[train][:, cols], data.y[train])
                    scores[side].append(model.score(data.X[held][:, cols], data.y[held]))
            decided += paired_difference(scores[0], scores[1], runs=R).decided
        return decided / seeds

    null_seeds, planted_seeds = (30, 10) if args.quick else (100, 40)
    table = Table("Planted designs: a difference called where there is none (n = 200, "
                  f"{null_seeds} seeds) and a 4.5-point difference found (n = 1,000, "
                  f"{planted_seeds} seeds; population accuracies 0.805 and 0.760)",
                  ["R", "called where equal", "found (4.5 points)"])
    for R in (1, 2, 3, 5, 10):
        table.add(R, rate(200, R, null_seeds, 1.0), rate(1000, R, planted_seeds, 1.6))
    tables.append(table)


def _planted(n, rng, noise_b):
    """Two five-feature logistic models on a latent z (``simulation``'s design)."""
    z = rng.standard_normal(n)
    y = (z + 0.5 * rng.standard_normal(n) > 0).astype(int)
    X = np.hstack([z[:, None] + rng.standard_normal((n, 5)),
                   z[:, None] + noise_b * rng.standard_normal((n, 5))])
    return Dataset(X=X, y=y)


def power(args, tables):
    from sklearn.linear_model import LogisticRegression

    seeds = 10 if args.quick else args.power_seeds
    gap = 4.5  # points: population accuracies 0.805 and 0.760 (noise 1.0 against 1.6)
    table = Table(f"Verdict power against n: a true gap of {gap} points on the planted design "
                  f"(5-fold CV × 5, {seeds} seeds)",
                  ["rows", "decided", "detectable difference (median, points)",
                   "'no difference' saying a detectable difference above the gap"])
    for n in (100, 200, 400, 1000, 2000):
        decided, shown, honest, silent = 0, [], 0, 0
        for seed in range(seeds):
            data = _planted(n, np.random.default_rng(seed), 1.6)
            scores = {0: [], 1: []}
            for _, _, train, held in repeated_folds(data, 5, 5, seed):
                for side, cols in ((0, slice(0, 5)), (1, slice(5, 10))):
                    model = LogisticRegression().fit(data.X[train][:, cols], data.y[train])
                    scores[side].append(model.score(data.X[held][:, cols], data.y[held]))
            d = paired_difference(scores[0], scores[1], runs=5, n_rows=n)
            decided += d.decided
            shown.append(100 * d.detectable)
            if not d.decided:
                silent += 1
                honest += 100 * d.detectable > gap
        table.add(n, f"{decided}/{seeds}", float(np.median(shown)),
                  f"{honest}/{silent}" if silent else "—")
    tables.append(table)
    real = Table("Detectable difference against n on breast cancer (k = 5, 5-fold CV × 5; "
                 "median over 3 subsamples of the training part)",
                 ["training rows", "pair", "decided", "detectable (median, points)"])
    data = load("breast-cancer").split(test_size=0.3, seed=0)
    for n in (60, 130, 250, data.n_samples):
        found = {}
        for sub in range(1 if n == data.n_samples else 3):
            rows = np.arange(data.n_samples) if n == data.n_samples else np.sort(
                np.random.default_rng(sub).choice(data.n_samples, n, replace=False))
            part = data.fold(rows, rows[:0])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = compare(["fgm", "fsa", "abess"], part, ks=[5], cv=5)
            for row in result.differences(method="fgm").itertuples():
                d = result.pair(row.method, row.other, 5)
                found.setdefault(f"{row.method} − {row.other}", []).append(
                    (d.decided, 100 * d.detectable))
        for pair, values in found.items():
            real.add(n, pair, f"{sum(v[0] for v in values)}/{len(values)}",
                     float(np.median([v[1] for v in values])))
    tables.append(real)


def rules(args, tables):
    from explorer.experiments import CHOICE_RULES, choose_point, sweep
    from explorer.methods import k_grid

    sets = ("breast-cancer", "digits-4v7") if args.quick else \
        tuple(s for s in args.rule_sets.split(",") if s)
    splits = 1 if args.quick else args.rule_splits
    per_set = Table(f"Choosing k: each rule's choice against the test accuracy of every k "
                    f"(k = 1 … 64, 8 points; 5-fold CV × 2; {splits} splits)",
                    ["set", "method", "split", "best test k (accuracy)",
                     *[f"{rule}: k (test)" for rule in CHOICE_RULES]])
    held = Counter()
    features = {rule: [] for rule in CHOICE_RULES}
    accuracy = {rule: [] for rule in CHOICE_RULES}
    cases = 0
    for name in sets:
        for seed in range(splits):
            data = _pooled(name).split(test_size=0.3, seed=seed)
            grid = k_grid(min(64, data.n_features), 8)
            methods, params = _methods(data)
            for method in [m for m in ("fgm", "fsa", "abess") if m in methods]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rows = sweep(method, data, ks=grid, cv=5, repeats=2, seed=seed,
                                 **params.get(method, {}))
                    test = {}
                    for k in grid:
                        est, _ = fit_at_k(method, data, k, params.get(method, {}))
                        test[k] = evaluate(est, data.X_test, data.y_test,
                                           ["accuracy"])["accuracy"]
                best_k = max(test, key=lambda k: (test[k], -k))
                se = np.sqrt(test[best_k] * (1 - test[best_k]) / len(data.y_test))
                cells = []
                for rule in CHOICE_RULES:
                    k = int(choose_point(rows, "accuracy", rule)["value"])
                    held[rule] += test[k] >= test[best_k] - se
                    features[rule].append(k)
                    accuracy[rule].append(test[k])
                    cells.append(f"{k} ({test[k]:.3f})")
                cases += 1
                per_set.add(name, method, seed, f"{best_k} ({test[best_k]:.3f})", *cells)
    tables.append(per_set)
    summary = Table(f"Choosing k, summed over {cases} cases",
                    ["rule", "within 1 se of the best test k", "mean test accuracy",
                     "median k"])
    for rule in CHOICE_RULES:
        summary.add(rule, f"{held[rule]}/{cases}", float(np.mean(accuracy[rule])),
                    float(np.median(features[rule])))
    tables.append(summary)


def _arguments(p):
    p.add_argument("--sets", default=",".join(REAL_SETS))
    p.add_argument("--power-seeds", type=int, default=40)
    p.add_argument("--rule-sets", default="breast-cancer,digits-3v8,digits-4v7,digits-9vr,"
                                          "pd-speech,hepatic-injury,fine-foods,grants")
    p.add_argument("--rule-splits", type=int, default=2)
    p.add_argument("--cv-splits", type=int, default=3)
    p.add_argument("--shuffles", type=int, default=6)


if __name__ == "__main__":
    run("compare", __doc__, [("simulation", simulation), ("repeats", repeats),
                             ("verdicts", verdicts), ("power", power), ("rules", rules)],
        add_arguments=_arguments)
