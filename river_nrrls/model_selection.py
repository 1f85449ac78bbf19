"""Online choice of the polynomial order r: one pipeline per order, raced prequentially."""

from __future__ import annotations

import copy
import numbers
import typing

import numpy as np
from river import base, compose, metrics

from ._checks import check_label, check_real
from .nrrls import NRRLS
from .poly import PolynomialExtender

__all__ = ["PolynomialOrderSelector"]


def _check_orders(orders: typing.Any) -> tuple[int, ...]:
    if not isinstance(orders, (tuple, list)) or not orders:
        raise ValueError(f"orders must be a non-empty tuple of positive ints, got {orders!r}")
    for order in orders:
        if isinstance(order, (bool, np.bool_)) or not isinstance(order, numbers.Integral):
            raise ValueError(f"orders must hold positive ints, got {order!r}")
        if order < 1:
            raise ValueError(f"orders must hold positive ints, got {order!r}")
    if len(set(orders)) != len(orders):
        raise ValueError(f"orders must be distinct, got {orders!r}")
    return tuple(sorted(int(order) for order in orders))


def _check_block(block: typing.Any) -> int:
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, numbers.Integral) or block < 1:
        raise ValueError(f"block must be a positive int, got {block!r}")
    return int(block)


class PolynomialOrderSelector(base.Classifier):
    """Choose the polynomial order r online: one pipeline per order, raced on prequential G-mean.

    The NR-RLS paper reports results for RM orders r = 1..6 but does not say how r was chosen
    per data set. This classifier makes the choice online, on the training stream only: it runs
    one pipeline ``PolynomialExtender(degree=r) | classifier`` per order r, and before every
    pipeline learns a sample it predicts it, which updates that order's copy of ``metric``
    (prequential, or "test-then-train", evaluation: no sample is scored by a model that has
    learnt it). Predictions come from the order with the best score so far; ties go to the
    lowest order, so the simplest model is kept until a higher order is strictly better (and the
    lowest order answers before anything has been scored).

    This is greedy racing, as in `river.model_selection.GreedyRegressor`: every order
    learns every sample, so all scores are measured on the same samples. river has no greedy
    classifier; its bandit and successive-halving selectors train only some of the models on
    each sample, which makes their scores incomparable and starves the orders that start badly.
    The cost is that of all the pipelines together (dominated by the highest order).

    The selector's own prequential score is an honest estimate of the whole procedure; it is
    a little below the best order's score, which is known only in hindsight (0.002 to 0.027 of
    G-mean below it on six bundled data sets, ``benchmarks/results/poly_conditioning.md``).

    **Block-prequential scoring** (``block = B > 1``) makes the race much cheaper for NR-RLS at
    high orders, where every prediction after a learnt sample costs a Cholesky factorisation
    (O(K^3) for K columns): each order then scores the samples of a block of B consecutive
    samples with a frozen copy of itself taken at the start of the block, that is with the
    weights it had *before* the block, so its weights are solved once per block instead of once
    per sample. The pipelines themselves still learn every sample as it comes (so
    `best_model` is always up to date) and the best order is still updated after every
    sample. It is still online and honest (no sample is scored by a model that has learnt it,
    and nothing outside the stream is looked at); the scores only lag by up to B - 1 samples,
    and the first block is not scored at all (there is no model yet). ``block=1`` is the plain
    prequential race.

    Parameters
    ----------
    orders
        The candidate orders, distinct positive ints.
    extender
        Template of the expansion; each order uses a clone with ``degree=r``. Defaults to
        ``PolynomialExtender()`` (Toh's reduced model with the sum, as in the paper). Pass
        ``PolynomialExtender(aggregate="mean", n_features=l)`` for the better-conditioned variant.
    classifier
        Template of the classifier; each order uses a fresh clone. Defaults to ``NRRLS()``.
    metric
        Template of the classification metric that ranks the orders; each order uses a clone.
        Defaults to `river.metrics.GeometricMean`, the paper's measure. A metric that
        needs probabilities (``requires_labels`` false) is fed ``predict_proba_one``.
    block
        Size of the scoring blocks, a positive int: 1 (default) scores every sample with the
        weights learnt up to the previous sample; B > 1 scores it with the weights learnt up to
        the start of its block of B samples (see above).

    Attributes
    ----------
    pipelines
        ``{order: pipeline}``, in increasing order.
    scores
        ``{order: metric}``: every order's prequential score on the samples learnt so far.

    Examples
    --------

    Bupa's file groups the classes, so the examples shuffle it once (deterministically):

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import PolynomialExtender, PolynomialOrderSelector, datasets

    >>> bupa = list(stream.shuffle(datasets.Bupa(), buffer_size=345, seed=42))
    >>> model = PolynomialOrderSelector(orders=(1, 2, 3))
    >>> evaluate.progressive_val_score(bupa, model, metrics.GeometricMean())
    GeometricMean: 64.23%
    >>> model.best_order
    3
    >>> {order: round(float(score.get()), 3) for order, score in model.scores.items()}
    {1: 0.608, 2: 0.659, 3: 0.665}

    The better-conditioned variant races ``PolynomialExtender(aggregate="mean", n_features=l)``:

    >>> dataset = datasets.Bupa()
    >>> model = PolynomialOrderSelector(
    ...     orders=(1, 2, 3),
    ...     extender=PolynomialExtender(aggregate="mean", n_features=dataset.n_features),
    ... )
    >>> model.pipelines[3]["PolynomialExtender"].transform_one({"a": 0.5, "b": 0.25})["mean^3"]
    0.001953125

    Block-prequential scoring solves the weights of every order once per block of 20 samples
    instead of once per sample; the race ends on the same order here:

    >>> model = PolynomialOrderSelector(orders=(1, 2, 3), block=20)
    >>> for x, y in bupa:
    ...     model.learn_one(x, y)
    >>> model.best_order
    3

    References
    ----------
    [^1]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)
    [^2]: Toh, K.-A., Tran, Q.-L. and Srinivasan, D. (2004). Benchmarking a reduced multivariate
        polynomial pattern classifier. IEEE Transactions on Pattern Analysis and Machine
        Intelligence, 26(6), 740-755.

    """

    def __init__(
        self,
        orders: tuple[int, ...] = (1, 2, 3, 4, 5, 6),
        extender: PolynomialExtender | None = None,
        classifier: base.Classifier | None = None,
        metric: metrics.base.ClassificationMetric | None = None,
        block: int = 1,
    ):
        self.orders = orders
        self.extender = extender
        self.classifier = classifier
        self.metric = metric
        self.block = block
        self._orders = _check_orders(orders)
        self._block = _check_block(block)
        self._extender = PolynomialExtender() if extender is None else extender
        self._classifier = NRRLS() if classifier is None else classifier
        self._metric = metrics.GeometricMean() if metric is None else metric
        if not isinstance(self._extender, PolynomialExtender):
            raise TypeError(
                f"extender must be a river_nrrls.PolynomialExtender, got {type(extender).__name__}"
            )
        if not isinstance(self._classifier, base.Classifier):
            raise TypeError(f"classifier must be a river Classifier, got {classifier!r}")
        if not isinstance(self._metric, metrics.base.ClassificationMetric):
            raise TypeError(f"metric must be a river ClassificationMetric, got {metric!r}")
        if not self._metric.works_with(self._classifier):
            raise ValueError(f"{metric!r} cannot evaluate {type(self._classifier).__name__}")
        self._init_state()

    def _init_state(self) -> None:
        self.pipelines: dict[int, compose.Pipeline] = {
            order: compose.Pipeline(
                self._extender.clone({"degree": order}), self._classifier.clone()
            )
            for order in self._orders
        }
        self.scores: dict[int, metrics.base.ClassificationMetric] = {
            order: self._metric.clone() for order in self._orders
        }
        self._best_order = self._orders[0]
        # Block-prequential scoring: frozen copies of the pipelines (taken at the start of the
        # current block) and the number of samples learnt since then.
        self._scorers: dict[int, compose.Pipeline] | None = None
        self._block_position = 0

    @classmethod
    def _unit_test_params(cls):
        yield {"orders": (1, 2)}
        # (orders above 2 on river's raw, unscaled ImageSegments make NRRLS's systems so badly
        # conditioned that its fallback solver dominates the suite's runtime)
        yield {
            "orders": (2, 1),
            "extender": PolynomialExtender(aggregate="mean", n_features=9),
            "classifier": NRRLS(forgetting=0.99),
            "metric": metrics.BalancedAccuracy(),
        }
        yield {"orders": (1, 2), "block": 3}

    @property
    def _multiclass(self) -> bool:
        return bool(getattr(self._classifier, "_multiclass", False))

    @property
    def best_order(self) -> int:
        """The order whose pipeline currently makes the predictions."""
        return self._best_order

    @property
    def best_model(self) -> compose.Pipeline:
        """The pipeline of `best_order`."""
        return self.pipelines[self._best_order]

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Score every order on ``(x, y)``, then let every pipeline learn it.

        A sample weight ``w`` (>= 0, river's importance weight) is passed to every pipeline
        (which routes it to the steps that accept it, such as `NRRLS`) and weighs the sample in
        every order's score, so a sample of weight ``w`` counts as ``w`` samples in the race.
        ``w = 0`` validates the sample and changes nothing else.

        A sample that a pipeline refuses (a bad x or y, or, for `NRRLS`, values whose statistics
        would leave its range) changes nothing: every order predicts before any learns, the
        pipelines learn from the highest order down (an order's polynomial features include
        those of the orders below, so when the highest accepts a sample's range, they all do),
        and the scores move only once every pipeline has learnt.

        """
        weight = check_real("w", w, low=0.0)
        check_label(y)  # unhashable: TypeError; missing (None, NaN, pd.NA): ValueError
        use_labels = self._metric.requires_labels
        scorers = self.pipelines
        if self._block > 1:
            # A new block starts from frozen copies of the pipelines as they are now.
            scorers = self._scorers
            if self._block_position == 0 or scorers is None:
                scorers = {order: copy.deepcopy(model) for order, model in self.pipelines.items()}
        # Predict with every order first: a bad x raises here, before any state has changed.
        predictions = [
            model.predict_one(x) if use_labels else model.predict_proba_one(x)
            for model in scorers.values()
        ]
        if weight == 0.0:
            return
        extra = {} if weight == 1.0 else {"w": weight}
        for order in sorted(self.pipelines, reverse=True):  # the most demanding range first
            self.pipelines[order].learn_one(x, y, **extra)
        if self._block > 1:
            self._scorers = scorers
            self._block_position = (self._block_position + 1) % self._block
        for order, y_pred in zip(self.pipelines, predictions):
            if y_pred is not None and y_pred != {}:
                self.scores[order].update(y, y_pred, **extra)
        # The highest score (lowest if smaller is better); strict comparison, so ties keep the
        # lower order. One get() per order: river's GeometricMean.get() is not cheap.
        sign = 1.0 if self._metric.bigger_is_better else -1.0
        best, best_value = self._orders[0], sign * self.scores[self._orders[0]].get()
        for order in self._orders[1:]:
            value = sign * self.scores[order].get()
            if value > best_value:
                best, best_value = order, value
        self._best_order = best

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:
        return self.best_model.predict_proba_one(x)

    def predict_one(self, x: dict) -> typing.Hashable | None:
        return self.best_model.predict_one(x)
