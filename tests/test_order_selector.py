"""PolynomialOrderSelector from shared statistics against independent pipelines, sample by sample.

With an `NRRLS` (solver "cholesky") the selector expands every sample once and every order's
NRRLS learns its part of that expansion, solved by its pipeline's solver (``_orders.py``).
Every order must predict what an independent ``PolynomialExtender(degree=r) | NRRLS(...)``
predicts, on every sample: the tests below run both side by side and compare every order's
outputs ``w . x`` (to the bit: the same statistics, solved by the same path) and predictions
before every sample, with sample weights, forgetting, emerging features, both aggregates, the
full kind, multiclass (shared and per-class systems), no intercept, tau != 0, l2 = 0, and widths
where the pipelines switch to their stale-factor solver (``test_order_selector_exactness.py``:
wide real data and long streams). The forgetting grid and the race window are checked against
races written out by hand.
"""

from __future__ import annotations

import collections
import itertools
import math
import pickle

import numpy as np
import pytest
from river import linear_model, metrics

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector, datasets
from river_nrrls._race import score_values as _score_values
from river_nrrls._stats import symmetrize_upper as symmetrize

RTOL = 1e-7  # outputs: |f - f_pipeline| <= RTOL * (1 + max |f_pipeline| over the classes)


def _stream(n_samples=120, n_features=3, classes=(False, True), seed=0, emerging=True):
    """[0, 1] features; with ``emerging`` a feature appears after a third of the stream and
    another after two thirds; some values absent (None) or missing keys."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    direction = rng.normal(size=n_features + 2)
    for i in range(n_samples):
        x = {f"x{j}": float(rng.random()) for j in range(n_features)}
        if emerging and i >= n_samples // 3:
            x["late"] = float(rng.random())
        if emerging and i >= 2 * n_samples // 3 and rng.random() < 0.7:
            x["later"] = float(rng.random())
        if rng.random() < 0.1:
            x["x0"] = None
        values = np.array([v or 0.0 for v in x.values()] + [0.0] * (n_features + 2 - len(x)))
        score = np.sin(3.0 * values @ direction) + 0.3 * rng.normal()
        position = int(np.clip((score + 1.0) / 2.0 * len(classes), 0, len(classes) - 1))
        rows.append(x)
        labels.append(classes[position])
    return rows, labels


def _orders_outputs(selector, x):
    """Every order's outputs from the selector's shared solution (None before any class)."""
    (nested,) = selector._nested.values()
    solution = nested.solve()
    if not solution.labels:
        return None, ()
    expanded = nested.expand(x).values
    return nested.outputs(solution, nested.vector(expanded)), solution.labels


def _tuned(pipeline, stale_width: int | None):
    """The pipeline with its solver's stale-factor widths set (as `_force_stale` sets the
    selector's)."""
    if stale_width is not None:
        pipeline["NRRLS"].weight_solver.stale_min_dim = stale_width
        pipeline["NRRLS"].weight_solver.class_stale_min_dim = stale_width
    return pipeline


def _run_side_by_side(
    selector, rows, labels, weights=None, classifier=None, extender=None, stale_width=None
):
    """Learn the stream with the selector and with independent pipelines (their stale-factor
    widths ``stale_width``, as `_force_stale` set the selector's); before every sample, every
    order's outputs must be its pipeline's to the bit, and so its prediction."""
    extender = extender or selector._extender
    classifier = classifier or selector._classifier
    orders = selector._orders
    pipelines = {
        r: _tuned(extender.clone({"degree": r}) | classifier.clone(), stale_width) for r in orders
    }
    for i, (x, y) in enumerate(zip(rows, labels)):
        outputs, classes = _orders_outputs(selector, x)
        for q, r in enumerate(orders):
            expected = pipelines[r]["NRRLS"].decision_one(
                pipelines[r]["PolynomialExtender"].transform_one(x)
            )
            if outputs is None:
                assert expected == {}
                continue
            assert list(expected) == list(classes)
            assert outputs[q].tolist() == list(expected.values()), (i, r)
            assert selector_order_prediction(selector, x, r) == pipelines[r].predict_one(x)
        w = 1.0 if weights is None else weights[i]
        selector.learn_one(x, y, w=w)
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y, w=w)


