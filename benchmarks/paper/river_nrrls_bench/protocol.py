"""The NR-RLS paper's protocol (algorithms page, "Metrics and the evaluation protocol") for
``river-nrrls benchmark``.

One *task* is one run of 2-fold stratified cross-validation on one bundled data set: the data
set is split into two halves that keep its class ratio; each half in turn is the training half,
learnt online in a shuffled order, and the other the test half, on which the G-mean is measured.
Before the learners train, the polynomial order r of Toh's reduced model (RM) is chosen on the
training half only, online, by `river_nrrls.PolynomialOrderSelector`. Every learner is
then trained on the inputs themselves ("linear") and on the RM features of that order ("rm").

The batch TER solution (plain numpy weighted least squares on the whole training half) is the
reference NR-RLS must equal: every fold records whether both predict the same on the test half.

Everything is deterministic: the splits, the shuffles and the samplers are seeded from
``(seed, run, fold)``, so a task gives the same numbers in any process and in any order.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import typing

import numpy as np
import pandas as pd
from river import base, imblearn, linear_model, tree

from river_nrrls import (
    ARRLS,
    IRRLS,
    NRRLS,
    ACOGClassifier,
    AROWClassifier,
    CWClassifier,
    PolynomialExtender,
    PolynomialOrderSelector,
    datasets,
)

__all__ = [
    "B",
    "LEARNERS",
    "ONLINE_LEARNERS",
    "Settings",
    "Task",
    "fit_ter",
    "g_mean",
    "predict_ter",
    "rm_columns",
    "run_task",
    "stratified_halves",
]

#: The ridge constant b of the paper (NR-RLS, RLS, AR-RLS, IR-RLS and TER).
B = 1e-4

#: The online learners that are ranked, in table order (HT on the inputs only).
ONLINE_LEARNERS: tuple[str, ...] = (
    "NR-RLS",
    "AR-RLS",
    "RLS",
    "CW",
    "AROW",
    "ACOG",
    "PE",
    "PA",
    "LR",
    "LR+ROS",
    "LR+RUS",
    "HT",
)

#: Every model of the benchmark: the online learners, then the batch TER and IR-RLS (both equal
#: to NR-RLS by construction, so they are checked against it rather than ranked).
LEARNERS: tuple[str, ...] = ONLINE_LEARNERS + ("TER", "IR-RLS")

#: One line per model, for the outputs.
DESCRIPTIONS: dict[str, str] = {
    "NR-RLS": "river_nrrls.NRRLS() (l2 = 1e-4): exact online TER",
    "AR-RLS": "river_nrrls.ARRLS() (l2 = 1e-4): approximately reweighted RLS",
    "RLS": "river_nrrls.NRRLS(reweight=False) (l2 = 1e-4): plain ridge RLS, no class weights",
    "CW": "river_nrrls.CWClassifier() (LIBOL defaults: eta = 0.7, a = 1, no intercept)",
    "AROW": "river_nrrls.AROWClassifier() (LIBOL defaults: r = 1, a = 1, no intercept)",
    "ACOG": "river_nrrls.ACOGClassifier() (eta = 1, gamma = 1, 'sum' metric, no intercept)",
    "PE": "river linear_model.Perceptron() (defaults)",
    "PA": "river linear_model.PAClassifier(C=1.0, mode=1) (PA-I, with intercept)",
    "LR": "river linear_model.LogisticRegression() (defaults: SGD, lr = 0.01)",
    "LR+ROS": "river imblearn.RandomOverSampler(LR, desired_dist={False: .5, True: .5})",
    "LR+RUS": "river imblearn.RandomUnderSampler(LR, desired_dist={False: .5, True: .5})",
    "HT": "river tree.HoeffdingTreeClassifier() (defaults; on the inputs only)",
    "TER": "batch TER: numpy weighted least squares on the whole training half (l2 = 1e-4)",
    "IR-RLS": "river_nrrls.IRRLS() (l2 = 1e-4): exact TER at O(n d^2) per sample",
}

#: Learners that only make sense on the inputs (a tree gains nothing from RM's powers).
LINEAR_ONLY = frozenset({"HT", "IR-RLS"})


@dataclasses.dataclass(frozen=True)
class Settings:
    """Everything that defines a benchmark run besides the data sets."""

    runs: int = 10
    orders: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    max_columns: int = 700  # an order whose RM has more columns is not raced
    selector_block: int = 10  # PolynomialOrderSelector(block=...): block-prequential scoring
    irrls_max_train: int = 500  # IR-RLS on every fold when the training half is this small
    irrls_timing: tuple[str, ...] = ("Pima", "Spambase", "Mushroom")  # + run 0 only, if larger
    seed: int = 42


@dataclasses.dataclass(frozen=True)
class Task:
    """One run (two folds) on one data set."""

    dataset: str
    run: int
    settings: Settings


# ------------------------------------------------------------------------------- the pieces


def stratified_halves(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fold (0 or 1) of every sample: a random half of every class in each fold.

    The classes are dealt alternately into the folds after a random permutation; an odd class
    gives its extra sample to fold 0 and the next class starts dealing at fold 1, so the two
    folds differ in size by at most one sample, and in every class by at most one too.

    >>> labels = np.array([True] * 5 + [False] * 8)
    >>> folds = stratified_halves(labels, np.random.default_rng(0))
    >>> [int((folds[labels] == 0).sum()), int((folds[~labels] == 0).sum()), int((folds == 0).sum())]
    [3, 4, 7]

    """
    labels = np.asarray(labels)
    folds = np.empty(len(labels), dtype=np.int8)
    offset = 0
    for value in sorted(set(labels.tolist()), key=repr):  # a fixed class order
        members = rng.permutation(np.flatnonzero(labels == value))
        folds[members] = (np.arange(len(members)) + offset) % 2
        offset += len(members)
    return folds


