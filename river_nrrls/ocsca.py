"""OCSCA: online cost-sensitive classifier adaptation of any river model."""

from __future__ import annotations

import copy
import inspect
import math
import typing

import numpy as np
from river import base, compose

from ._checks import check_real, label_sign
from ._index import FeatureIndex
from ._linear import binary_proba, exact_dot, weights_at, with_capacity
from ._locking import OneCallAtATime
from ._parameters import LiveParameters
from ._validation import is_missing_value

__all__ = ["OCSCA"]

_SCORES = ("auto", "decision", "proba", "logit", "regression")

#: ``score="logit"`` clips the base model's probability to [eps, 1 - eps] (|logit| <= 13.8).
_LOGIT_EPS = 1e-6

#: ``alpha="scale"``: alpha_t = SCALE_ALPHA / m_t, m_t the mean of x . x so far (see OCSCA).
SCALE_ALPHA = 0.05

#: An update of w whose every change |tau_t x_i| is below this cannot overflow: a finite weight
#: plus less than half an ulp of the largest float (2**970, about 1e292) stays finite.
_SAFE_INCREMENT = 1e290


def _check_alpha(alpha: typing.Any) -> float | None:
    """``alpha`` as a float > 0, or ``None`` for ``"scale"``."""
    if isinstance(alpha, str):
        if alpha == "scale":
            return None
        raise TypeError(f"alpha must be a number > 0 or 'scale', got {alpha!r}")
    return check_real("alpha", alpha, low=0.0, low_open=True)


def _final_step(model: base.Estimator) -> base.Estimator:
    """The estimator that produces a (possibly nested) pipeline's output."""
    while isinstance(model, compose.Pipeline):
        model = list(model.steps.values())[-1]
    return model


def _resolve_score(model: typing.Any, score: str) -> str:
    """The score read from the model: ``decision``, ``proba``, ``logit`` or ``regression``."""
    if not isinstance(model, base.Estimator):
        raise TypeError(f"model must be a river estimator, got {type(model).__name__}")
    if not isinstance(score, str) or score not in _SCORES:
        raise ValueError(f"score must be one of {_SCORES}, got {score!r}")
    final = _final_step(model)
    if score == "auto":
        if callable(getattr(model, "decision_one", None)):
            return "decision"
        if isinstance(final, base.Classifier):
            return "proba"
        if isinstance(final, base.Regressor):
            return "regression"
        raise TypeError(
            f"score='auto' needs a model with decision_one, a classifier or a regressor; "
            f"{type(model).__name__} is none of them"
        )
    needed = {
        "decision": "decision_one",
        "proba": "predict_proba_one",
        "logit": "predict_proba_one",
        "regression": "predict_one",
    }[score]
    if not callable(getattr(model, needed, None)):
        raise TypeError(f"score={score!r} needs model.{needed}, which {type(model).__name__} lacks")
    return score


