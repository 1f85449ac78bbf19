"""Every order of PolynomialOrderSelector predicts what its pipeline predicts, on wide real data.

The regression of issue 37's exactness defect: on 21 real inputs order 6 has 238 columns (the
pipelines' stale-factor solver) and its TER systems are so badly conditioned (diagonal entries
near 1e16 against the ridge 1e-4) that two solves differing only in their rounding predict
differently on some samples. The selector once solved every order from one factorisation of the
highest order's statistics, its columns grouped by order: its order 6 predicted another class
than the pipeline ``PolynomialExtender(6) | NRRLS()`` on 4 of Ionosphere's first 351 samples
(the first at sample 32) and 3 of SpectfHeart's (at 65), and its race picked another order than
the pipelines raced by hand. Now every order's outputs are its pipeline's to the bit (the same
statistics, solved by the same path: ``river_nrrls/_orders.py``): the tests compare them exactly,
and the predictions, probabilities, scores and best order, after every sample.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import leading_inputs, nonlinear_stream
from river import metrics

from river_nrrls import NRRLS, PolynomialExtender, PolynomialOrderSelector
from river_nrrls._orders import label_of

ORDERS = (1, 2, 3, 4, 5, 6)


def _race_side_by_side(stream, classifier=None, weights=None, orders=ORDERS) -> None:
    """The selector and the independent pipelines, prequential: before every sample every
    order's outputs, prediction and probabilities are its pipeline's (to the bit); after it the
    scores are those of the pipelines raced by hand, and so is the best order."""
    classifier = classifier or NRRLS()
    selector = PolynomialOrderSelector(orders=orders, classifier=classifier)
    pipelines = {r: PolynomialExtender(degree=r) | classifier.clone() for r in orders}
    by_hand = {r: metrics.GeometricMean() for r in orders}
    (nested,) = selector._nested.values()
    wide = False
    for i, (x, y) in enumerate(stream):
        solution = nested.solve()
        outputs = nested.outputs(solution, nested.vector(nested.expand(x).values))
        for q, r in enumerate(orders):
            pipeline = pipelines[r]
            expanded = pipeline["PolynomialExtender"].transform_one(x)
            expected = pipeline["NRRLS"].decision_one(expanded)
            prediction = pipeline.predict_one(x)
            if not solution.labels:
                assert expected == {} and prediction is None
                continue
            assert list(expected) == list(solution.labels)
            assert outputs[q].tolist() == list(expected.values()), (i, r)
            assert label_of(solution.labels, outputs[q]) == prediction, (i, r)
            probabilities = nested.probabilities(solution.labels, outputs[q])
            assert probabilities == pipeline.predict_proba_one(x), (i, r)
            by_hand[r].update(y, prediction, 1.0 if weights is None else weights[i % len(weights)])
        w = 1.0 if weights is None else weights[i % len(weights)]
        selector.learn_one(x, y, w=w)
        for pipeline in pipelines.values():
            pipeline.learn_one(x, y, w=w)
        values = {r: score.get() for r, score in by_hand.items()}
        assert {r: score.get() for r, score in selector.scores.items()} == values, i
        assert selector.best_order == min(values, key=lambda r: (-values[r], r)), i
        wide = wide or nested.sizes()[-1] >= 112
    assert wide  # the highest order was on the pipelines' stale-factor path


@pytest.mark.parametrize(
    ("name", "n_rows"),
    [("Ionosphere", 60), ("SpectfHeart", 70)],
)
def test_every_order_is_its_pipeline_on_wide_real_data(name, n_rows):
    """21 inputs: order 6 has 238 columns. Before the fix, order 6 predicted another class
    than its pipeline at Ionosphere's sample 32 and SpectfHeart's sample 65."""
    _race_side_by_side(leading_inputs(name, 21, n_rows))


def test_non_dyadic_weights_and_forgetting_on_wide_real_data():
    """Sample weights such as 0.3 round ``w x_i x_j`` by where the columns sit: one set of
    statistics for every order is not every pipeline's to the bit. Every order's own is."""
    _race_side_by_side(
        leading_inputs("Ionosphere", 21, 60), NRRLS(forgetting=0.995), weights=(1.0, 0.3, 2.7)
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "n_inputs", "n_rows"),
    [
        ("Spambase", 21, 1109),  # the reported set's shape: 21 inputs, 1,109 samples
        ("Ionosphere", 33, None),
        ("SpectfHeart", 21, None),
        ("Sonar", 21, None),
        ("Wdbc", 21, None),
        ("German", 21, None),
    ],
)
def test_every_order_is_its_pipeline_on_whole_wide_sets(name, n_inputs, n_rows):
    _race_side_by_side(leading_inputs(name, n_inputs, n_rows))


@pytest.mark.slow
def test_every_order_is_its_pipeline_on_a_long_stream():
    """3000 samples of 12 inputs: order 5 has 113 columns, order 6 135 (stale factors with
    their refreshes, thousands of conjugate-gradient solves)."""
    _race_side_by_side(nonlinear_stream(3000, 12), orders=(1, 3, 5, 6))


@pytest.mark.parametrize(
    "extender",
    [
        PolynomialExtender(),
        PolynomialExtender(aggregate="mean", n_features=4),
        PolynomialExtender(kind="full", include_bias=True),
        PolynomialExtender(include_bias=True),
    ],
    ids=["sum", "mean", "full-bias", "bias"],
)
def test_every_order_learns_the_dict_its_extender_gives(extender):
    """The sample each order's model learns is read off the highest order's expansion: the
    keys of the order's own expansion in its order, the same values to the bit."""
    from river_nrrls._orders import NestedOrders

    nested = NestedOrders((1, 2, 4), extender, NRRLS())
    rng = np.random.default_rng(1)
    for i in range(30):
        x = {f"x{j}": float(rng.normal()) for j in range(4) if rng.random() < 0.8}
        if i % 7 == 0:
            x["x1"] = None  # a missing value
        expansion = nested.expand(x)
        for order, sample in zip(nested.orders, nested._select(expansion)):
            expected = extender.clone({"degree": order}).transform_one(x)
            assert list(sample) == list(expected)
            assert [float(v).hex() for v in sample.values()] == [
                float(v).hex() for v in expected.values()
            ]