def rm_columns(n_features: int, order: int) -> int:
    """Columns of Toh's reduced model of order r on l inputs: r + l (2r - 1), l at r = 1."""
    return n_features if order == 1 else order + n_features * (2 * order - 1)


def raced_orders(settings: Settings, n_features: int) -> tuple[int, ...]:
    """The candidate orders whose RM has at most ``settings.max_columns`` columns."""
    allowed = tuple(r for r in settings.orders if rm_columns(n_features, r) <= settings.max_columns)
    return allowed or (min(settings.orders),)


def fit_ter(X: np.ndarray, y: np.ndarray, b: float = B) -> np.ndarray:
    """Batch TER weights ``[intercept, w_1, ..., w_d]`` of the class ``True`` (algorithms page,
    "Total error rate (TER)").

    ``w = (X1^T W X1 + b I)^-1 X1^T W t`` with ``X1 = [1, X]``, ``W = diag(1/n^c)`` (0 for an
    empty class) and targets ``t = +1`` (True) / ``-1`` (False): the solution NR-RLS must equal.
    Solved by LU (``numpy.linalg.solve``), independently of NR-RLS's Cholesky.

    >>> from river_nrrls import NRRLS
    >>> X, y, names = load_matrix("Bupa")
    >>> model = NRRLS()
    >>> for x, label in zip(as_dicts(X, names), y.tolist()):
    ...     model.learn_one(x, label)
    >>> weights = fit_ter(X, y)
    >>> bool(np.allclose(weights[1:], [model.weights[True][f] for f in names]))
    True
    >>> predictions = [model.predict_one(x) for x in as_dicts(X, names)]
    >>> bool((np.array(predictions) == predict_ter(weights, X)).all())
    True

    """
    y = np.asarray(y, dtype=bool)
    X1 = np.hstack([np.ones((len(X), 1)), np.asarray(X, dtype=float)])
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    weights = np.where(y, 1.0 / n_pos if n_pos else 0.0, 1.0 / n_neg if n_neg else 0.0)  # 1/n^c
    targets = np.where(y, 1.0, -1.0)  # tau +- eta with tau = 0, eta = 1
    matrix = X1.T @ (X1 * weights[:, None]) + b * np.eye(X1.shape[1])  # X1^T W X1 + b I
    return np.linalg.solve(matrix, X1.T @ (weights * targets))  # (X1^T W X1 + b I)^-1 X1^T W t


