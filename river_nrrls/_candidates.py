"""AutoNRRLS's own layer: its candidate models, each one set of exact NR-RLS statistics.

Below `AutoNRRLS` (``auto.py``, its one user) and above the estimators it composes, used
through their internal interfaces only:

- `PolynomialModels`: one forgetting factor's polynomial orders (Toh's reduced model; order 1
  is the raw features) from ONE expansion of every sample, the highest order's (the order
  selector's `NestedOrders`: every order's NR-RLS learns its part and is solved as its
  pipeline's would be).
- `TreePathModel`: one forgetting factor's `NRRLS` on the features of a `TreePathFeatures`
  (the raw features, the nodes of the sample's root-to-leaf path, the tree's probabilities),
  the tree being shared by every factor and grown by `AutoNRRLS` itself.

Both answer the race the same way: `fresh` gives the scorer of the present statistics (what a
prediction now would use), `freeze` one to keep for a block of samples (lazy scoring),
`predictions` every candidate's prediction of a prepared `Sample` with a scorer, `learn`
teaches the statistics, `predict` answers for one candidate from the present statistics.

"""

from __future__ import annotations

import copy
import typing

from river import compose

from ._orders import NestedOrders, NestedSolution, label_of
from .nrrls import NRRLS
from .poly import Expansion, PolynomialExtender

__all__ = ["Candidate", "PolynomialModels", "Sample", "TreePathModel", "feature_map"]


class Candidate(typing.NamedTuple):
    """One candidate of the race: a feature map and a forgetting factor."""

    features: str  # "raw" (order 1), "poly2", "poly3", ... or "tree"
    forgetting: float


class Sample(typing.NamedTuple):
    """A sample as every candidate reads it, prepared once."""

    expansion: Expansion | None  # the highest order's expansion (None: no polynomial orders)
    paths: dict | None  # the tree-path features (None: no tree)


def feature_map(order: int) -> str:
    """The name of polynomial order r's feature map: order 1 is the raw features."""
    return "raw" if order == 1 else f"poly{order}"


class PolynomialModels:
    """Every polynomial order of one forgetting factor, from one `NestedOrders`."""

    def __init__(self, orders: tuple[int, ...], forgetting: float, template: NRRLS):
        self.orders = orders
        self.forgetting = forgetting
        self.nested = NestedOrders(
            orders, PolynomialExtender(), template.clone({"forgetting": forgetting})
        )

    @property
    def names(self) -> list[str]:
        return [feature_map(order) for order in self.orders]

    @property
    def model(self) -> NRRLS:
        """The highest order's NR-RLS (its statistics serve every order)."""
        return self.nested.model

    def fresh(self) -> NestedSolution:
        return self.nested.solve()

    def freeze(self) -> NestedSolution:
        return self.nested.solve()  # (a new solution whenever the statistics change)

    def fits(self, scorer: NestedSolution) -> bool:
        """Whether a frozen solution still reads the present columns (new features regroup
        them)."""
        return scorer.columns.stop == self.nested.model.statistics.dim

    def predictions(self, scorer: NestedSolution, sample: Sample, labels: bool) -> list:
        assert sample.expansion is not None
        return self.nested.predictions(scorer, sample.expansion.values, labels)

    def learn(self, sample: Sample, y: typing.Hashable, weight: float) -> None:
        assert sample.expansion is not None
        self.nested.learn(sample.expansion, y, weight)

    def check_learnable(self, sample: Sample, y: typing.Hashable, weight: float) -> None:
        """Raise what learning the sample would refuse (the highest order's statistics)."""
        assert sample.expansion is not None
        self.nested.model.check_learnable(sample.expansion.values, y, weight)

    def nbytes_after(self, sample: Sample, y: typing.Hashable) -> int:
        assert sample.expansion is not None
        return self.nested.nbytes_after(sample.expansion, y)

    def predict(self, x: dict, position: int, labels: bool, paths: typing.Callable) -> typing.Any:
        """Order ``orders[position]``'s class (``labels``) or probabilities for ``x``, as its
        pipeline ``PolynomialExtender(r) | NRRLS`` gives them."""
        nested = self.nested
        classes, outputs = nested.order_outputs(x, self.orders[position])
        if outputs is None:
            return None if labels else {}
        return label_of(classes, outputs) if labels else nested.probabilities(classes, outputs)

    def pipeline(self, position: int, tree: typing.Any) -> compose.Pipeline:
        return self.nested.pipeline(self.orders[position])


class TreePathModel:
    """One forgetting factor's `NRRLS` on the tree-path features."""

    names = ["tree"]

    def __init__(self, forgetting: float, template: NRRLS):
        self.forgetting = forgetting
        self.model = template.clone({"forgetting": forgetting})

    def fresh(self) -> NRRLS:
        return self.model

    def freeze(self) -> NRRLS:
        return copy.deepcopy(self.model)  # (solves once, at its first prediction)

    def fits(self, scorer: NRRLS) -> bool:
        return True  # (a feature it has not seen is dropped, as NRRLS drops any)

    def predictions(self, scorer: NRRLS, sample: Sample, labels: bool) -> list:
        assert sample.paths is not None
        if labels:
            return [scorer.predict_one(sample.paths)]
        return [scorer.predict_proba_one(sample.paths)]

    def learn(self, sample: Sample, y: typing.Hashable, weight: float) -> None:
        assert sample.paths is not None
        if weight == 1.0:
            self.model.learn_one(sample.paths, y)
        else:
            self.model.learn_one(sample.paths, y, w=weight)

    def nbytes_after(self, sample: Sample, y: typing.Hashable) -> int:
        assert sample.paths is not None
        return self.model.nbytes_after(sample.paths, y)

    def predict(self, x: dict, position: int, labels: bool, paths: typing.Callable) -> typing.Any:
        features = paths(x)
        return (
            self.model.predict_one(features) if labels else self.model.predict_proba_one(features)
        )

    def pipeline(self, position: int, tree: typing.Any) -> compose.Pipeline:
        return compose.Pipeline(copy.deepcopy(tree), copy.deepcopy(self.model))