def selector_order_prediction(selector, x, order):
    outputs, classes = _orders_outputs(selector, x)
    row = outputs[selector._orders.index(order)].tolist()
    return classes[max(range(len(row)), key=row.__getitem__)]


def _assert_outputs_match(selector, pipelines: dict, x: dict) -> None:
    """Every order's outputs for ``x`` as its pipeline's (``pipelines``: by order), to RTOL."""
    outputs, _ = _orders_outputs(selector, x)
    for q, r in enumerate(selector._orders):
        expected = pipelines[r]["NRRLS"].decision_one(
            pipelines[r]["PolynomialExtender"].transform_one(x)
        )
        reference = np.array(list(expected.values()))
        assert np.abs(outputs[q] - reference).max() <= RTOL * (1.0 + np.abs(reference).max())


def _learn_together(selector, pipelines: dict, rows, labels) -> None:
    for x, y in zip(rows, labels):
        selector.learn_one(x, y)
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y)


MEAN3 = PolynomialExtender(aggregate="mean", n_features=3)


@pytest.mark.parametrize(
    ("extender", "classifier", "orders"),
    [
        (PolynomialExtender(), NRRLS(), (1, 2, 3)),
        (MEAN3, NRRLS(), (1, 2, 3, 4, 5, 6)),
        (MEAN3, NRRLS(forgetting=0.97), (1, 3, 4)),
        (MEAN3, NRRLS(intercept=False, tau=0.3, eta=0.5), (2, 3)),
        (MEAN3, NRRLS(reweight=False, l2=1e-2), (1, 2, 4)),
        (PolynomialExtender(kind="full", include_bias=True), NRRLS(), (1, 2, 3)),
        (PolynomialExtender(include_bias=True), NRRLS(intercept=False), (1, 2)),
    ],
    ids=["sum", "mean-1to6", "forgetting", "no-intercept-tau", "ridge", "full-bias", "bias"],
)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_every_order_predicts_as_its_pipeline_binary(extender, classifier, orders, weighted):
    rows, labels = _stream(n_samples=90)
    weights = [(0.0, 0.5, 1.0, 3.0)[i % 4] for i in range(len(rows))] if weighted else None
    selector = PolynomialOrderSelector(orders=orders, extender=extender, classifier=classifier)
    assert selector._shared
    _run_side_by_side(selector, rows, labels, weights)


@pytest.mark.parametrize(
    "classifier",
    [NRRLS(), NRRLS(reweight=False), NRRLS(forgetting=0.98, tau=0.2)],
    ids=["reweighted", "ridge", "forgetting-tau"],
)
def test_every_order_predicts_as_its_pipeline_multiclass(classifier):
    """Labels of any hashable type; reweighted: every class's own system, one factor each."""
    rows, labels = _stream(n_samples=90, classes=("cat", 2, (1, "t"), frozenset({3})))
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3, classifier=classifier)
    _run_side_by_side(selector, rows, labels, [1.0 + (i % 3) for i in range(len(rows))])


def test_wide_orders_where_the_pipelines_use_their_stale_factor():
    """12 inputs: order 5 has 5 + 12 * 9 = 113 columns, beyond the pipelines' direct solver;
    their stale factor's conjugate gradients agree with the direct solve to ~1e-9."""
    rows, labels = _stream(n_samples=160, n_features=12, emerging=False, seed=4)
    extender = PolynomialExtender(aggregate="mean", n_features=12)
    selector = PolynomialOrderSelector(orders=(1, 3, 5), extender=extender)
    assert selector._extender.clone({"degree": 5}).n_outputs(12) >= 112
    _run_side_by_side(selector, rows, labels)


