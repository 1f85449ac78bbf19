"""AutoNRRLS: the best of a set of exact NR-RLS candidates on the stream at hand, raced online."""

from __future__ import annotations

import copy
import inspect
import typing

import numpy as np
import pandas as pd
from river import base, compose, metrics
from river.tree import HoeffdingTreeClassifier

from ._candidates import Candidate, PolynomialModels, Sample, TreePathModel, feature_map
from ._checks import check_label, check_real, sample_weights
from ._choice import PairedEvidence
from ._frames import as_series
from ._locking import OneCallAtATime
from ._memory import SizeBudget
from ._race import (
    BlockClock,
    ClassWindow,
    check_count,
    check_grid,
    check_orders,
    check_positive,
    leader,
    score_values,
)
from ._rows import batch_samples, frame_samples, label_series, probability_frame
from ._threads import one_blas_thread
from .nrrls import NRRLS
from .poly import PolynomialExtender
from .tree_paths import TreePathFeatures, tree_template

__all__ = ["AutoNRRLS", "Candidate"]

_PLAIN = frozenset((float, int))  # value types whose equality means equal tree-path features


#: ``orders=None``: the highest order is the largest (up to `MAX_DEFAULT_ORDER`) whose reduced
#: polynomial expansion of the first sample has at most this many columns (with the constant)
DEFAULT_ORDERS_WIDTH = 50
#: The race's window stretches back to at most this many times ``window`` samples to hold
#: ``window_per_class`` samples of every class (`ClassWindow`)
WINDOW_STRETCH = 20
MAX_DEFAULT_ORDER = 6


def default_orders(n_features: int) -> tuple[int, ...]:
    """The orders of ``orders=None`` for ``n_features`` inputs: 1, ..., R with R the highest
    order up to 6 whose expansion (Toh's reduced model, `PolynomialExtender`) has at most
    `DEFAULT_ORDERS_WIDTH` columns, and at least 2: 6 at 2 or 3 inputs, 3 at 8, 2 from 10 on."""
    names = {f"x{j}": 1.0 for j in range(max(n_features, 1))}
    layout = PolynomialExtender(degree=MAX_DEFAULT_ORDER).expand_with_layout(names).orders
    highest = 2
    for order in range(3, MAX_DEFAULT_ORDER + 1):
        if 1 + sum(o <= order for o in layout) <= DEFAULT_ORDERS_WIDTH:
            highest = order
    return tuple(range(1, highest + 1))


class CandidateRow(typing.NamedTuple):
    """One row of `AutoNRRLS.table`."""

    candidate: Candidate
    score: float
    solving: bool  # solved at every sample (False: lazy, scored block-prequentially)
    leader: bool


