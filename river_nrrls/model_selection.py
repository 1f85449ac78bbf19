"""Online choice of the polynomial order r: every order raced prequentially, from one model's
statistics when the classifier is NRRLS."""

from __future__ import annotations

import collections
import copy
import typing

import numpy as np
import pandas as pd
from river import base, compose, metrics

from ._checks import check_label, check_real
from ._frames import as_frame
from ._locking import OneCallAtATime
from ._orders import BatchExpansion, NestedOrders, NestedSolution, label_of, shares_statistics
from ._race import (
    BlockClock,
    check_grid,
    check_orders,
    check_positive,
    leader,
    score_values,
    update_score,
)
from ._rows import batch_samples, frame_samples, label_series, probability_frame, row_error
from .nrrls import NRRLS
from .poly import PolynomialExtender

__all__ = ["PolynomialOrderSelector"]


class _SharedRace(typing.NamedTuple):
    """The shared-statistics race's fixed layout (`PolynomialOrderSelector._race`)."""

    slots: tuple  # (forgetting, position of the order) of every candidate, in their order
    learning_order: tuple  # the forgetting factors' models, the least forgetting first


def _check_block(block: typing.Any) -> int:
    return check_positive("block", block)


def _check_grid(grid: typing.Any, classifier: base.Classifier) -> tuple[float, ...] | None:
    """The forgetting factors of ``forgetting_grid``, decreasing (None: no grid)."""
    if grid is None:
        return None
    factors = check_grid(grid)
    if "forgetting" not in classifier._get_params():
        raise ValueError(
            f"forgetting_grid needs a classifier with a forgetting parameter, such as NRRLS; "
            f"{type(classifier).__name__} has none"
        )
    return factors