def _accepts_weight(model: typing.Any) -> bool:
    """Whether ``model.learn_one`` takes a ``w`` keyword (or ``**kwargs``), as
    progressive_val_score asks."""
    parameters = inspect.signature(model.learn_one).parameters
    return "w" in parameters or any(
        parameter.kind == inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


def _same_model_params(given: typing.Any, model: base.Estimator) -> bool:
    """Whether ``given`` is river's ``(class, params)`` description of ``model`` itself."""
    if not (isinstance(given, tuple) and len(given) == 2 and given[0] is type(model)):
        return False
    try:
        return bool(given[1] == model._get_params())
    except (TypeError, ValueError):  # parameters that cannot be compared (arrays, ...)
        return False


class OCSCA(LiveParameters, OneCallAtATime, base.Wrapper, base.Classifier):
    """Online cost-sensitive classifier adaptation (OCSCA) of any river model.

    A model ``f0`` was trained for one cost setting; the stream now comes with other costs.
    OCSCA keeps ``f0`` as it is and learns online a linear correction ``w`` of its score:

        f(x) = f0(x) + w . x

    Every labelled sample ``(x_t, y_t)`` with misclassification cost ``C_t`` takes the
    passive-aggressive step of the paper's Algorithm 1 on the cost-weighted hinge loss
    ``C_t max(0, 1 - y_t f(x_t))``, with ``y_t = +1`` for ``True`` and ``-1`` for ``False``:

        tau'_t = (1 - y_t (f0(x_t) + w_{t-1} . x_t)) / (x_t . x_t)
        tau_t  = clip(tau'_t, 0, alpha C_t)
        w_t    = w_{t-1} + tau_t y_t x_t

    This is the closed-form solution of ``min 1/2 |w - w_{t-1}|^2 + alpha C_t xi`` subject to
    ``1 - y_t f(x_t) <= xi, xi >= 0`` (PA-I with a class-dependent aggressiveness). Learning costs
    O(number of features of x) plus one evaluation of ``f0``.

    With a number ``alpha`` this is the paper's Algorithm 1 exactly. The paper chooses alpha by
    cross-validation and gives no default; the default here, ``alpha="scale"``, is a scale-free
    step, ``alpha_t = 0.05 / m_t`` with ``m_t`` the mean of ``x . x`` over the samples learnt so
    far (see "Choosing alpha" below).

    Parameters
    ----------
    model
        The base classifier ``f0``: ANY river model, used as given (already trained, not cloned).
        Its score ``f0(x)`` is chosen by ``score``.
    alpha
        The trade-off alpha > 0 of the paper: the largest step on a sample is ``alpha C_t``.
        ``"scale"`` (default) takes ``alpha_t = 0.05 / m_t`` at step t, with ``m_t`` the mean of
        ``x_s . x_s`` (the constant feature included) over the samples ``s <= t`` learnt with a
        non-zero ``x``: a step then moves ``f`` at a typical ``x`` by at most ``0.05 C_t``,
        whatever the scale of the features. A number is the paper's constant alpha.
    cost_pos
        Misclassification cost C+ of a positive (``True``) sample.
    cost_neg
        Misclassification cost C- of a negative (``False``) sample.
    score
        How ``f0(x)`` is read from the model. ``"decision"``: ``model.decision_one(x)[True]``
        (for instance `river_nrrls.NRRLS`; ``-decision[False]`` when only ``False`` is
        there). ``"proba"``: ``2 p - 1`` with ``p = model.predict_proba_one(x)[True]``.
        ``"logit"``: ``log(p / (1 - p))`` with ``p`` clipped to [1e-6, 1 - 1e-6].
        ``"regression"``: ``model.predict_one(x)``. ``"auto"`` (default): ``"decision"`` if the
        model has ``decision_one``, else ``"proba"`` for a classifier (the last step of a
        pipeline decides), else ``"regression"`` for a regressor.
    intercept
        Append a constant feature 1 to ``x``, so that ``w`` has a bias that can shift the
        threshold of ``f0`` uniformly (the main effect of a change of costs). This is a
        deviation from the paper, whose ``w`` has no bias; ``False`` (default) is the paper.
    learn_base
        Keep training ``f0`` on the stream, after the adaptation step (whose score is the one
        of ``f0`` before it learns the sample). ``False`` (default) is the paper: ``f0`` is
        never modified.

    Attributes
    ----------
    weights
        The adaptation ``w`` as ``{feature: weight}`` (a copy), for the features that took part
        in a step.
    bias
        The weight of the constant feature (0 when ``intercept=False``).

    Notes
    -----
    **Costs.** ``learn_one(x, y, w=c)`` gives the sample its own cost ``C_t = c``, which
    overrides ``cost_pos`` / ``cost_neg``. `river.evaluate.progressive_val_score` passes
    ``w`` this way from a stream of ``(x, y, {"w": c})`` triples, so cost-sensitive streams need
    no extra code. Note that this ``w`` is a per-sample **cost** ``C_t`` (it caps the step at
    ``alpha C_t``), not river's importance weight (which counts a sample ``w`` times, as in
    `NRRLS`): a sample of cost 2 is not the same as the sample seen twice, and ``w = 0`` is a
    cost of 0 (a passive step), not a skipped sample.

    **Choosing alpha.** alpha bounds how far one sample can move the correction: a step changes
    ``f(x_t)`` by at most ``alpha C_t x_t . x_t``. Too large, and every sample inside the margin
    (with a probability score ``2 p - 1`` in [-1, 1], nearly every sample) drags ``w`` to fix
    its own margin: the correction follows the noise, and the cost ends up above that of ``f0``
    alone. Too small, and the correction is still learning when the stream ends. A constant
    alpha also depends on the scale of the features (``x`` ten times larger needs an alpha a
    hundred times smaller). ``"scale"`` keeps the largest change of ``f`` on a typical sample
    at ``0.05 C_t`` whatever that scale. The repository's ``benchmarks/ocsca_default.py``
    compares it with constant values over many streams, base models and feature scalings
    (``benchmarks/results/ocsca_default.md``, and the OCSCA guide): ``"scale"`` mostly costs
    less than ``f0`` alone, where a constant alpha = 1 often costs more. To tune alpha, stream
    a held-out part of the data with a few constant values around ``0.05 / mean(x . x)``, ten
    times apart, and keep the one of lowest misclassification cost, as the paper does by
    cross-validation.

    **Details of the update.** A row with ``x . x = 0`` (no non-zero feature and no intercept)
    leaves ``w`` unchanged, as does a passive step (``tau_t = 0``); a feature enters
    `weights` at its first non-zero step. Features may appear at any time (their weight
    starts at 0) or be absent (zero); a ``None`` or ``pd.NA`` value is missing (zero) and is
    not shown to ``f0``. Non-numeric or non-finite values raise an error naming the feature,
    and a bad label, cost or ``x`` leaves the model (``f0`` included) exactly as it was.

    **Before f0 knows anything.** When the base model has no output yet (an empty
    ``decision_one`` or ``predict_proba_one``, or a ``None`` prediction) its score is 0.
    Errors raised by the base model itself are not caught.

    **Outputs.** ``decision_one`` is ``{True: f, False: -f}``; ``predict_one`` is ``f >= 0``
    (ties go to the positive class, as in LIBOL); ``predict_proba_one`` is
    ``{False: 1 - s(f), True: s(f)}`` with the logistic ``s(f) = 1 / (1 + exp(-f))``, monotone
    in ``f``, from the very first call. With ``score="logit"`` and ``w = 0`` it is the (clipped)
    probability of ``f0`` itself.

    **Cloning.** River's default ``clone`` would rebuild ``f0`` untrained and so throw away the
    model to adapt. ``clone()`` here keeps ``f0`` as it was given: a deep copy of it, taken
    before its first update when ``learn_base=True``. Passing ``new_params={"model": ...}`` with
    other parameters gives river's usual behaviour (a fresh model with those parameters).

    **Threads.** Every call holds the adaptation's lock, ``f0``'s calls included: threads
    sharing an OCSCA take turns, and a pickle, copy or clone of it (``f0`` inside) is a state
    that existed. A thread that calls ``f0`` directly, outside the OCSCA, is not held.

    Extra keyword arguments of ``learn_one``, ``predict_one``, ``predict_proba_one`` and
    ``decision_one`` are passed on to the base model; with ``learn_base=True`` the base model
    also receives ``w`` when it is given and its ``learn_one`` accepts it.

    Examples
    --------

    A logistic regression trained with positives weighted 2 (C+ = 2, C- = 1) on 200 samples of
    Pima is adapted to the costs C+ = 5, C- = 1 on the other samples (Pima's file is sorted by
    class, hence the shuffle).

    >>> import random
    >>> from river import evaluate, linear_model, metrics, optim
    >>> from river_nrrls import OCSCA, datasets
    >>> from river_nrrls.metrics import MisclassificationCost

    >>> data = list(datasets.Pima())
    >>> random.Random(1).shuffle(data)
    >>> f0 = linear_model.LogisticRegression(optimizer=optim.SGD(0.1), intercept_lr=0.1)
    >>> for _ in range(20):
    ...     for x, y in data[:200]:
    ...         f0.learn_one(x, y, w=2.0 if y else 1.0)

    f0 alone on the other samples, then its adaptation (each sample is predicted, then learnt):

    >>> f0_cost = MisclassificationCost(cost_pos=5.0, cost_neg=1.0)
    >>> for x, y in data[200:]:
    ...     f0_cost.update(y, f0.predict_one(x))
    >>> f0_cost
    MisclassificationCost: 0.554577

    >>> model = OCSCA(f0, alpha=0.01, cost_pos=5.0, cost_neg=1.0, score="logit", intercept=True)
    >>> metric = MisclassificationCost(cost_pos=5.0, cost_neg=1.0) + metrics.Accuracy()
    >>> evaluate.progressive_val_score(data[200:], model, metric)
    MisclassificationCost: 0.489437
    Accuracy: 64.44%

    The default step needs no tuning; the paper's alpha = 1, on this stream, costs more than f0
    alone:

    >>> for alpha in ("scale", 1.0):
    ...     print(alpha, evaluate.progressive_val_score(
    ...         data[200:],
    ...         OCSCA(f0, alpha=alpha, cost_pos=5.0, cost_neg=1.0, score="logit"),
    ...         MisclassificationCost(cost_pos=5.0, cost_neg=1.0),
    ...     ))
    scale MisclassificationCost: 0.514085
    1.0 MisclassificationCost: 0.808099

    The same costs given per sample, as a third element of the stream:

    >>> weighted = [(x, y, {"w": 5.0 if y else 1.0}) for x, y in data[200:]]
    >>> evaluate.progressive_val_score(
    ...     weighted,
    ...     OCSCA(f0, alpha=0.01, score="logit", intercept=True),
    ...     MisclassificationCost(cost_pos=5.0, cost_neg=1.0),
    ... )
    MisclassificationCost: 0.489437

    f0 was not modified, and the adaptation is a linear correction of its log-odds:

    >>> f0_after = MisclassificationCost(cost_pos=5.0, cost_neg=1.0)
    >>> for x, y in data[200:]:
    ...     f0_after.update(y, f0.predict_one(x))
    >>> f0_after.get() == f0_cost.get()
    True

    >>> x, y = data[0]
    >>> f = model.decision_one(x)[True]
    >>> p = f0.predict_proba_one(x)[True]
    >>> import math
    >>> w_x = sum(model.weights[name] * value for name, value in x.items()) + model.bias
    >>> math.isclose(f, math.log(p / (1 - p)) + w_x)
    True

    References
    ----------
    [^1]: Zhang, J. and García, J. (2015). Online classifier adaptation for cost-sensitive
        learning (Algorithm 1). arXiv preprint arXiv:1503.06745.
        [doi:10.48550/arXiv.1503.06745](https://doi.org/10.48550/arXiv.1503.06745). Also
        published in Neural Computing and Applications (2016).
    [^2]: Wang, J., Zhao, P. and Hoi, S. C. H. (2012). Cost-sensitive online classification.
        Proceedings of the 12th IEEE International Conference on Data Mining (ICDM 2012),
        1140-1145.

    """

    _derived_attributes = ("_alpha", "_cost_pos", "_cost_neg", "_score", "_base_takes_w")
    # w is learnt on top of this f0, and the bias belongs to the intercept.
    _state_parameters = frozenset(("model", "intercept"))

    def __init__(
        self,
        model: base.Estimator,
        alpha: float | str = "scale",
        cost_pos: float = 1.0,
        cost_neg: float = 1.0,
        score: str = "auto",
        intercept: bool = False,
        learn_base: bool = False,
    ):
        # duck-typed: the score (``_resolve_score``) says which of ``predict_one``,
        # ``predict_proba_one`` or ``decision_one`` it has (and learn_one, with learn_base)
        self.model: typing.Any = model
        self.alpha = alpha
        self.cost_pos = cost_pos
        self.cost_neg = cost_neg
        self.score = score
        self.intercept = intercept
        self.learn_base = learn_base
        self._alpha = _check_alpha(alpha)  # None: "scale"
        self._cost_pos = check_real("cost_pos", cost_pos, low=0.0)
        self._cost_neg = check_real("cost_neg", cost_neg, low=0.0)
        if not isinstance(intercept, (bool, np.bool_)):
            raise TypeError(f"intercept must be a bool, got {intercept!r}")
        if not isinstance(learn_base, (bool, np.bool_)):
            raise TypeError(f"learn_base must be a bool, got {learn_base!r}")
        self._score = _resolve_score(model, score)
        self._constant = 1.0 if intercept else 0.0  # the appended feature's value (0: none)
        self._base_takes_w = bool(learn_base) and _accepts_weight(model)
        self._index = FeatureIndex()
        self._w = np.zeros(8)  # w, with spare capacity beyond self._index.size (zeros)
        self._bias = 0.0
        # alpha="scale": m_t, the mean of x . x over the samples learnt with x . x > 0, and
        # their number (both stay 0 with a constant alpha: Algorithm 1's state is w alone)
        self._mean_squared_norm = 0.0
        self._n_norms = 0
        self._model_as_given: base.Estimator | None = None  # f0 before learn_base changed it
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    @classmethod
    def _unit_test_params(cls):
        from river import datasets, linear_model, optim

        from .nrrls import NRRLS

        phishing = list(datasets.Phishing().take(60))
        classifier = linear_model.LogisticRegression(optimizer=optim.SGD(0.5))
        for x, y in phishing:
            classifier.learn_one(x, y, w=2.0 if y else 1.0)
        yield {"model": classifier, "cost_pos": 5.0}

        nrrls = NRRLS()
        for x, y in phishing:
            nrrls.learn_one(x, y)
        yield {"model": nrrls, "alpha": 0.5, "intercept": True, "cost_pos": 3.0}

        yield {"model": NRRLS(), "learn_base": True, "intercept": True}
        yield {"model": linear_model.LogisticRegression(), "score": "logit", "learn_base": True}
        yield {"model": linear_model.LinearRegression(), "alpha": 0.1}

    @property
    def _wrapped_model(self) -> base.Estimator:
        return self.model

    @property
    def _supervised(self) -> bool:
        return True

    @property
    def _multiclass(self) -> bool:
        return False

    def clone(self, new_params: dict | None = None, include_attributes: bool = False):
        """A copy with the same parameters and no adaptation learnt.

        Unlike river's default, ``f0`` keeps its training: the clone wraps a deep copy of the
        model as it was given (before ``learn_base`` trained it), unless ``new_params`` gives
        another model or other parameters for it. With ``include_attributes=True`` the clone
        is a copy of the whole state, the adaptation learnt and ``f0`` as it is now.

        """
        new_params = dict(new_params or {})
        with self._lock:  # f0 as it is between two calls (learn_base changes it)
            given = new_params.get("model", self.model)
            if given is self.model or _same_model_params(given, self.model):
                as_given = self.model if self._model_as_given is None else self._model_as_given
                # river's clone deep-copies a non-class parameter
                new_params["model"] = self.model if include_attributes else as_given
            return super().clone(new_params, include_attributes)

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def _base_input(x: dict, as_given: bool) -> dict:
        """``x`` as shown to f0: as given, without its missing values (None, ``pd.NA``)
        (``as_given``: x has none, as the encoding found)."""
        if as_given or not any(map(is_missing_value, x.values())):
            return x
        return {name: value for name, value in x.items() if not is_missing_value(value)}

    def _base_score(self, x: dict, kwargs: dict) -> float:
        """f0(x) on the hinge scale (0 while the base model has no output)."""
        mode = self._score
        if mode == "regression":
            prediction = self.model.predict_one(x, **kwargs)
            score = 0.0 if prediction is None else float(prediction)
        elif mode == "decision":
            outputs = self.model.decision_one(x, **kwargs)
            if not outputs:
                return 0.0
            if True in outputs:
                score = float(outputs[True])
            elif False in outputs:
                score = -float(outputs[False])
            else:
                raise ValueError(
                    f"the base model's decision_one has no True or False entry: {outputs!r}"
                )
        else:
            probabilities = self.model.predict_proba_one(x, **kwargs)
            if not probabilities:
                return 0.0
            if True in probabilities:
                p = float(probabilities[True])
            elif False in probabilities:
                p = 1.0 - float(probabilities[False])
            else:
                raise ValueError(
                    f"the base model's predict_proba_one has no True or False entry: "
                    f"{probabilities!r}"
                )
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"the base model gave a probability {p!r} outside [0, 1]")
            if mode == "proba":
                score = 2.0 * p - 1.0  # f0 = 2 p - 1
            else:
                p = min(max(p, _LOGIT_EPS), 1.0 - _LOGIT_EPS)
                score = math.log(p / (1.0 - p))  # f0 = log(p / (1 - p))
        if not math.isfinite(score):
            raise ValueError(f"the base model {type(self.model).__name__} gave the score {score!r}")
        return score

    def _adaptation(self, columns: np.ndarray, values: np.ndarray) -> float:
        """w . x for known columns (the constant feature included)."""
        return exact_dot(self._w[columns], values) + self._bias * self._constant

    def _grow(self, new_features: list) -> None:
        if new_features:
            self._index.add(new_features)
            self._w = with_capacity(self._w, self._index.size)

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y: typing.Any, w: float | None = None, **kwargs) -> None:
        """One step of Algorithm 1 on ``(x, y)`` with cost ``w`` (default: the class cost)."""
        y_t = label_sign(y, "OCSCA")  # y_t in {-1, +1}
        if w is None:
            cost = self._cost_pos if y_t > 0 else self._cost_neg  # C_t
        else:
            cost = check_real("w (the sample's cost)", w, low=0.0)  # C_t given per sample
        with self._lock:  # f0 and w learn as one step (a snapshot holds both or neither)
            self._learn_one(x, y_t, cost, w, kwargs)

    def _learn_one(self, x: dict, y_t: float, cost: float, w: float | None, kwargs: dict) -> None:
        columns, values, new, as_given = self._index.encode_sparse(x, grow=True)
        base_x = self._base_input(x, as_given)
        squared_norm = exact_dot(values, values) + self._constant  # x_t . x_t
        step = 0.0
        n_norms = 0  # alpha="scale": the count and the mean m_t of x . x after this sample
        if squared_norm > 0.0:
            if not math.isfinite(squared_norm):
                raise ValueError("x is too large: x . x overflows")
            alpha = self._alpha
            if alpha is None:
                n_norms = self._n_norms + 1
                mean = self._mean_squared_norm
                mean += (squared_norm - mean) / n_norms  # m_t
                alpha = SCALE_ALPHA / mean  # alpha_t = 0.05 / m_t
            current = weights_at(self._w, columns, new)  # w_{t-1} at the columns of x_t
            f_t = (
                self._base_score(base_x, kwargs)
                + exact_dot(current, values)
                + (self._bias * self._constant)
            )  # f0(x_t) + w_{t-1} . x_t
            tau_prime = (1.0 - y_t * f_t) / squared_norm  # tau'_t
            cap = alpha * cost if cost > 0.0 else 0.0  # alpha C_t (0 at C_t = 0, alpha_t inf too)
            tau = min(max(tau_prime, 0.0), cap)  # tau_t = clip(tau', 0, alpha C_t)
            step = tau * y_t
        if step != 0.0:
            updated_bias = self._bias + step * self._constant
            if abs(step) * math.sqrt(squared_norm) < _SAFE_INCREMENT:  # bounds every |step x_i|
                updated = current + step * values  # w_t = w_{t-1} + tau_t y_t x_t
                finite = math.isfinite(updated_bias)  # w_t is: no entry could overflow
            else:  # refused below if it overflows, without numpy's warning
                with np.errstate(over="ignore", invalid="ignore"):
                    updated = current + step * values
                    finite = math.isfinite(float(np.abs(updated).max()) + updated_bias)
            if not finite:  # inf or nan somewhere
                raise ValueError("the update of w overflows (x has values that are too large)")
        if self.learn_base:
            self._learn_base(base_x, y_t > 0, w, kwargs)
        # commit: nothing can fail any more
        if n_norms:
            self._n_norms, self._mean_squared_norm = n_norms, mean
        if step != 0.0:
            self._grow(new)
            self._w[columns] = updated
            self._bias = updated_bias

    def _learn_base(self, x: dict, label: bool, w: float | None, kwargs: dict) -> None:
        as_given = copy.deepcopy(self.model) if self._model_as_given is None else None
        if w is not None and self._base_takes_w:
            self.model.learn_one(x, label, w=w, **kwargs)
        else:
            self.model.learn_one(x, label, **kwargs)
        if as_given is not None:
            self._model_as_given = as_given

    # --------------------------------------------------------------- inference

    def _score_one(self, x: dict, kwargs: dict) -> float:
        """f(x) = f0(x) + w . x."""
        with self._lock:
            columns, values, _, as_given = self._index.encode_sparse(x, grow=False)
            with np.errstate(over="ignore", invalid="ignore"):
                base_score = self._base_score(self._base_input(x, as_given), kwargs)
                score = base_score + self._adaptation(columns, values)
        if not math.isfinite(score):
            raise ValueError(
                f"the score f0(x) + w . x overflows ({score!r}): x has values too large for the "
                "adaptation's weights"
            )
        return score

    def decision_one(self, x: dict, **kwargs) -> dict[bool, float]:
        """``{True: f(x), False: -f(x)}`` with ``f(x) = f0(x) + w . x``."""
        score = self._score_one(x, kwargs)
        return {True: score, False: -score}

    def predict_one(self, x: dict, **kwargs) -> bool:
        """``True`` when the adapted score ``f(x) = f0(x) + w . x`` is at least 0; ``kwargs`` go
        to the base model."""
        return self._score_one(x, kwargs) >= 0.0

    def predict_proba_one(self, x: dict, **kwargs) -> dict[base.typing.ClfTarget, float]:
        """``{False: sigmoid(-f(x)), True: sigmoid(f(x))}`` with ``f(x) = f0(x) + w . x``: a
        monotone map of the adapted score (the decision of `predict_one`), not a calibrated
        probability; ``kwargs`` go to the base model."""
        return binary_proba(self._score_one(x, kwargs))

    # -------------------------------------------------------------- inspection

    @property
    def weights(self) -> dict[typing.Hashable, float]:
        """The adaptation ``w`` as ``{feature: weight}`` (read-only copy)."""
        with self._lock:
            return self._index.to_dict(self._w)

    @property
    def bias(self) -> float:
        """The weight of the constant feature (0 when ``intercept=False``)."""
        with self._lock:
            return float(self._bias)