def test_singular_systems_take_the_pipelines_fallbacks():
    """l2 = 0 with fewer samples than columns: the factorisation of the highest order fails;
    the orders it fails for are solved as their pipelines solve them."""
    rows, labels = _stream(n_samples=40, emerging=False, seed=2)
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3, classifier=NRRLS(l2=0.0))
    for x, y in zip(rows[:8], labels[:8]):
        selector.learn_one(x, y)
    pipelines = {r: MEAN3.clone({"degree": r}) | NRRLS(l2=0.0) for r in (1, 2, 3)}
    for pipeline in pipelines.values():
        for x, y in zip(rows[:8], labels[:8]):
            pipeline.learn_one(x, y)
    # On the samples learnt every least-squares solution gives the same outputs.
    for x in rows[:8]:
        outputs, classes = _orders_outputs(selector, x)
        for q, r in enumerate((1, 2, 3)):
            expected = pipelines[r]["NRRLS"].decision_one(
                pipelines[r]["PolynomialExtender"].transform_one(x)
            )
            assert np.allclose(outputs[q], list(expected.values()), rtol=1e-6, atol=1e-6)


def test_the_race_is_the_race_of_independent_pipelines():
    """Scores and best orders equal to the bit to those of pipelines raced by hand."""
    stream = list(itertools.islice(datasets.Pima(), 150))
    extender = PolynomialExtender(aggregate="mean", n_features=8)
    selector = PolynomialOrderSelector(orders=(1, 2, 3, 4, 5, 6), extender=extender)
    pipelines = {r: extender.clone({"degree": r}) | NRRLS() for r in range(1, 7)}
    scores = {r: metrics.GeometricMean() for r in range(1, 7)}
    for x, y in stream:
        assert selector.predict_one(x) == pipelines[selector.best_order].predict_one(x)
        for r, pipeline in pipelines.items():
            y_pred = pipeline.predict_one(x)
            if y_pred is not None:
                scores[r].update(y, y_pred)
            pipeline.learn_one(x, y)
        selector.learn_one(x, y)
        values = {r: score.get() for r, score in scores.items()}
        assert {r: score.get() for r, score in selector.scores.items()} == values
        assert selector.best_order == min(values, key=lambda r: (-values[r], r))


def test_an_empty_sample_is_learnt_as_the_pipelines_learn_it():
    """An empty sample (or one of missing values) has no order-1 column but the sum terms of
    the higher orders: every order learns and predicts it as its pipeline does (it raised
    TypeError from the order-1 column selection)."""
    rows, labels = _stream(n_samples=60, seed=3)
    for i in (0, 7, 20, 41):
        rows[i] = {} if i % 2 else {"x0": None}
    selector = PolynomialOrderSelector(orders=(1, 2, 3))
    pipelines = {r: PolynomialExtender(degree=r) | NRRLS() for r in (1, 2, 3)}
    scores = {r: metrics.GeometricMean() for r in (1, 2, 3)}
    for x, y in zip(rows, labels):
        for r, pipeline in pipelines.items():
            y_pred = pipeline.predict_one(x)
            if y_pred is not None:
                scores[r].update(y, y_pred)
            pipeline.learn_one(x, y)
        selector.learn_one(x, y)
        assert {r: score.get() for r, score in selector.scores.items()} == {
            r: score.get() for r, score in scores.items()
        }
        for r, pipeline in selector.pipelines.items():
            assert pipeline["NRRLS"].weights == pipelines[r]["NRRLS"].weights
            assert pipeline.predict_proba_one({}) == pipelines[r].predict_proba_one({})


def test_materialised_pipelines_are_the_independent_ones():
    rows, labels = _stream(n_samples=80, classes=("a", "b", "c"))
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3)
    independent = {r: MEAN3.clone({"degree": r}) | NRRLS() for r in (1, 2, 3)}
    _learn_together(selector, independent, rows[:60], labels[:60])
    materialised = selector.pipelines
    assert list(materialised) == [1, 2, 3]
    assert selector.best_model["NRRLS"].n_samples == independent[1]["NRRLS"].n_samples
    for r, pipeline in materialised.items():
        mine, theirs = pipeline["NRRLS"], independent[r]["NRRLS"]
        assert mine.features == theirs.features  # the pipeline's own order
        assert mine.n_samples == theirs.n_samples
        for x, y in zip(rows[60:], labels[60:]):  # they go on learning on their own
            pipeline.learn_one(x, y)
            independent[r].learn_one(x, y)
        for x in rows[:10]:
            a = pipeline.predict_proba_one(x)
            b = independent[r].predict_proba_one(x)
            assert a.keys() == b.keys()
            assert all(math.isclose(a[k], b[k], rel_tol=1e-7, abs_tol=1e-9) for k in a)
    # learning with a materialised pipeline does not change the selector
    assert sum(selector.pipelines[3]["NRRLS"].n_samples.values()) == 60