class PolynomialOrderSelector(OneCallAtATime, base.MiniBatchClassifier):
    """Choose the polynomial order r online: every order raced on prequential G-mean.

    The NR-RLS paper reports results for RM orders r = 1..6 but does not say how r was chosen
    per data set. This classifier makes the choice online, on the training stream only: it runs
    the model ``PolynomialExtender(degree=r) | classifier`` of every order r, and before every
    model learns a sample it predicts it, which updates that order's copy of ``metric``
    (prequential, or "test-then-train", evaluation: no sample is scored by a model that has
    learnt it). Predictions come from the order with the best score so far; ties go to the
    lowest order, so the simplest model is kept until a higher order is strictly better (and the
    lowest order answers before anything has been scored).

    This is greedy racing, as in `river.model_selection.GreedyRegressor`: every order
    learns every sample, so all scores are measured on the same samples. river has no greedy
    classifier; its bandit and successive-halving selectors train only some of the models on
    each sample, which makes their scores incomparable and starves the orders that start badly.

    **One expansion for all orders.** With the default classifier (an `NRRLS`, any parameters,
    ``solver="cholesky"``) the selector expands every sample ONCE, at the highest order: the
    expansions are nested (`PolynomialExtender.output_orders`), so every order's expansion is
    read off it, and every order's `NRRLS` learns it and is solved as its pipeline's would be
    (the same statistics, solver and solve path). Every order predicts exactly what an
    independent ``PolynomialExtender(degree=r) | NRRLS(...)`` predicts, on every sample: its
    weights, outputs and probabilities are the pipeline's to the bit (``river_nrrls/_orders.py``
    says why nothing weaker holds on badly conditioned orders;
    ``benchmarks/results/selector_exactness.md`` counts the differing predictions).
    The selector saves the expansions and the pipelines' overheads, not their solves: it costs
    a small multiple of the highest order's pipeline alone, below the independent pipelines of
    every order (``benchmarks/results/selector.md`` measures both). Any other classifier (or
    ``solver="woodbury"``) runs one independent pipeline per order, whose cost is that of all
    the pipelines together.

    The selector's own prequential score is an honest estimate of the whole procedure; it is
    a little below the best order's score, which is known only in hindsight
    (``benchmarks/results/poly_conditioning.md`` compares them on the bundled data sets).

    **Block-prequential scoring** (``block = B > 1``) makes the race much cheaper: each order
    then scores the samples of a block of B consecutive samples with the weights it had
    *before* the block, so the weights are solved once per block instead of once per sample.
    (A selector that also predicts every sample, as a prequential evaluation of the selector
    does, still solves its best order at every sample.)
    The models still learn every sample as it comes (so `best_model` is always up to date)
    and the best order is still updated after every sample. It is still online and honest (no
    sample is scored by a model that has learnt it, and nothing outside the stream is looked
    at); the scores only lag by up to B - 1 samples, and the first block is not scored at all
    (there is no model yet). ``block=1`` is the plain prequential race.

    **Drifting streams.** ``classifier=NRRLS(forgetting=l)`` makes every order forget as its
    pipeline would. ``forgetting_grid`` races the forgetting factor too: every (order, factor)
    pair is a candidate, each factor with its own statistics (shared by the orders), so the
    cost grows with the number of factors. ``window`` scores the race on the last ``window``
    scored samples only, so that the race itself follows a drift (a score over the whole
    stream keeps crowning the candidate that was best before it).
    ``benchmarks/results/selector.md`` measures both on drifting imbalanced streams.

    **Threads.** Every public call holds the selector's lock across the whole step, its
    models' calls included: threads sharing a selector take turns, and a pickle, copy or
    clone of it is a state that existed (every model, score and block of the same sample).
    With independent pipelines, `pipelines` and `best_model` are the selector's own: a thread
    calling them directly is not held by the selector's lock.

    Parameters
    ----------
    orders
        The candidate orders, distinct positive ints.
    extender
        Template of the expansion; each order uses a clone with ``degree=r``. Defaults to
        ``PolynomialExtender()`` (Toh's reduced model with the sum, as in the paper). Pass
        ``PolynomialExtender(aggregate="mean", n_features=l)`` for the better-conditioned variant.
    classifier
        Template of the classifier. Defaults to ``NRRLS()``.
    metric
        Template of the classification metric that ranks the candidates; each uses a clone.
        Defaults to `river.metrics.GeometricMean`, the paper's measure. A metric that
        needs probabilities (``requires_labels`` false) is fed ``predict_proba_one``.
    block
        Size of the scoring blocks, a positive int: 1 (default) scores every sample with the
        weights learnt up to the previous sample; B > 1 scores it with the weights learnt up to
        the start of its block of B samples (see above).
    forgetting_grid
        Forgetting factors in (0, 1] to race with the orders (the classifier's ``forgetting``
        is then replaced by each of them), or None (default): no grid. Needs a classifier with a
        ``forgetting`` parameter. Ties go to the lower order, then to the larger factor.
    window
        Score the race on the last ``window`` scored samples only (a positive int), or on every
        sample (None, default).

    Attributes
    ----------
    scores
        ``{candidate: metric}``: every candidate's prequential score on the samples learnt so
        far (the last ``window`` with a window). The candidates are the orders, or
        ``(order, forgetting)`` pairs with a ``forgetting_grid``.

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

    The forgetting factor raced with the order, on the last 100 scored samples (Bupa does not
    drift: no forgetting wins):

    >>> model = PolynomialOrderSelector(orders=(1, 2, 3), forgetting_grid=(1.0, 0.99), window=100)
    >>> for x, y in bupa:
    ...     model.learn_one(x, y)
    >>> model.best_order, model.best_forgetting
    (3, 1.0)
    >>> {key: round(float(score.get()), 3) for key, score in model.scores.items() if key[0] == 3}
    {(3, 1.0): 0.693, (3, 0.99): 0.683}

    `best_model` is the chosen order's pipeline, a copy of that order's model:

    >>> model.best_model["PolynomialExtender"].degree, model.best_model["NRRLS"].forgetting
    (3, 1.0)

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
        forgetting_grid: tuple[float, ...] | None = None,
        window: int | None = None,
    ):
        self.orders = orders
        self.extender = extender
        self.classifier = classifier
        self.metric = metric
        self.block = block
        self.forgetting_grid = forgetting_grid
        self.window = window
        self._orders = check_orders(orders)
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
        self._forgettings = _check_grid(forgetting_grid, self._classifier)
        self._window = None if window is None else check_positive("window", window)
        self._init_state()
        # One call at a time (`OneCallAtATime`). The models inside have their own locks, always
        # taken after this one (they never call the selector), so the order never inverts
        # while they are private to the selector (with shared statistics they are; independent
        # pipelines are handed out by `pipelines`, but a call on one takes its lock alone).
        self._new_lock()

    def _init_state(self) -> None:
        # Candidates: the orders, or (order, forgetting) pairs with a grid; ties go to the
        # first, so the order increases and, for one order, the forgetting decreases.
        grid = self._forgettings
        self._candidates: list = (
            list(self._orders)
            if grid is None
            else [(order, forgetting) for order in self._orders for forgetting in grid]
        )
        self._shared = shares_statistics(self._classifier)
        # Shared statistics: one NestedOrders per forgetting factor (the most demanding range,
        # lambda = 1, first). Otherwise one independent pipeline per candidate.
        self._nested: dict[float | None, NestedOrders] = {}
        self._pipelines: dict = {}
        for forgetting in [None] if grid is None else grid:
            classifier = self._classifier_of(forgetting)
            if self._shared:
                # (an NRRLS: `shares_statistics`)
                nrrls = typing.cast(NRRLS, classifier)
                self._nested[forgetting] = NestedOrders(self._orders, self._extender, nrrls)
            else:
                for order in self._orders:
                    self._pipelines[self._key(order, forgetting)] = compose.Pipeline(
                        self._extender.clone({"degree": order}), classifier.clone()
                    )
        self._scores: dict = {key: self._metric.clone() for key in self._candidates}
        self._recent: dict = {key: collections.deque() for key in self._candidates}
        self._best = self._candidates[0]
        # Block-prequential scoring: the frozen scorers (copies of the pipelines, or the
        # weights of every order) taken at the start of the current block, and the number of
        # samples learnt since then.
        self._scorers: dict | None = None
        self._block_clock = BlockClock(self._block)
        self._shared_race: _SharedRace | None = None  # see `_race`

    def __getstate__(self) -> dict:
        # The race's layout is derived from the parameters (a cache, built at the first learnt
        # sample): left out, so that a pickle is the same whether or not it was built, and a
        # refused call, which may build it before its sample is refused, changes nothing.
        state = super().__getstate__()  # (under the lock: `OneCallAtATime`)
        state.pop("_shared_race", None)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        if "scores" in state:  # pickled when the scores were a plain attribute
            state["_scores"] = state.pop("scores")
        super().__setstate__(state)

    def _classifier_of(self, forgetting: float | None) -> base.Classifier:
        if forgetting is None:
            return self._classifier
        return self._classifier.clone({"forgetting": forgetting})

    def _key(self, order: int, forgetting: float | None):
        return order if forgetting is None else (order, forgetting)

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
        yield {"orders": (1, 2), "forgetting_grid": (1.0, 0.99), "window": 50}
        yield {"orders": (1, 2), "classifier": NRRLS(solver="woodbury"), "block": 2}

    def _unit_test_skips(self):
        # With shared statistics and block=1, learn_many scores a batch as its orders'
        # pipelines do (predict_many, then learn_many: every row with the weights before the
        # batch), not row by row as the learn_one loop does: river's check of the loop does not
        # apply (the batch path is tested against those pipelines in
        # tests/test_order_selector_batches.py).
        if self._shared and self._block == 1:
            return {"check_learn_many_matches_learn_one"}
        return set()

    @property
    def _multiclass(self) -> bool:
        return bool(getattr(self._classifier, "_multiclass", False))

    @property
    def scores(self) -> dict:
        """``{candidate: metric}`` (see Attributes): a copy, as the race stands between two
        samples."""
        with self._lock:
            return copy.deepcopy(self._scores)

    @property
    def best_order(self) -> int:
        """The order of the candidate that currently makes the predictions."""
        with self._lock:
            return self._split(self._best)[0]

    @property
    def best_forgetting(self) -> float | None:
        """The forgetting factor of that candidate: from ``forgetting_grid`` if given, else
        the classifier's own (None for a classifier without one)."""
        with self._lock:
            if self._forgettings is not None:
                return self._best[1]
        return getattr(self._classifier, "forgetting", None)

    @property
    def pipelines(self) -> dict:
        """``{candidate: pipeline}``, candidates in increasing order (see `scores`).

        With shared statistics these are new pipelines holding a copy of every order's model
        (the statistics its independent pipeline has learnt; its solver starts again, its
        first solve direct): learning with them does not change the selector.

        """
        with self._lock:
            if not self._shared:
                return dict(self._pipelines)
            return {key: self._materialise(key) for key in self._candidates}

    @property
    def best_model(self) -> compose.Pipeline:
        """The pipeline of the best candidate (a new one with shared statistics, see
        `pipelines`)."""
        with self._lock:
            if not self._shared:
                return self._pipelines[self._best]
            return self._materialise(self._best)

    def _split(self, key) -> tuple[int, float | None]:
        return (key, None) if self._forgettings is None else key

    def _materialise(self, key) -> compose.Pipeline:
        order, forgetting = self._split(key)
        return self._nested[forgetting].pipeline(order)

    # ---------------------------------------------------------------------------- learning

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Score every candidate on ``(x, y)``, then let every model learn it.

        A sample weight ``w`` (>= 0, river's importance weight) is passed to every model
        (which routes it to the steps that accept it, such as `NRRLS`) and weighs the sample in
        every candidate's score, so a sample of weight ``w`` counts as ``w`` samples in the
        race. ``w = 0`` validates the sample and changes nothing else.

        A sample that a model refuses (a bad x or y, or, for `NRRLS`, values whose statistics
        would leave its range) changes nothing: every candidate predicts before any model
        learns, the models learn from the most demanding range down (the highest order, and
        no forgetting first: an order's polynomial features include those of the orders
        below, and forgetting only shrinks the statistics), and the scores move only once
        every model has learnt.

        """
        with self._lock:  # the whole step: every model, score and block (see __init__)
            self._learn_one(x, y, w)

    def _learn_one(self, x: dict, y: typing.Hashable, w: float) -> None:
        weight = check_real("w", w, low=0.0)
        check_label(y)  # unhashable: TypeError; missing (None, NaN, pd.NA): ValueError
        if self._shared:
            predictions = self._score_shared(x, y, weight)
        else:
            predictions = self._score_pipelines(x, y, weight)
        if predictions is not None:
            self._record(y, predictions, weight)

    def _record(self, y: typing.Hashable, predictions: list, weight: float) -> None:
        """Every candidate's prediction of a sample of class ``y`` into its score, and the new
        leader."""
        extra = {} if weight == 1.0 else {"w": weight}
        for key, y_pred in zip(self._candidates, predictions):
            if y_pred is not None and y_pred != {}:
                self._update_score(key, y, y_pred, extra)
        # The highest score (lowest if smaller is better), ties to the first candidate. One
        # get() each: river's GeometricMean.get() is not cheap.
        candidates = self._candidates
        values = score_values([self._scores[key] for key in candidates])
        self._best = leader(candidates, values, self._metric.bigger_is_better)

    def _update_score(self, key, y, y_pred, extra: dict) -> None:
        update_score(self._scores[key], self._recent[key], self._window, y, y_pred, extra)

    def _score_pipelines(self, x: dict, y: typing.Hashable, weight: float) -> list | None:
        """Independent pipelines: every candidate predicts, then (w > 0) learns."""
        use_labels = self._metric.requires_labels
        scorers = self._pipelines
        if self._block > 1:
            # A new block starts from frozen copies of the pipelines as they are now.
            frozen = self._scorers
            if self._block_clock.starts() or frozen is None:
                frozen = {key: copy.deepcopy(model) for key, model in self._pipelines.items()}
            scorers = frozen
        self._check_learnable(x, y, weight)
        # Predict with every candidate first: a bad x raises here, before any state changed.
        predictions = [
            scorers[key].predict_one(x) if use_labels else scorers[key].predict_proba_one(x)
            for key in self._candidates
        ]
        if weight == 0.0:
            return None
        extra = {} if weight == 1.0 else {"w": weight}
        for key in self._learning_order():
            self._pipelines[key].learn_one(x, y, **extra)
        self._advance_block(scorers)
        return predictions

    def _check_learnable(self, x: dict, y: typing.Hashable, weight: float) -> None:
        """Refuse what the most demanding pipeline's `NRRLS` would refuse to learn (its range,
        ``max_size``) before any pipeline predicts: a prediction caches an NRRLS's weights,
        which a refused call must not leave behind. Other classifiers refuse as they learn."""
        extender, classifier = self._pipelines[self._learning_order()[0]].steps.values()
        if isinstance(classifier, NRRLS):
            classifier.check_learnable(extender.transform_one(x), y, weight)

    def _learning_order(self) -> list:
        """The candidates from the most demanding range down: highest order, then the least
        forgetting."""
        return sorted(self._candidates, key=lambda key: self._demand(key), reverse=True)

    def _demand(self, key) -> tuple:
        order, forgetting = self._split(key)
        return (order, 1.0 if forgetting is None else forgetting)

    def _advance_block(self, scorers) -> None:
        if self._block > 1:
            self._scorers = scorers
            self._block_clock.advance()

    def _score_shared(self, x: dict, y: typing.Hashable, weight: float) -> list | None:
        """Shared statistics: every order of every forgetting factor predicts from one
        solution of its statistics, then (w > 0) the highest order learns."""
        nested_models = self._nested
        solutions = self._scorers
        if self._block == 1 or self._block_clock.starts() or solutions is None:
            solutions = {forgetting: nested.solve() for forgetting, nested in nested_models.items()}
        # One expansion for all: a bad x raises here, before any state changed.
        some = next(iter(nested_models.values()))
        expansion = some.expand(x)
        by_model = {}
        for forgetting, nested in nested_models.items():
            solution = solutions[forgetting]
            by_model[forgetting] = self._predict_orders(nested, solution, expansion.values)
        if weight == 0.0:
            return None
        race = self._race()
        for forgetting in race.learning_order:
            nested_models[forgetting].learn(expansion, y, weight)
        self._advance_block(solutions)
        return [by_model[forgetting][q] for forgetting, q in race.slots]

    def _race(self) -> _SharedRace:
        """Where every candidate's prediction comes from, and the order in which the shared
        models learn (derived from the parameters; built at the first use, not pickled)."""
        race = self.__dict__.get("_shared_race")  # (absent from pickles: see __getstate__)
        if race is None:
            positions = {order: q for q, order in enumerate(self._orders)}
            slots = []
            for key in self._candidates:
                order, forgetting = self._split(key)
                slots.append((forgetting, positions[order]))
            # the least forgetting first (lambda = 1, or None: the classifier's own)
            learning = sorted(self._nested, key=lambda f: 1.0 if f is None else f)[::-1]
            race = self._shared_race = _SharedRace(tuple(slots), tuple(learning))
        return race

    def _predict_orders(self, nested: NestedOrders, solution: NestedSolution, expanded: dict):
        """Every order's prediction (label, or probabilities) from one solution."""
        return nested.predictions(solution, expanded, self._metric.requires_labels)

    # --------------------------------------------------------------------------- inference

    def _best_outputs(self, x: dict) -> tuple[NestedOrders, tuple, np.ndarray | None]:
        """The best candidate's classes and outputs for ``x`` (shared statistics)."""
        order, forgetting = self._split(self._best)
        nested = self._nested[forgetting]
        return (nested, *nested.order_outputs(x, order))

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:  # type: ignore[override]  # (river's **kwargs: unused here, a misspelt keyword raises)
        """The probabilities of the best order so far: what its pipeline (`best_model`) would
        give, computed from the shared statistics when the classifier is an NRRLS."""
        with self._lock:
            return self._predict_proba_one(x)

    def _predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:
        if not self._shared:
            return self._pipelines[self._best].predict_proba_one(x)
        nested, labels, outputs = self._best_outputs(x)
        return {} if outputs is None else nested.probabilities(labels, outputs)

    def predict_one(self, x: dict) -> typing.Hashable | None:  # type: ignore[override]  # (river's **kwargs: unused here, a misspelt keyword raises)
        """The prediction of the best order so far: what its pipeline (`best_model`) would
        predict, computed from the shared statistics when the classifier is an NRRLS."""
        with self._lock:
            return self._predict_one(x)

    def _predict_one(self, x: dict) -> typing.Hashable | None:
        if not self._shared:
            return self._pipelines[self._best].predict_one(x)
        _, labels, outputs = self._best_outputs(x)
        return None if outputs is None else label_of(labels, outputs)

    # ------------------------------------------------------------------------ mini-batches

    def learn_many(self, X: pd.DataFrame, y: pd.Series) -> None:
        """Learn the rows of ``X`` and the labels of ``y``, paired by position, the race
        included.

        With an `NRRLS` classifier (shared statistics) and ``block=1``, the batch is what the
        orders' pipelines do with it, ``predict_many`` then ``learn_many``: every candidate
        scores every row with the weights it had before the batch (the race moving row by row,
        one solve per order for the whole batch), then every order's NRRLS learns the batch in
        one update of its statistics, from one ``transform_many`` of the highest order (so a
        missing value is a 0 of its column, as in ``PolynomialExtender.transform_many``). Every
        order's statistics are then its pipeline's after ``learn_many``, to the bit. Otherwise
        (``block > 1``, or independent pipelines) it is the `learn_one` loop over the rows, a
        missing value of ``X`` (NaN, None, ``pd.NA``) being a missing feature.

        A refused batch changes nothing: the pairing (a ``y`` of another length, or a pandas
        ``y`` whose index is not ``X``'s), every label and every row's values are checked
        before anything is learnt (errors name the row); what a model refuses later (its
        statistics would leave their range, or ``max_size``) rolls the batch back to the
        selector as it was (its solvers, a cache, then start again).

        """
        batch = batch_samples(X, y)
        expand = self._validator().transform_one
        for x, name in zip(batch.rows, batch.names):
            self._row_call(expand, x, name)  # the values
        with self._lock:  # the whole batch: a snapshot holds all of it or none
            if not batch.labels:
                return
            if self._shared and self._block == 1:
                expanded = next(iter(self._nested.values())).expand_many(as_frame(X))
                if expanded is not None:  # (refused, if at all, before anything changes)
                    self._learn_batch(expanded, y, batch)
                    return
            before = self._state_copy()
            try:
                for x, label, name in zip(batch.rows, batch.labels, batch.names):
                    self._row_call(self._learn_one, x, name, label, 1.0)
            except BaseException:
                self._restore(before)
                raise

    def _learn_batch(self, expanded: BatchExpansion, y: typing.Any, batch) -> None:
        """Shared statistics, ``block=1``: the batch as the orders' pipelines learn it with
        ``predict_many`` then ``learn_many``, from its expansion at the highest order.

        Every candidate scores every row with the weights it had before the batch (one solve
        per order, not one per row); then every order's NRRLS learns its columns of the
        expansion by its own ``learn_many`` (one batch update of its statistics), as its
        pipeline's does, from the most demanding range down (the highest order, the least
        forgetting first: a batch is refused, if at all, by the first, before any model or
        score changed); then the race moves row by row.

        """
        nested_models = self._nested
        labels = pd.Series(batch.labels, index=expanded.frame.index, name=getattr(y, "name", None))
        use_labels = self._metric.requires_labels
        by_model = {
            forgetting: nested.batch_predictions(nested.solve(), expanded, use_labels)
            for forgetting, nested in nested_models.items()
        }
        race = self._race()
        for forgetting in race.learning_order:
            nested_models[forgetting].learn_many(expanded, labels)
        for i, label in enumerate(batch.labels):
            self._record(label, [by_model[f][i][q] for f, q in race.slots], 1.0)

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        """`predict_one` of every row of ``X``, as a Series in ``X``'s backend."""
        rows, names = frame_samples(X)
        with self._lock:
            labels = [self._row_call(self._predict_one, x, n) for x, n in zip(rows, names)]
        return label_series(labels, X)

    def predict_proba_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """`predict_proba_one` of every row of ``X``: one column per class, in ``X``'s
        backend."""
        rows, names = frame_samples(X)
        with self._lock:
            probas = [self._row_call(self._predict_proba_one, x, n) for x, n in zip(rows, names)]
        return probability_frame(probas, X)

    def _validator(self) -> PolynomialExtender:
        """The highest order's extender, whose expansion checks a row's values as learn_one's."""
        return self._extender.clone({"degree": self._orders[-1]})

    @staticmethod
    def _row_call(method: typing.Callable, x: dict, name: typing.Any, *args) -> typing.Any:
        """``method(x, *args)``, its ValueError or TypeError naming the row."""
        try:
            return method(x, *args)
        except (TypeError, ValueError) as error:
            raise row_error(error, name) from error
