"""The models of ``evaluate``: the ``--models`` registry and how a model is built for a stream.

`MODELS` maps a name of ``--models`` to a `ModelSpec` (a line of ``--help`` and a function that
builds a fresh classifier); `register_model` adds one. `build_model` puts in front of a model
what the stream needs: river's `river.preprocessing.OneHotEncoder` for the text (categorical)
columns of a CSV file, a min-max scaler with ``--scale``, and river's
`river.multiclass.OneVsRestClassifier` around a binary-only model on more than two classes.
`binary_view` says how a binary-only model sees the labels. Internal to `river_nrrls.cli`: its
public names are re-exported by `river_nrrls.cli.evaluate`.

"""

from __future__ import annotations

import collections
import dataclasses
import numbers
import typing

from river import (
    base,
    compose,
    forest,
    linear_model,
    multiclass,
    naive_bayes,
    preprocessing,
    tree,
)

from ..auto import AutoNRRLS
from ..model_selection import PolynomialOrderSelector
from ..nrrls import NRRLS
from ..poly import PolynomialExtender

__all__ = [
    "AS_GIVEN",
    "DEFAULT_MODELS",
    "MODELS",
    "Model",
    "ModelSpec",
    "PositiveWeighted",
    "binary_view",
    "build_model",
    "register_model",
]

#: The models of ``evaluate`` without ``--models``: the recommended start, NR-RLS, and river's
#: logistic regression as it comes and as river's documentation uses it.
DEFAULT_MODELS = ("auto", "nrrls", "lr", "lr-std")
#: The seed of river's randomised models (trees and forests), so that a run can be repeated.
SEED = 42