def test_predict_uses_the_best_order_expansion_only():
    """A value whose order-6 expansion overflows is fine for an order-1 prediction."""
    selector = PolynomialOrderSelector(orders=(1, 6))
    for x, y in itertools.islice(datasets.Pima(), 20):
        selector.learn_one(x, y)
    assert selector.best_order == 1
    huge = {"glucose": 1e60}
    assert selector.predict_one(huge) in (True, False)
    before = pickle.dumps(selector)
    with pytest.raises(ValueError, match="'glucose'"):
        selector.learn_one(huge, True)
    assert pickle.dumps(selector) == before


@pytest.mark.parametrize(
    "classifier",
    [NRRLS(solver="woodbury"), linear_model.LogisticRegression()],
    ids=["woodbury", "logistic"],
)
def test_other_classifiers_keep_independent_pipelines(classifier):
    selector = PolynomialOrderSelector(orders=(1, 2), classifier=classifier)
    assert not selector._shared
    stream = list(itertools.islice(datasets.Pima(), 40))
    by_hand = {r: PolynomialExtender(r) | classifier.clone() for r in (1, 2)}
    for x, y in stream:
        selector.learn_one(x, y)
        for pipeline in by_hand.values():
            pipeline.learn_one(x, y)
    pipelines = selector.pipelines
    assert pipelines[2] is selector.pipelines[2]  # the selector's own pipelines
    x = stream[0][0]
    for r in (1, 2):
        assert pipelines[r].predict_proba_one(x) == by_hand[r].predict_proba_one(x)


# ------------------------------------------------------------------------------ drift handling


def _hand_race(stream, candidates, window=None):
    """(order, forgetting) pipelines raced on G-mean (over the last ``window`` scored samples
    when given, recomputed from scratch): the best candidate and every score after each
    sample."""
    pipelines = {
        (r, f): PolynomialExtender(aggregate="mean", n_features=8, degree=r) | NRRLS(forgetting=f)
        for r, f in candidates
    }
    scored = {key: [] for key in candidates}
    history = []
    for x, y in stream:
        for key, pipeline in pipelines.items():
            y_pred = pipeline.predict_one(x)
            if y_pred is not None:
                scored[key].append((y, y_pred))
            pipeline.learn_one(x, y)
        values = {}
        for key in candidates:
            metric = metrics.GeometricMean()
            for y_true, y_pred in scored[key][-window if window else 0 :]:
                metric.update(y_true, y_pred)
            values[key] = metric.get()
        best = min(candidates, key=lambda key: (-values[key], candidates.index(key)))
        history.append((best, values))
    return history


@pytest.mark.parametrize("window", [None, 25])
def test_forgetting_grid_races_every_order_and_factor(window):
    stream = list(itertools.islice(datasets.Pima(), 120))
    selector = PolynomialOrderSelector(
        orders=(1, 3),
        extender=PolynomialExtender(aggregate="mean", n_features=8),
        forgetting_grid=(0.95, 1.0),
        window=window,
    )
    candidates = [(1, 1.0), (1, 0.95), (3, 1.0), (3, 0.95)]  # ties: low order, little forgetting
    assert list(selector.scores) == candidates
    history = _hand_race(stream, candidates, window)
    for (x, y), (best, values) in zip(stream, history):
        selector.learn_one(x, y)
        assert {key: score.get() for key, score in selector.scores.items()} == pytest.approx(
            values, rel=1e-12
        )
        assert (selector.best_order, selector.best_forgetting) == best
    assert len({best for best, _ in history}) > 1  # the race is not trivially won


def test_forgetting_grid_needs_a_forgetting_parameter():
    with pytest.raises(ValueError, match="forgetting"):
        PolynomialOrderSelector(
            classifier=linear_model.LogisticRegression(), forgetting_grid=(1.0,)
        )
    for grid in ((), (1.0, 1.0), (0.0,), (1.5,), 0.9):
        with pytest.raises((ValueError, TypeError), match="forgetting_grid"):
            PolynomialOrderSelector(forgetting_grid=grid)
    for window in (0, 2.5, True):
        with pytest.raises(ValueError, match="window"):
            PolynomialOrderSelector(window=window)