class AutoNRRLS(OneCallAtATime, base.MiniBatchClassifier):
    """The best of several exact NR-RLS models, chosen online: no parameter to tune.

    Which model of the package wins depends on the stream: polynomial features on smooth
    concepts, forgetting on drifting ones, features from a decision tree on rule-based
    concepts (thresholds). `AutoNRRLS` runs them all as **candidates**, each a feature map
    with a forgetting factor l, and predicts with the one that scored best on the recent
    stream:

    - ``"raw"``, ``"poly2"``, ``"poly3"``, ...: Toh's reduced polynomial expansion of order r
      (`PolynomialExtender`; order 1 is the raw features) then ``NRRLS(forgetting=l)``. Every
      sample is expanded once, at the highest order, and every order's NR-RLS learns its part
      of it and is solved as its pipeline's would be (as in `PolynomialOrderSelector`).
    - ``"tree"`` (``tree_paths=True``): `TreePathFeatures` (the raw features, a one-hot of the
      nodes on the sample's root-to-leaf path in a Hoeffding tree grown alongside, and that
      tree's probabilities) then ``NRRLS(forgetting=l)``; one tree for every factor, by default
      one that splits sooner than river's (``grace_period=50, delta=1e-5``: ``tree``).

    Every candidate's statistics are exact and learn every sample, so a candidate's
    predictions are those of its independent pipeline (``PolynomialExtender(r) |
    NRRLS(forgetting=l)``, or ``TreePathFeatures(tree=...) | NRRLS(forgetting=l)``). Labels may
    be of any hashable type, of mixed types too (a ``"1"`` after bools: a new class).

    **The race**: before a sample is learnt every candidate predicts it, which updates its
    copy of ``metric`` (prequential scoring: no sample is scored by a model that has learnt
    it) over a window of the recent stream, so the race follows a drift. The window is the
    last ``window`` scored samples, stretched back (up to 20 times ``window``) until it holds
    ``window_per_class`` samples of every class: the minority's recall is read over enough
    samples. The candidates are listed the simplest first: the feature maps in the order raw,
    poly2, poly3, ..., tree, and for one map the larger forgetting factor first (1.0: no
    forgetting); the first, ``NRRLS()`` on the raw features, is the *reference*.

    **The choice**: the simplest candidate until another's lead is significant. A score over
    a window that holds a handful of minority samples is noise (one positive more or less
    moves a G-mean by points), so a candidate may lead only with ``evidence``: over the
    window, for every class, the samples it predicts right and the reference wrong and the
    converse (a paired comparison, as McNemar's test) give its G-mean's lead over the
    reference's in standard errors, z; it must exceed ``evidence`` (default 2). Of the
    reference and the candidates with evidence, the best score predicts (`best_candidate`;
    ties to the simplest). With few minority samples the reference keeps the lead; on a long
    stream, or after a drift it cannot follow, the evidence grows and the best score leads.
    ``evidence=None`` is the plain race (the best score leads, as `PolynomialOrderSelector`).
    The first candidate answers before anything has been scored.

    **Lazy solving** keeps the cost on the contenders. A candidate's *model* (the orders of
    one factor, which one solve serves, or the tree-path NR-RLS of one factor) is out of
    contention at a sample when it does not hold the leader and none of its candidates
    scores less than ``lazy_margin`` below the leader (with the default 0: every model but
    the leader's, a tie included). After ``lazy_after`` consecutive samples out of contention
    it stops solving at every sample: its statistics still learn every sample (cheaply,
    O(d^2)), but it is scored block-prequentially, with the weights solved at the start of
    each block of ``lazy_block`` samples (the order selector's ``block``; a lazy tree-path
    candidate reads the present tree's features). As soon as it is in contention again (one
    of its candidates leads, or comes within ``lazy_margin``) it is reconsidered: solved
    again, exactly from its statistics, at every sample. `table` says which are solving.
    ``lazy_after=None`` solves every model at every sample.

    **Threads.** Every public call holds the model's lock across the whole step, its
    candidates' models and tree included: threads sharing an `AutoNRRLS` take turns, and a
    pickle, copy or clone of it is a state that existed (every candidate, score and the tree
    after the same sample).

    Parameters
    ----------
    orders
        The polynomial orders, distinct positive ints (order 1: the raw features), or None
        (default): chosen at the first sample learnt, from its number of features l, so that
        the highest order's expansion stays narrow: 1, ..., R with R the highest order up to
        6 of at most 50 columns, and at least 2 (R = 6 for l <= 3, 3 for l = 8 or 9, 2 from
        l = 10 on: `default_orders`).
    forgetting_grid
        The forgetting factors in (0, 1], raced with every feature map.
    tree_paths
        Whether the tree-path candidates race too.
    metric
        The race's river classification metric (each candidate uses a clone); default
        `river.metrics.GeometricMean`. One that needs probabilities is fed
        ``predict_proba_one``.
    window
        The race scores the last ``window`` scored samples (a positive int), or all (None).
    window_per_class
        The window stretches back until it holds this many samples of every class (a
        non-negative int; 0: exactly ``window`` samples).
    evidence
        How many standard errors a candidate's lead over the reference must exceed for it to
        predict (a float >= 0); None: the best score predicts, whatever the evidence.
    tree
        The template of the tree-path candidates' tree, a `river.tree.HoeffdingTreeClassifier`
        (see `TreePathFeatures`); None: ``HoeffdingTreeClassifier(grace_period=50,
        delta=1e-5)``.
    lazy_after
        Samples out of contention before a model stops solving at every sample (None: never).
    lazy_block
        The block of a lazy model's block-prequential scoring, in samples.
    lazy_margin
        How far below the leader's score a candidate keeps its model in contention (>= 0;
        0: only the leader's model).
    max_size
        Memory budget in MiB of every candidate's statistics together (None: the machine's
        memory, model by model); a sample that would take them beyond it is refused.

    Attributes
    ----------
    scores
        ``{candidate: metric}``: every candidate's score over the window.

    Examples
    --------

    >>> from river import evaluate, metrics, stream
    >>> from river.datasets import synth
    >>> from river_nrrls import AutoNRRLS, datasets
    >>> from river_nrrls.datasets.synth import scale_agrawal

    A small real set (Bupa's file groups the classes: shuffled once, deterministically), where
    a polynomial order wins:

    >>> bupa = list(stream.shuffle(datasets.Bupa(), buffer_size=345, seed=42))
    >>> model = AutoNRRLS()
    >>> evaluate.progressive_val_score(bupa, model, metrics.GeometricMean())
    GeometricMean: 61.95%
    >>> model.best_candidate
    Candidate(features='poly3', forgetting=0.999)

    A drifting stream (river's rotating hyperplane; 4 inputs: orders up to 5), where forgetting
    wins; the candidates behind have turned lazy:

    >>> hyperplane = synth.Hyperplane(seed=1, n_features=4, n_drift_features=4, mag_change=0.01)
    >>> model = AutoNRRLS()
    >>> evaluate.progressive_val_score(hyperplane.take(3000), model, metrics.GeometricMean())
    GeometricMean: 90.67%
    >>> model.best_candidate
    Candidate(features='poly5', forgetting=0.99)
    >>> [tuple(row.candidate) for row in model.table if row.solving]
    [('raw', 0.99), ('poly2', 0.99), ('poly3', 0.99), ('poly4', 0.99), ('poly5', 0.99)]

    A rule-based concept (river's Agrawal: thresholds on age and salary; its features mapped
    to [0, 1]), where the tree-path features win:

    >>> agrawal = synth.Agrawal(classification_function=2, seed=42)
    >>> agrawal = [(scale_agrawal(x), y) for x, y in agrawal.take(4000)]
    >>> model = AutoNRRLS()
    >>> evaluate.progressive_val_score(agrawal, model, metrics.GeometricMean())
    GeometricMean: 76.00%
    >>> model.best_candidate
    Candidate(features='tree', forgetting=1.0)

    Every candidate's score over the window, its state and its prediction of a sample:

    >>> print(model.debug_one(agrawal[0][0]))
    candidate                prediction    score  state
    raw, l=1                          0   0.5684  lazy
    raw, l=0.999                      0   0.5671  lazy
    raw, l=0.99                       0   0.5467  lazy
    poly2, l=1                        1   0.7615  lazy
    poly2, l=0.999                    1   0.7569  lazy
    poly2, l=0.99                     1   0.7495  lazy
    poly3, l=1                        1   0.7650  lazy
    poly3, l=0.999                    1   0.7672  lazy
    poly3, l=0.99                     1   0.7438  lazy
    tree, l=1                         0   0.8411  solving *
    tree, l=0.999                     0   0.8411  lazy
    tree, l=0.99                      0   0.8411  lazy

    References
    ----------
    [^1]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)
    [^2]: Toh, K.-A., Tran, Q.-L. and Srinivasan, D. (2004). Benchmarking a reduced multivariate
        polynomial pattern classifier. IEEE Transactions on Pattern Analysis and Machine
        Intelligence, 26(6), 740-755.
    [^3]: Domingos, P. and Hulten, G. (2000). Mining high-speed data streams. In Proceedings of
        the 6th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining,
        71-80.

    """

    def __init__(
        self,
        orders: tuple[int, ...] | None = None,
        forgetting_grid: tuple[float, ...] = (1.0, 0.999, 0.99),
        tree_paths: bool = True,
        metric: metrics.base.ClassificationMetric | None = None,
        window: int | None = 500,
        window_per_class: int = 50,
        evidence: float | None = 2.0,
        tree: HoeffdingTreeClassifier | None = None,
        lazy_after: int | None = 100,
        lazy_block: int = 50,
        lazy_margin: float = 0.0,
        max_size: float | None = None,
    ):
        self.orders = orders
        self.forgetting_grid = forgetting_grid
        self.tree_paths = tree_paths
        self.metric = metric
        self.window = window
        self.window_per_class = window_per_class
        self.evidence = evidence
        self.tree = tree
        self.lazy_after = lazy_after
        self.lazy_block = lazy_block
        self.lazy_margin = lazy_margin
        self.max_size = max_size
        self._orders = None if orders is None else check_orders(orders)
        self._grid = check_grid(forgetting_grid)
        if not isinstance(tree_paths, (bool, np.bool_)):
            raise ValueError(f"tree_paths must be a bool, got {tree_paths!r}")
        self._metric = metrics.GeometricMean() if metric is None else metric
        if not isinstance(self._metric, metrics.base.ClassificationMetric):
            raise TypeError(f"metric must be a river ClassificationMetric, got {metric!r}")
        self._window = None if window is None else check_positive("window", window)
        self._per_class = check_count("window_per_class", window_per_class)
        self._z = None if evidence is None else check_real("evidence", evidence, low=0.0)
        self._tree_template = tree_template(tree)
        self._lazy_after = None if lazy_after is None else check_positive("lazy_after", lazy_after)
        self._lazy_block = check_positive("lazy_block", lazy_block)
        self._margin = check_real("lazy_margin", lazy_margin, low=0.0)
        self._budget = SizeBudget.of(max_size)
        self._init_state()
        # One call at a time (`OneCallAtATime`). The models and the tree inside have their own
        # locks, always taken after this one (they never call this model), and they are private
        # to it (`best_model` is a copy): the order of the locks never inverts.
        self._new_lock()

    def _init_state(self) -> None:
        if self._orders is not None:
            self._build(self._orders)
            return
        # orders=None: the models are built at the first sample learnt (`default_orders`)
        self._models: list = []
        self._tree: TreePathFeatures | None = None
        self._candidates: list[Candidate] = []
        self._slots: list[tuple[int, int]] = []
        self._scores: dict = {}
        self._recent: dict = {}  # {candidate: ClassWindow} (window=None: unused)
        self._evidence: PairedEvidence | None = None  # the choice rule's (`_choice`)
        self._best: Candidate | None = None
        self._last: dict = {}
        self._last_paths: tuple | None = None
        self._solving: list[bool] = []
        self._trailing: list[int] = []
        self._frozen: list = []
        self._clocks: list[BlockClock] = []

    def _build(self, orders: tuple[int, ...]) -> None:
        """The models and the race of the polynomial ``orders`` (and the tree)."""
        template = NRRLS()
        # The models, in their learning order: the polynomial ones first (the most demanding
        # range: the highest order's features include the raw ones), the least forgetting
        # first (forgetting only shrinks the statistics); then the tree-path ones.
        self._models = [PolynomialModels(orders, f, template) for f in self._grid]
        self._tree = TreePathFeatures(tree=self._tree_template) if self.tree_paths else None
        if self._tree is not None:
            self._models += [TreePathModel(f, template) for f in self._grid]
        # The candidates, the simplest first (ties go to it): feature map, then forgetting
        slots = {}
        for m, model in enumerate(self._models):
            for position, name in enumerate(model.names):
                slots[Candidate(name, model.forgetting)] = (m, position)
        maps = [feature_map(order) for order in orders] + ["tree"]
        self._candidates = sorted(slots, key=lambda c: (maps.index(c.features), -c.forgetting))
        self._slots = [slots[candidate] for candidate in self._candidates]
        self._scores = {key: self._metric.clone() for key in self._candidates}
        self._recent = {key: self._new_window() for key in self._candidates}
        self._evidence = (
            None if self._z is None else PairedEvidence(len(self._candidates), self._new_window())
        )
        self._best = self._candidates[0]
        self._last = {}  # every candidate's prediction of the last learnt sample
        self._last_paths = None  # the last x's items and tree-path features
        # lazy solving, per model: solving at every sample?, samples out of contention, the
        # frozen scorer of a lazy one and its block
        self._solving = [True] * len(self._models)
        self._trailing = [0] * len(self._models)
        self._frozen = [None] * len(self._models)
        self._clocks = [BlockClock(self._lazy_block) for _ in self._models]

    def _new_window(self) -> ClassWindow | None:
        if self._window is None:
            return None
        return ClassWindow(self._window, self._per_class, WINDOW_STRETCH * self._window)

    @classmethod
    def _unit_test_params(cls):
        yield {"forgetting_grid": (1.0, 0.99), "window": 50, "lazy_after": 20}
        yield {"orders": (1,), "forgetting_grid": (1.0,), "tree_paths": False, "lazy_block": 3}

    @property
    def _multiclass(self) -> bool:
        return True  # (NR-RLS is one-vs-rest: any number of classes)

    # -------------------------------------------------------------------- introspection

    @property
    def scores(self) -> dict:
        """``{candidate: metric}`` (see Attributes): a copy, as the race stands between two
        samples."""
        with self._lock:
            return copy.deepcopy(self._scores)

    @property
    def best_candidate(self) -> Candidate | None:
        """The candidate that currently makes the predictions (None: ``orders=None`` and
        nothing learnt yet)."""
        with self._lock:
            return self._best

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate, the simplest first (the race's order: ties go to the first)."""
        with self._lock:
            return list(self._candidates)

    @property
    def table(self) -> list[CandidateRow]:
        """Every candidate's score over the window, whether its model solves at every
        sample (else it is lazy), and which leads."""
        with self._lock:
            return self._table()

    def _table(self) -> list[CandidateRow]:
        values = score_values([self._scores[key] for key in self._candidates])
        return [
            CandidateRow(key, value, self._solving[slot[0]], key == self._best)
            for key, value, slot in zip(self._candidates, values, self._slots)
        ]

    @property
    def last_predictions(self) -> dict:
        """``{candidate: prediction}`` that scored the last learnt sample (lazy candidates:
        with the weights of the start of their block)."""
        with self._lock:
            return dict(self._last)

    @property
    def best_model(self) -> compose.Pipeline:
        """A new pipeline equal to the best candidate's (its statistics, and a copy of the
        tree): it predicts as the candidate does; learning with it changes nothing here."""
        with self._lock:
            if self._best is None:
                raise ValueError("no candidate before the first sample (orders=None)")
            m, position = self._slots[self._candidates.index(self._best)]
            return self._models[m].pipeline(position, self._tree)

    def predict_candidate(self, x: dict, candidate: Candidate, proba: bool = False) -> typing.Any:
        """What ``candidate`` predicts for ``x`` from its present statistics (its pipeline's
        class, or with ``proba`` its probabilities), whether or not it leads or solves."""
        with self._lock:
            return self._predict_candidate(x, candidate, proba)

    def _predict_candidate(self, x: dict, candidate: Candidate, proba: bool) -> typing.Any:
        m, position = self._slots[self._candidates.index(Candidate(*candidate))]
        return self._models[m].predict(x, position, not proba, self._paths)

    def debug_one(self, x: dict) -> str:
        """A table of every candidate: its prediction of ``x`` (from its present statistics),
        its score, whether it solves at every sample, and the leader (``*``)."""
        with self._lock:  # (every row of the same state)
            rows = self._table()
            guesses = [self._predict_candidate(x, row.candidate, False) for row in rows]
        lines = [f"{'candidate':<22} {'prediction':>12} {'score':>8}  state"]
        for row, guess in zip(rows, guesses):
            name = f"{row.candidate.features}, l={row.candidate.forgetting:g}"
            state = ("solving" if row.solving else "lazy") + (" *" if row.leader else "")
            lines.append(f"{name:<22} {guess!s:>12} {row.score:>8.4f}  {state}")
        return "\n".join(lines)

    # ------------------------------------------------------------------------- learning

    def _paths(self, x: dict) -> dict:
        """The tree-path features of ``x``; those of the last ``x`` are remembered until the
        tree learns (a prequential loop transforms every sample twice: to predict, to learn),
        when its values are plain ints and floats (equal keys and values: equal features)."""
        assert self._tree is not None
        items = tuple(x.items())
        last = self.__dict__.get("_last_paths")  # (not pickled: see __getstate__)
        if last is not None and last[0] == items:
            return last[1]
        paths = self._tree.transform_one(x)
        if _PLAIN.issuperset(map(type, x.values())):
            self._last_paths = (items, paths)
        return paths

    def __getstate__(self) -> dict:
        state = super().__getstate__()  # (under the lock: `OneCallAtATime`)
        state.pop("_last_paths", None)  # a cache of the tree's last transform
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        if "scores" in state:  # pickled when the scores were a plain attribute
            state["_scores"] = state.pop("scores")
        if "_evidence" not in state:  # pickled before the evidence rule: the plain race it ran
            state.update(evidence=None, window_per_class=0, tree=None, _z=None, _per_class=0)
            state.update(_evidence=None, _tree_template=HoeffdingTreeClassifier())
            window = state.get("_window")
            state["_recent"] = {
                key: None if window is None else ClassWindow.holding(recent, window, 0, window)
                for key, recent in state.get("_recent", {}).items()
            }
        super().__setstate__(state)

    def _prepare(self, x: dict) -> Sample:
        """The sample as every candidate reads it (a bad ``x`` raises here)."""
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        first = self._models[0]
        expansion = first.nested.expand(x)
        return Sample(expansion, None if self._tree is None else self._paths(x))

    def learn_one(self, x: dict, y: typing.Hashable, w: float = 1.0) -> None:
        """Score every candidate on ``(x, y)``, then let every model learn it.

        ``w`` (>= 0) weighs the sample in every model and in every score; ``w = 0`` validates
        the sample and changes nothing. A refused sample changes nothing: what learning would
        refuse is checked before any candidate predicts or any model learns.

        """
        # The whole step under the lock (see __init__). Many small systems: BLAS on one thread
        # (waking its threads for each costs more than they save, more on a busy machine)
        with self._lock, one_blas_thread():
            self._learn_one(x, y, w)

    def _learn_one(self, x: dict, y: typing.Hashable, w: float) -> None:
        weight = check_real("w", w, low=0.0)
        label = check_label(y)
        if self._models:
            self._learn_built(x, label, weight)
            return
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        self._build(default_orders(len(x)))  # orders=None: from the first sample learnt
        try:
            self._learn_built(x, label, weight)
        except BaseException:
            self._init_state()  # a refused first sample leaves no models
            raise
        if weight == 0.0:
            self._init_state()

    def _learn_built(self, x: dict, label: typing.Hashable, weight: float) -> None:
        sample = self._prepare(x)
        if weight > 0.0:
            # What learning would refuse, refused before anything changes: the most demanding
            # range is the first model's (the highest order, the least forgetting; the
            # tree-path models read the raw features, bounded one-hots and probabilities)
            self._models[0].check_learnable(sample, label, weight)
            if self._budget.max_size is not None:
                self._check_size(sample, label)
        requires_labels = self._metric.requires_labels
        scorers, predictions = [], []
        for m, model in enumerate(self._models):
            if self._solving[m]:
                scorer = model.fresh()
            else:
                scorer = self._frozen[m]
                if scorer is None or self._clocks[m].starts() or not model.fits(scorer):
                    scorer = model.freeze()
            scorers.append(scorer)
            predictions.append(model.predictions(scorer, sample, requires_labels))
        if weight == 0.0:
            return
        for model in self._models:
            model.learn(sample, label, weight)
        if self._tree is not None:
            self._last_paths = None  # the tree changes
            self._learn_tree(x, label, weight)
        for m in range(len(self._models)):  # the lazy ones keep their scorer for the block
            if not self._solving[m]:
                self._frozen[m] = scorers[m]
                self._clocks[m].advance()
        extra = {} if weight == 1.0 else {"w": weight}
        self._last = {}
        for key, (m, position) in zip(self._candidates, self._slots):
            y_pred = predictions[m][position]
            self._last[key] = y_pred
            if y_pred is not None and y_pred != {}:
                recent = self._recent[key]
                if recent is None:
                    self._scores[key].update(label, y_pred, **extra)
                else:
                    recent.add(self._scores[key], label, y_pred, extra)
        values = score_values([self._scores[key] for key in self._candidates])
        if self._evidence is None or self._z is None:
            position = self._candidates.index(
                leader(self._candidates, values, self._metric.bigger_is_better)
            )
        else:
            self._evidence.add(label, [self._last[key] for key in self._candidates], weight)
            sign = 1.0 if self._metric.bigger_is_better else -1.0
            position = self._evidence.leader(values, sign, self._z)
        self._best = self._candidates[position]
        self._update_lazy(values, position)

    def _learn_tree(self, x: dict, y: typing.Hashable, weight: float) -> None:
        """The tree learns as a pipeline's supervised step would (``w`` if it takes one)."""
        assert self._tree is not None
        learn: typing.Any = self._tree.learn_one
        if weight != 1.0 and "w" in inspect.signature(learn).parameters:
            learn(x, y, w=weight)
        else:
            learn(x, y)

    def _check_size(self, sample: Sample, y: typing.Hashable) -> None:
        """Refuse a sample that would take every model's statistics beyond ``max_size``."""
        needed = sum(model.nbytes_after(sample, y) for model in self._models)
        stats = self._models[0].model.statistics
        width = max(len(model.model.features) for model in self._models)
        self._budget.check(needed, type(self).__name__, width, len(stats.slot | {y: 0}))

    def _update_lazy(self, values: list[float], best: int) -> None:
        """Lazy solving's bookkeeping (see the class docstring), after the leader is known."""
        sign = 1.0 if self._metric.bigger_is_better else -1.0
        lead = sign * values[best]
        best_of = [-np.inf] * len(self._models)
        for (m, _), value in zip(self._slots, values):
            best_of[m] = max(best_of[m], sign * value)
        leading = self._slots[best][0]
        for m, value in enumerate(best_of):
            if m == leading or value > lead - self._margin:  # in contention: solved every sample
                self._trailing[m] = 0
                if not self._solving[m]:
                    self._solving[m], self._frozen[m] = True, None
            else:
                self._trailing[m] += 1
                lazy_after = self._lazy_after
                if self._solving[m] and lazy_after is not None and self._trailing[m] >= lazy_after:
                    self._solving[m] = False
                    self._clocks[m] = BlockClock(self._lazy_block)

    def learn_many(self, X: pd.DataFrame, y: pd.Series, w: float | pd.Series | None = None) -> None:
        """The `learn_one` loop over the rows (``NaN`` in ``X``: missing); ``w`` one weight or
        one per row. A refused mini-batch (any row) leaves the model as it was."""
        batch = batch_samples(X, y)  # the rows, their checked labels, paired by position
        weights = sample_weights(as_series(w), as_series(y))
        with self._lock, one_blas_thread():  # the whole batch: a snapshot holds all or none
            saved = self._state_copy()
            try:
                for i, (x, label) in enumerate(zip(batch.rows, batch.labels)):
                    self._learn_one(x, label, 1.0 if weights is None else float(weights[i]))
            except BaseException:
                self._restore(saved)
                raise

    # ------------------------------------------------------------------------ inference

    def _predict(self, x: dict, labels: bool) -> typing.Any:
        if self._best is None:  # (orders=None, nothing learnt)
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
            return None if labels else {}
        m, position = self._slots[self._candidates.index(self._best)]
        with one_blas_thread():
            return self._models[m].predict(x, position, labels, self._paths)

    def predict_proba_one(self, x: dict) -> dict[typing.Hashable, float]:  # type: ignore[override]  # (river's **kwargs: unused here)
        """The best candidate's probabilities (its pipeline's: `best_model`)."""
        with self._lock:
            return self._predict(x, False)

    def predict_one(self, x: dict) -> typing.Hashable | None:  # type: ignore[override]  # (river's **kwargs: unused here)
        """The best candidate's class (its pipeline's: `best_model`); None before learning."""
        with self._lock:
            return self._predict(x, True)

    def predict_many(self, X: typing.Any) -> typing.Any:
        """`predict_one` of every row, as a Series in ``X``'s backend."""
        rows, _ = frame_samples(X)
        with self._lock:
            labels = [self._predict(x, True) for x in rows]
        return label_series(labels, X)

    def predict_proba_many(self, X: typing.Any) -> typing.Any:
        """`predict_proba_one` of every row: one column per class, in ``X``'s backend."""
        rows, _ = frame_samples(X)
        with self._lock:
            probabilities = [self._predict(x, False) for x in rows]
        return probability_frame(probabilities, X)  # (every row: the leader's classes)