#: What ``--models`` builds: a river classifier, or a pipeline that ends in one.
Model = base.Classifier | compose.Pipeline


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A model of the ``--models`` registry.

    Parameters
    ----------
    description
        One line for ``--help``.
    build
        Returns a fresh, untrained classifier.
    binary_only
        The classifier only understands ``True``/``False`` labels (see
        `river_nrrls.cli.evaluate.evaluate_models` for what it gets on other labels).

    """

    description: str
    build: typing.Callable[[], Model]
    binary_only: bool = False


#: Models of ``--models`` by name (lower case), in the order of ``--help``.
MODELS: dict[str, ModelSpec] = {}


def register_model(
    name: str,
    description: str,
    build: typing.Callable[[], Model],
    binary_only: bool = False,
) -> None:
    """Add (or replace) the model ``name`` of the ``--models`` registry.

    Parameters
    ----------
    name
        The name of ``--models`` (stored in lower case).
    description
        One line for ``--help``.
    build
        Returns a fresh, untrained classifier (or a pipeline that ends in one).
    binary_only
        The classifier only understands ``True``/``False`` labels.

    """
    MODELS[name.lower()] = ModelSpec(description, build, binary_only)


class PositiveWeighted(base.Classifier):
    """A binary river classifier that learns every positive sample with the weight
    n_negatives / n_positives of the samples learnt so far (this one included; 1 before the
    first negative), so that both classes weigh alike whatever their running ratio.

    This is river's usual answer to imbalance for a model that takes sample weights
    (``learn_one(x, y, w)``), with the weight set online since the ratio of a stream is not
    known in advance; a weight ``w`` given to `learn_one` multiplies it.

    Parameters
    ----------
    classifier
        The pipeline, ending in a binary classifier, that learns the weighted samples.

    """

    def __init__(self, classifier: compose.Pipeline):
        self.classifier = classifier
        self.n_positives = 0
        self.n_negatives = 0

    def learn_one(self, x: dict, y: base.typing.ClfTarget, w: float = 1.0) -> None:
        if y:
            self.n_positives += 1
            w *= max(self.n_negatives, 1) / self.n_positives
        else:
            self.n_negatives += 1
        self.classifier.learn_one(x, y, w=w)

    def predict_proba_one(
        self, x: dict, **kwargs: typing.Any
    ) -> dict[base.typing.ClfTarget, float]:
        return self.classifier.predict_proba_one(x, **kwargs)


def _standardised_logistic_regression() -> compose.Pipeline:
    return preprocessing.StandardScaler() | linear_model.LogisticRegression()


register_model(
    "auto",
    "AutoNRRLS(): races exact NR-RLS candidates (raw, polynomial and tree-path features, with "
    "forgetting) online and predicts with the best; the package's recommended start",
    AutoNRRLS,
)
register_model("nrrls", "NRRLS(): NR-RLS, exact online total-error-rate least squares", NRRLS)
register_model(
    "rls",
    "NRRLS(reweight=False): plain ridge recursive least squares (the paper's RLS)",
    lambda: NRRLS(reweight=False),
)
register_model(
    "poly3",
    "PolynomialExtender(degree=3) | NRRLS(): NR-RLS on the paper's reduced polynomial features "
    "of order 3",
    lambda: PolynomialExtender(degree=3) | NRRLS(),
)
register_model(
    "selector",
    "PolynomialOrderSelector(): one PolynomialExtender | NRRLS pipeline per order 1 to 6, "
    "predicting with the best on the recent stream",
    PolynomialOrderSelector,
)
register_model(
    "lr",
    "river linear_model.LogisticRegression() (SGD, default parameters, no scaler)",
    linear_model.LogisticRegression,
    binary_only=True,
)
register_model(
    "lr-std",
    "river preprocessing.StandardScaler() | linear_model.LogisticRegression(): the usual river "
    "recipe, standardised online",
    _standardised_logistic_regression,
    binary_only=True,
)
register_model(
    "lr-wpos",
    "lr-std learning every positive sample with the weight w = n_negatives / n_positives of the "
    "samples so far (this one included; 1 before the first negative), so that both classes "
    "weigh alike",
    lambda: PositiveWeighted(_standardised_logistic_regression()),
    binary_only=True,
)
register_model(
    "hat",
    f"river tree.HoeffdingAdaptiveTreeClassifier(seed={SEED}): a Hoeffding tree that replaces "
    "branches on drift",
    lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=SEED),
)
register_model(
    "arf",
    f"river forest.ARFClassifier(seed={SEED}): adaptive random forest of 10 Hoeffding trees with "
    "drift detectors",
    lambda: forest.ARFClassifier(seed=SEED),
)
register_model("gnb", "river naive_bayes.GaussianNB()", naive_bayes.GaussianNB)


class _MinMaxScaler(preprocessing.MinMaxScaler):
    """river's `river.preprocessing.MinMaxScaler`, except that a feature it has not
    learnt yet becomes 0 (like a constant feature) instead of NaN.

    river's scaler divides by ``max - min = -inf - inf`` for a feature without statistics, so
    the first prediction of a progressive validation (and the first after a new feature appears)
    would get NaN features: NR-RLS rejects them, other models silently predict from NaN.

    """

    def transform_one(self, x: dict) -> dict:
        known = self.min  # a defaultdict: only test membership, never index it for a new name
        if all(name in known for name in x):
            return super().transform_one(x)
        result = super().transform_one({name: v for name, v in x.items() if name in known})
        return {name: result.get(name, 0.0) for name in x}


def feature_steps(
    scale: bool = False, categorical: bool = False
) -> base.Transformer | compose.Pipeline | None:
    """What goes in front of every model (``None``: nothing).

    ``categorical``: the numbers pass (river's `river.compose.SelectType`) beside the strings
    one-hot encoded online (``SelectType(str) | preprocessing.OneHotEncoder()``), so that a text
    column ``c`` of value ``v`` is the feature ``c_v``; a missing value is no feature. ``scale``:
    the numbers are min-max scaled (river's scaler, except that a feature not seen yet is 0, not
    NaN).

    """
    if not categorical:
        return _MinMaxScaler() if scale else None
    numeric: base.Transformer | compose.Pipeline = compose.SelectType(numbers.Number)
    if scale:
        numeric = numeric | _MinMaxScaler()
    return compose.TransformerUnion(
        numeric, compose.SelectType(str) | preprocessing.OneHotEncoder()
    )


def build_model(
    name: str, one_vs_rest: bool = False, scale: bool = False, categorical: bool = False
) -> Model:
    """A fresh model ``name`` of `MODELS`, behind `feature_steps`.

    Parameters
    ----------
    name
        A name of `MODELS`.
    one_vs_rest
        Wrap a binary-only model in `river.multiclass.OneVsRestClassifier`.
    scale
        Put a min-max scaler in front (river's, except that a feature not seen yet is 0, not
        NaN).
    categorical
        One-hot encode the string values (river's `river.preprocessing.OneHotEncoder`).

    """
    spec = MODELS[name]
    model = spec.build()
    if spec.binary_only and one_vs_rest:
        # A pipeline that ends in a classifier is one by delegation, not by river's types.
        model = multiclass.OneVsRestClassifier(typing.cast(base.Classifier, model))
    features = feature_steps(scale, categorical)
    return model if features is None else features | model


#: `binary_view`'s answer for labels that are already ``True``/``False``: kept as given.
AS_GIVEN = object()


def binary_view(labels: collections.Counter) -> typing.Any:
    """How a binary-only model sees labels counted in ``labels`` (in first-seen order):
    `AS_GIVEN` when they are booleans, ``None`` when there are over two classes, else the label
    that becomes ``True`` (the less frequent one, the first seen on a tie)."""
    if all(isinstance(label, bool) for label in labels):
        return AS_GIVEN
    if len(labels) > 2:
        return None
    return min(labels, key=labels.__getitem__)  # a Counter keeps the first-seen order