def test_grid_refusal_leaves_every_model_unchanged():
    selector = PolynomialOrderSelector(orders=(1, 2), forgetting_grid=(0.5, 1.0))
    for x, y in itertools.islice(datasets.Pima(), 20):
        selector.learn_one(x, y)
    before = pickle.dumps(selector)
    with pytest.raises(ValueError, match="too large"):
        selector.learn_one({"glucose": 1e100, "age": 0.5}, True)
    assert pickle.dumps(selector) == before


# ------------------------------------------------------------------------------ the G-mean


def test_fast_geometric_mean_is_river_s_to_the_bit():
    rng = np.random.default_rng(0)
    for _ in range(200):
        group = []
        n_classes = int(rng.integers(1, 5))
        for _ in range(int(rng.integers(1, 7))):
            metric = metrics.GeometricMean()
            for _ in range(int(rng.integers(0, 40))):
                y_true, y_pred = (int(v) for v in rng.integers(0, n_classes, size=2))
                metric.update(y_true, y_pred, w=float(rng.choice([1.0, 0.5, 2.0])))
            group.append(metric)
        assert _score_values(group) == [metric.get() for metric in group]
        for metric in group:  # one at a time, and numbers of classes that differ
            assert _score_values([metric]) == [metric.get()]
    wrapped = [metrics.BalancedAccuracy(), metrics.GeometricMean()]
    assert _score_values(wrapped) == [metric.get() for metric in wrapped]


def test_window_scores_only_the_last_samples():
    selector = PolynomialOrderSelector(orders=(1,), window=10)
    stream = list(itertools.islice(datasets.Pima(), 40))
    for x, y in stream:
        selector.learn_one(x, y)
    assert selector.scores[1].cm.total_weight == 10
    assert len(selector._recent[1]) == 10
    assert isinstance(selector._recent[1], collections.deque)


@pytest.mark.parametrize(
    "classifier_params",
    [{}, {"forgetting": 0.95, "tau": 0.2}, {"reweight": False, "intercept": False}],
    ids=["default", "forgetting-tau", "ridge-no-intercept"],
)
def test_every_order_is_the_plain_numpy_batch_ter(classifier_params):
    """Every order's outputs against the batch TER (tests/reference.py) of its expansion,
    after the features emerged, multiclass and weighted."""
    from reference import TERReference

    rows, labels = _stream(n_samples=75, classes=("a", "b", "c"), seed=5)
    weights = [1.0 + (i % 4) / 2 for i in range(len(rows))]
    selector = PolynomialOrderSelector(
        orders=(1, 2, 3), extender=MEAN3, classifier=NRRLS(**classifier_params)
    )
    for x, y, w in zip(rows, labels, weights):
        selector.learn_one(x, y, w=w)
    for q, r in enumerate((1, 2, 3)):
        extender = MEAN3.clone({"degree": r})
        reference = TERReference(
            [extender.transform_one(x) for x in rows],
            labels,
            sample_weights=weights,
            **{"l2": 1e-4, **classifier_params},
        )
        for x in rows[::7]:
            outputs, classes = _orders_outputs(selector, x)
            expected = reference.decision(extender.transform_one(x))
            tolerance = (
                1e-7
                * reference.scale
                * float(np.linalg.norm(reference.dense(extender.transform_one(x))))
                + 1e-300
            )
            assert list(classes) == list(expected)
            assert np.abs(outputs[q] - list(expected.values())).max() <= tolerance


# --------------------------------------------------------- orders on their own stale factors


def _force_stale(selector, width=10):
    """Every order of ``width`` columns or more on the stale-factor solver (the widths where
    pipelines use it, 112 and 64, scaled down to a quick test): the tuning of every order's
    model, which its solver takes (`NRRLS.new_solver`)."""
    for nested in selector._nested.values():
        for model in nested.models.values():
            model.weight_solver.stale_min_dim = width
            model.weight_solver.class_stale_min_dim = width