def predict_ter(weights: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``True`` where ``w . [1, x] > 0`` (the threshold tau = 0)."""
    return weights[0] + np.asarray(X, dtype=float) @ weights[1:] > 0.0


def g_mean(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float, float]:
    """(G-mean, TPR, TNR) with ``True`` the positive (minority) class: G = sqrt(TPR TNR)."""
    y_true = np.asarray(y_true, dtype=bool)
    y_pred = np.asarray(y_pred, dtype=bool)
    tpr = float((y_pred & y_true).sum() / y_true.sum())  # TP / (TP + FN)
    tnr = float((~y_pred & ~y_true).sum() / (~y_true).sum())  # TN / (TN + FP)
    return float(np.sqrt(tpr * tnr)), tpr, tnr


def build_learner(name: str, seed: int) -> base.Classifier:
    """A fresh, untrained online learner of the benchmark."""
    if name == "NR-RLS":
        return NRRLS(l2=B)
    if name == "RLS":
        return NRRLS(l2=B, reweight=False)
    if name == "AR-RLS":
        return ARRLS(l2=B)
    if name == "IR-RLS":
        return IRRLS(l2=B)
    if name == "CW":
        return CWClassifier()
    if name == "AROW":
        return AROWClassifier()
    if name == "ACOG":
        return ACOGClassifier()
    if name == "PE":
        return linear_model.Perceptron()
    if name == "PA":
        return linear_model.PAClassifier(C=1.0, mode=1)
    if name == "LR":
        return linear_model.LogisticRegression()
    balanced = {False: 0.5, True: 0.5}
    if name == "LR+ROS":
        return imblearn.RandomOverSampler(linear_model.LogisticRegression(), balanced, seed=seed)
    if name == "LR+RUS":
        return imblearn.RandomUnderSampler(linear_model.LogisticRegression(), balanced, seed=seed)
    if name == "HT":
        return tree.HoeffdingTreeClassifier()
    raise KeyError(f"unknown learner {name!r}")


@functools.lru_cache(maxsize=4)
def load_matrix(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """A bundled data set as (inputs, boolean labels, feature names), cached per process."""
    dataset = datasets.load(name)
    rows, labels = zip(*dataset)
    names = tuple(dataset.feature_names)
    X = np.array([[x[f] for f in names] for x in rows], dtype=float)
    return X, np.array(labels, dtype=bool), names


def as_dicts(matrix: np.ndarray, names: typing.Sequence[str]) -> list[dict]:
    """The rows of a matrix as river feature dicts."""
    names = list(names)
    return [dict(zip(names, row)) for row in matrix.tolist()]


def rm_matrix(X: np.ndarray, names: tuple[str, ...], order: int) -> tuple[np.ndarray, list[str]]:
    """RM features of order r (``aggregate="mean"``) of every row, and their names."""
    extender = PolynomialExtender(
        degree=order, kind="reduced", aggregate="mean", n_features=len(names)
    )
    frame = extender.transform_many(pd.DataFrame(X, columns=list(names)))
    return frame.to_numpy(dtype=float), [str(c) for c in frame.columns]


def choose_order(
    train: list[dict], labels: list[bool], n_features: int, settings: Settings
) -> tuple[int, dict[int, float], float]:
    """The order r chosen online on the training half: (r, final scores, CPU seconds)."""
    selector = PolynomialOrderSelector(
        orders=raced_orders(settings, n_features),
        extender=PolynomialExtender(kind="reduced", aggregate="mean", n_features=n_features),
        classifier=NRRLS(l2=B),
        block=settings.selector_block,
    )
    start = time.process_time()
    for x, y in zip(train, labels):
        selector.learn_one(x, y)
    seconds = time.process_time() - start
    scores = {order: float(score.get()) for order, score in selector.scores.items()}
    return selector.best_order, scores, seconds


# ----------------------------------------------------------------------------- one fold


def _nrrls_weight_vector(model: NRRLS, names: list[str]) -> np.ndarray:
    weights = model.weights.get(True, {})
    return np.array([model.intercepts.get(True, 0.0)] + [weights.get(f, 0.0) for f in names])


def _train_and_test(
    name: str, seed: int, train: list[dict], y_train: list[bool], test: list[dict]
) -> tuple[base.Classifier, np.ndarray, float, float]:
    """Train one learner online, predict the test half: (model, predictions, train s, test s)."""
    model = build_learner(name, seed)
    start = time.process_time()
    for x, y in zip(train, y_train):
        model.learn_one(x, y)
    if isinstance(model, NRRLS):
        model.weights  # noqa: B018 (NR-RLS solves its weights on demand: count that solve)
    train_seconds = time.process_time() - start
    start = time.process_time()
    predictions = np.array([model.predict_one(x) is True for x in test], dtype=bool)
    return model, predictions, train_seconds, time.process_time() - start


def _run_feature_set(
    features: str,
    order: int,
    X_train: np.ndarray,
    X_test: np.ndarray,
    names: list[str],
    y_train: np.ndarray,
    y_test: np.ndarray,
    learners: typing.Sequence[str],
    seed: int,
    common: dict,
) -> tuple[list[dict], dict]:
    """Every learner on one feature set of one fold: G-mean records and the TER checks."""
    train, test = as_dicts(X_train, names), as_dicts(X_test, names)
    labels = y_train.tolist()
    records, predictions, weights = [], {}, {}
    for name in learners:
        model, predicted, train_s, test_s = _train_and_test(name, seed, train, labels, test)
        predictions[name] = predicted
        if name in ("NR-RLS", "IR-RLS"):
            weights[name] = _nrrls_weight_vector(model, names)
        records.append(_record(common, features, order, name, y_test, predicted, train_s, test_s))
    start = time.process_time()
    ter_weights = fit_ter(X_train, y_train)
    train_s = time.process_time() - start
    start = time.process_time()
    predicted = predict_ter(ter_weights, X_test)
    test_s = time.process_time() - start
    predictions["TER"] = predicted
    records.append(_record(common, features, order, "TER", y_test, predicted, train_s, test_s))
    scale = float(np.linalg.norm(ter_weights))
    check = {
        **common,
        "features": features,
        "order": order,
        "n_columns": len(names),
        "nrrls_equals_ter": bool(np.array_equal(predictions["NR-RLS"], predicted)),
        "nrrls_ter_mismatches": int((predictions["NR-RLS"] != predicted).sum()),
        "nrrls_ter_weight_rel_diff": float(np.linalg.norm(weights["NR-RLS"] - ter_weights) / scale),
    }
    if "IR-RLS" in predictions:
        check["irrls_equals_ter"] = bool(np.array_equal(predictions["IR-RLS"], predicted))
        check["irrls_ter_weight_rel_diff"] = float(
            np.linalg.norm(weights["IR-RLS"] - ter_weights) / scale
        )
    return records, check


def _record(common, features, order, model, y_test, predicted, train_s, test_s) -> dict:
    gm, tpr, tnr = g_mean(y_test, predicted)
    return {
        **common,
        "features": features,
        "order": order,
        "model": model,
        "g_mean": gm,
        "tpr": tpr,
        "tnr": tnr,
        "train_cpu_s": train_s,
        "test_cpu_s": test_s,
        "timing_only": False,
    }


def run_fold(
    dataset: str,
    run: int,
    fold: int,
    train_index: np.ndarray,
    test_index: np.ndarray,
    settings: Settings,
) -> tuple[list[dict], list[dict], dict]:
    """One fold: (G-mean records, TER checks, order selection)."""
    X, y, names = load_matrix(dataset)
    n_features = len(names)
    seed = settings.seed * 1000 + run * 2 + fold
    common = {
        "dataset": dataset,
        "run": run,
        "fold": fold,
        "n_train": len(train_index),
        "n_test": len(test_index),
    }
    X_train, y_train, X_test, y_test = X[train_index], y[train_index], X[test_index], y[test_index]
    order, scores, selector_seconds = choose_order(
        as_dicts(X_train, names), y_train.tolist(), n_features, settings
    )
    selection = {
        **common,
        "order": order,
        "raced_orders": " ".join(map(str, sorted(scores))),
        "selector_cpu_s": selector_seconds,
        **{f"selector_gmean_r{r}": value for r, value in scores.items()},
    }
    linear = list(ONLINE_LEARNERS)
    large = len(train_index) > settings.irrls_max_train
    if not large or (dataset in settings.irrls_timing and run == 0):
        linear.append("IR-RLS")
    records, check = _run_feature_set(
        "linear", 1, X_train, X_test, list(names), y_train, y_test, linear, seed, common
    )
    if large:  # IR-RLS timed only: its G-mean is not part of the tables on the large sets
        for record in records:
            record["timing_only"] = record["model"] == "IR-RLS"
    checks = [check]
    if order == 1:  # RM of order 1 is the inputs themselves: the linear results stand for it
        rm_records = [
            {**record, "features": "rm"} for record in records if record["model"] not in LINEAR_ONLY
        ]
        rm_check = {key: v for key, v in check.items() if not key.startswith("irrls")}
        checks.append({**rm_check, "features": "rm"})
    else:
        Z, rm_names = rm_matrix(X, names, order)
        rm_records, rm_check = _run_feature_set(
            "rm",
            order,
            Z[train_index],
            Z[test_index],
            rm_names,
            y_train,
            y_test,
            [name for name in ONLINE_LEARNERS if name not in LINEAR_ONLY],
            seed,
            common,
        )
        checks.append(rm_check)
    return records + rm_records, checks, selection


def run_task(task: Task) -> tuple[list[dict], list[dict], list[dict]]:
    """Both folds of one run on one data set: (records, TER checks, order selections)."""
    _, y, _ = load_matrix(task.dataset)
    rng = np.random.default_rng([task.settings.seed, task.run])
    folds = stratified_halves(y, rng)
    records, checks, selections = [], [], []
    for fold in (0, 1):
        # Train on one half in a shuffled order; test on the other half.
        train_index = rng.permutation(np.flatnonzero(folds == fold))
        test_index = np.flatnonzero(folds != fold)
        fold_records, fold_checks, selection = run_fold(
            task.dataset, task.run, fold, train_index, test_index, task.settings
        )
        records.extend(fold_records)
        checks.extend(fold_checks)
        selections.append(selection)
    return records, checks, selections