def _stale_counters(selector, wide_from: int = 0) -> collections.Counter:
    """The counters of the orders' solvers (those of the orders from position ``wide_from``)."""
    total = collections.Counter()
    for nested in selector._nested.values():
        for q, solver in nested.solvers.items():
            if q >= wide_from:
                total.update(solver.counters)
    return total


@pytest.mark.parametrize(
    ("classifier", "classes", "emerging"),
    [
        (NRRLS(), (False, True), False),
        (NRRLS(forgetting=0.99), (False, True), True),
        (NRRLS(intercept=False, tau=0.3, eta=0.5), (False, True), True),
        (NRRLS(reweight=False), ("a", "b", "c"), False),
        (NRRLS(), ("a", "b", "c"), True),
    ],
    ids=["binary", "forgetting-emerging", "no-intercept-tau", "multiclass-shared", "per-class"],
)
def test_orders_on_stale_factors_predict_as_their_pipelines(classifier, classes, emerging):
    """Long enough for refactorisations (class weights drift, CG slows down) and weighted:
    every order's outputs and predictions as its independent pipeline's, while the wide
    orders run their pipelines' stale-factor solver on their leading blocks."""
    rows, labels = _stream(n_samples=420, classes=classes, seed=7, emerging=emerging)
    weights = [(1.0, 0.5, 2.0, 1.0, 3.0)[i % 5] for i in range(len(rows))]
    selector = PolynomialOrderSelector(orders=(1, 2, 3, 4), extender=MEAN3, classifier=classifier)
    _force_stale(selector)
    _run_side_by_side(selector, rows, labels, weights, stale_width=10)
    counters = _stale_counters(selector)
    (nested,) = selector._nested.values()
    assert sorted(nested.solvers) == [0, 1, 2, 3]  # every order (2, 3 and 4: 12+ columns)
    assert counters["stale"] > 300 * 3 and counters["iterations"] > 0
    assert counters["refactor"] > 3  # the factors were refreshed on the way


def test_stale_factor_queue_overflow_and_blocks():
    """Block-prequential scoring solves once per block: the samples between solves wait in
    the solvers' queues, and a block longer than a queue lets the factors go."""
    rows, labels = _stream(n_samples=400, seed=8, emerging=False)
    for block in (7, 60):  # within a queue (48 samples), beyond it
        selector = PolynomialOrderSelector(orders=(1, 3, 4), extender=MEAN3, block=block)
        _force_stale(selector)
        pipelines = {r: MEAN3.clone({"degree": r}) | NRRLS() for r in (1, 3, 4)}
        chunk = 100  # samples between the checks' own solves
        for start in range(0, len(rows), chunk):
            _learn_together(selector, pipelines, rows[start : start + chunk], labels[start:])
            _assert_outputs_match(selector, pipelines, rows[start])
        counters = _stale_counters(selector, wide_from=1)  # orders 3 and 4
        if block == 7:
            assert counters["stale"] > 0 and counters["direct"] <= 2
        else:  # every block start found its factors let go: a direct solve
            assert counters["direct"] >= 400 // 60 - 1


def test_stale_factors_pickled_mid_stream_and_refused_calls():
    rows, labels = _stream(n_samples=260, seed=9, emerging=True)
    selector = PolynomialOrderSelector(orders=(1, 2, 3, 4), extender=MEAN3)
    _force_stale(selector)
    for x, y in zip(rows[:150], labels[:150]):
        selector.predict_one(x)
        selector.learn_one(x, y)
    assert _stale_counters(selector)["stale"] > 0
    before = pickle.dumps(selector)
    with pytest.raises(ValueError, match="too large"):
        selector.learn_one({**rows[150], "x1": 1e200}, labels[150])
    assert pickle.dumps(selector) == before
    copy = pickle.loads(before)
    for x, y in zip(rows[150:], labels[150:]):
        mine, classes = _orders_outputs(selector, x)
        theirs, _ = _orders_outputs(copy, x)
        assert np.abs(mine - theirs).max() <= RTOL * (1.0 + np.abs(mine).max())
        for model in (selector, copy):
            model.predict_one(x)
            model.learn_one(x, y)
    assert copy.best_order == selector.best_order
    assert _stale_counters(copy)["stale"] > 0  # the copy's solvers built their factors again


def test_every_order_keeps_its_pipeline_s_columns_as_features_emerge():
    """Every order's model holds its pipeline's features in its pipeline's order, and the
    highest order's columns keep theirs (features appended as they come)."""
    rows, labels = _stream(n_samples=90, seed=3, emerging=True)
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3)
    pipelines = {r: MEAN3.clone({"degree": r}) | NRRLS() for r in (1, 2, 3)}
    _learn_together(selector, pipelines, rows, labels)
    (nested,) = selector._nested.values()
    for r in (1, 2, 3):
        assert nested.models[r].features == pipelines[r]["NRRLS"].features
    expected = {}
    for x in rows:
        expected.update(MEAN3.clone({"degree": 3}).output_orders(x))
    features = list(nested.model.features)
    assert set(features) == set(expected)
    assert [expected[feature] for feature in features] == nested.column_orders[1:].tolist()
    for q, r in enumerate((1, 2, 3)):  # every order's columns among the highest order's
        positions = nested.positions()[q]
        assert [features[j - 1] for j in positions[1:]] == list(nested.models[r].features)


@pytest.mark.parametrize(
    ("classifier", "classes"),
    [(NRRLS(l2=1e-150), (False, True)), (NRRLS(l2=0.0), ("a", "b", "c"))],
    ids=["tiny-ridge", "no-ridge-multiclass"],
)
def test_singular_systems_take_the_pipelines_fallbacks_to_the_bit(classifier, classes):
    """A tiny or no ridge with fewer samples than columns: not definite in floating point;
    every order takes its pipeline's fallbacks, to the bit."""
    rows, labels = _stream(n_samples=30, classes=classes, emerging=False, seed=5)
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3, classifier=classifier)
    _run_side_by_side(selector, rows, labels)


def test_a_pickle_of_the_one_model_version_loads_as_every_order_s_model():
    """A pickle of the version in which one model (the highest order's, its columns grouped
    by order) served every order loads with every order's model cut from it, in the order
    its features came, predicting as the independent pipelines."""
    from river_nrrls import _orders

    rows, labels = _stream(n_samples=70, seed=12)
    selector = PolynomialOrderSelector(orders=(1, 2, 3), extender=MEAN3)
    pipelines = {r: MEAN3.clone({"degree": r}) | NRRLS() for r in (1, 2, 3)}
    _learn_together(selector, pipelines, rows[:50], labels[:50])
    (nested,) = selector._nested.values()
    # that version's state: the highest order's model with its columns grouped by order
    old = dict(nested.__getstate__())
    model = pickle.loads(pickle.dumps(old.pop("models")[3]))
    grouped = np.argsort(nested.column_orders, kind="stable")
    model.permute_columns(grouped)
    old.update(model=model, column_orders=nested.column_orders[grouped], arrival=nested.arrival)
    loaded = _orders.NestedOrders.__new__(_orders.NestedOrders)
    loaded.__setstate__(pickle.loads(pickle.dumps(old)))
    selector._nested[None] = loaded
    for r in (1, 2, 3):
        assert loaded.models[r].features == pipelines[r]["NRRLS"].features
    assert loaded.column_orders.tolist() == nested.column_orders.tolist()
    for x in rows[50:]:
        _assert_outputs_match(selector, pipelines, x)


# ------------------------------------------------- the interfaces the selector works through


def _learnt_model(**params) -> NRRLS:
    model = NRRLS(**params)
    rows, labels = _stream(n_samples=60, classes=("a", "b", "c"), seed=13)
    for x, y in zip(rows, labels):
        model.learn_one(x, y)
    return model


def test_permute_columns_renumbers_the_index_and_the_statistics():
    model = _learnt_model()
    reference = pickle.loads(pickle.dumps(model))
    x = {"x0": 0.3, "x1": 0.7, "x2": 0.1, "late": 0.5, "later": 0.9}
    before = model.decision_one(x)
    dim = model.statistics.dim
    order = np.array([0, *range(dim - 1, 0, -1)])  # the features in reverse
    model.permute_columns(order)
    assert model.features == reference.features[::-1]
    for c in range(model.statistics.n_classes):
        moved = symmetrize(model.statistics.scatter(c))
        assert np.array_equal(
            moved, symmetrize(reference.statistics.scatter(c))[np.ix_(order, order)]
        )
    after = model.decision_one(x)  # the same system, its columns in another order
    assert list(after) == list(before)
    assert np.allclose(list(after.values()), list(before.values()), rtol=1e-9, atol=1e-12)
    assert model.encode(x)[1:].tolist() == reference.encode(x)[1:].tolist()[::-1]
    with pytest.raises(ValueError, match="column 0"):
        model.permute_columns(np.arange(dim)[::-1])
    with pytest.raises(ValueError, match="permutation"):
        model.permute_columns(np.zeros(dim, dtype=np.intp))
    assert model.features == reference.features[::-1]  # a refused permutation changes nothing


@pytest.mark.parametrize("params", [{}, {"intercept": False, "forgetting": 0.98}])
def test_restricted_is_a_model_of_those_features_only(params):
    model = _learnt_model(**params)
    features = ["late", "x2", "x0"]
    restricted = model.restricted(features)
    assert restricted.features == tuple(features)
    assert restricted.n_samples == model.n_samples
    assert [getattr(restricted, name) for name in params] == list(params.values())
    alone = NRRLS(**params)  # the same samples, only those features
    rows, labels = _stream(n_samples=60, classes=("a", "b", "c"), seed=13)
    for x, y in zip(rows, labels):
        alone.learn_one({f: v for f, v in x.items() if f in features}, y)
    assert alone.features != restricted.features  # (it saw them in another order)
    position = [0] + [1 + alone.features.index(f) for f in features]
    for c in range(model.statistics.n_classes):
        mine = symmetrize(restricted.statistics.scatter(c))
        theirs = symmetrize(alone.statistics.scatter(c))[np.ix_(position, position)]
        assert np.allclose(mine, theirs, rtol=1e-12, atol=1e-300)
    x = rows[0]
    mine, theirs = restricted.decision_one(x), alone.decision_one(x)
    assert np.allclose(list(mine.values()), list(theirs.values()), rtol=1e-8)
    masses = model.n_samples
    restricted.learn_one(x, labels[0])  # it goes on learning on its own
    assert model.n_samples == masses and restricted.n_samples != masses


def test_new_solver_has_the_models_tuning_and_no_state():
    model = _learnt_model()
    model.weight_solver.stale_min_dim = 7
    model.weight_solver.class_stale_min_dim = 5
    solver = model.new_solver()
    assert solver is not model.weight_solver
    assert (solver.stale_min_dim, solver.class_stale_min_dim) == (7, 5)
    assert solver.stale is None and solver.pending == [] and not solver.primed
    assert model.column_namer()(1) == f"feature {model.features[0]!r}"


def test_nested_orders_learn_a_zero_weight_as_the_pipelines_do():
    """A sample of weight 0 (as AutoNRRLS may pass it) is validated, not learnt: every order's
    cached solution and solver state stay, as the pipeline's, on the stale-factor path."""
    from river_nrrls._orders import NestedOrders

    rows, labels = _stream(n_samples=120, seed=6)
    nested = NestedOrders((1, 2, 3), MEAN3, NRRLS())
    for model in nested.models.values():
        model.weight_solver.stale_min_dim = 10
    pipelines = {r: _tuned(MEAN3.clone({"degree": r}) | NRRLS(), 10) for r in (1, 2, 3)}
    for i, (x, y) in enumerate(zip(rows, labels)):
        solution = nested.solve()
        if solution.labels:
            outputs = nested.outputs(solution, nested.vector(nested.expand(x).values))
            for q, r in enumerate((1, 2, 3)):
                expected = pipelines[r]["NRRLS"].decision_one(
                    pipelines[r]["PolynomialExtender"].transform_one(x)
                )
                assert outputs[q].tolist() == list(expected.values()), (i, r)
        w = (1.0, 0.0, 0.5)[i % 3]
        nested.learn(nested.expand(x), y, w)
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y, w=w)
    assert sum(solver.counters["stale"] for solver in nested.solvers.values()) > 50
