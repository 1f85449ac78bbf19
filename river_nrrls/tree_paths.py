"""Tree-path features: a one-hot of the nodes on a sample's root-to-leaf path in an online tree."""

from __future__ import annotations

import typing

from river import base
from river.tree import HoeffdingTreeClassifier

from ._checks import check_bool, check_label, check_real, short_repr
from ._locking import OneCallAtATime
from ._parameters import LiveParameters, parameter_names
from ._validation import validate_one

__all__ = ["TreePathFeatures", "tree_template"]

#: The prefix of a node's output name; the rest of the name is the node's branch choices.
PATH_PREFIX = "path="
#: The prefix of a class probability's output name; the rest is ``repr(label)``.
PROBA_PREFIX = "proba="


def _branch_token(choice: int) -> str:
    """One branch choice in a node's name: a digit, or ``(12)`` for a choice beyond 9 (only
    multiway splits have those), so that every name reads back as one sequence of choices."""
    return str(choice) if choice < 10 else f"({choice})"


def ordered_classes(classes: typing.Iterable) -> list:
    """The classes sorted as river's tree sorts them; labels of mixed types (a ``"1"`` among
    bools, an int among strings), which do not compare, by their type's name and then their
    ``repr`` instead: the same order for the same classes, whatever their arrival."""
    try:
        return sorted(classes)
    except TypeError:
        return sorted(classes, key=lambda label: (type(label).__qualname__, repr(label)))


class _PathTree(HoeffdingTreeClassifier):
    """river's Hoeffding tree, which also says which branches a sample takes from its root."""

    def branch_choices(self, x: dict) -> tuple[list[int], typing.Any]:
        """The index of the child taken at every branch on the way from the root to x's leaf,
        and that leaf (None before the first sample).

        The path is river's own: ``walk(x, until_leaf=True)`` follows ``branch_no`` and, where
        x lacks the split feature (or has an unseen value of a multiway split), the most
        traversed child, as `predict_proba_one` does (river's ``walk`` yields such a child twice:
        the repeat is not a branch)."""
        root = self._root
        if root is None:
            return [], None
        choices = []
        parent: typing.Any = None  # a river branch or leaf
        for node in root.walk(x, until_leaf=True):
            if node is parent:  # walk yields the most traversed child twice (once per level)
                continue
            if parent is not None:
                choices.append(next(i for i, child in enumerate(parent.children) if child is node))
            parent = node
        return choices, parent

    def leaf_probabilities(self, x: dict, leaf: typing.Any) -> dict:
        """The class probabilities at ``leaf`` (reached by x), as `predict_proba_one` gives them."""
        proba = {label: 0.0 for label in ordered_classes(self.classes)}
        if leaf is not None:
            proba.update(leaf.prediction(x, tree=self))
        return proba


# base.Transformer as well: river 0.26.1's Pipeline plans a step as a transformer only when it
# is a base.Transformer (base.SupervisedTransformer is not one); otherwise it would take this
# step for a final one and hand the next step the untransformed x when learning.
# base.SupervisedTransformer comes first in the MRO, so `_supervised` is True.
class TreePathFeatures(
    LiveParameters, OneCallAtATime, base.SupervisedTransformer, base.Transformer
):
    """Tree-path features: the nodes of a sample's root-to-leaf path in an online tree.

    The transformer grows a Hoeffding tree (river's `tree.HoeffdingTreeClassifier`,
    deterministic: no random state) on the stream it learns, and maps a sample x to

    - its own features (``raw_features=True``),
    - a one-hot of every node on x's root-to-leaf path in the tree: value 1.0 for each,
    - the tree's class probabilities at x's leaf (``probabilities=True``).

    A linear model on these outputs learns one weight per node, so it can express the tree's
    rule-based concept (thresholds on single features) as well as the linear concept of the raw
    features. In front of `river_nrrls.NRRLS`, which handles features that appear in the middle
    of the stream exactly, the nodes created as the tree grows are new features: the weights of
    the nodes that existed keep their statistics.

    Parameters
    ----------
    tree
        A `river.tree.HoeffdingTreeClassifier` whose parameters the grown tree takes
        (``grace_period``, ``delta``, ``max_depth``, ...); it is a template, never trained
        itself. ``None``: river's defaults. Other tree classes are refused: the adaptive and
        extremely fast trees replace subtrees, which would give a node's name to another node.
    raw_features
        Output x's own features (validated, the missing ones left out) before the nodes.
    probabilities
        Output the tree's class probabilities at x's leaf, one feature per class seen.

    Notes
    -----
    **Names.** A node is named by the branches taken from the root to reach it: the root is
    ``"path="``, its children ``"path=0"`` and ``"path=1"``, their children ``"path=00"``,
    ``"path=01"``, ...; a branch index beyond 9 (multiway splits only) is written in brackets,
    ``"path=0(12)"``. So a node keeps its name as the tree grows: a leaf that splits becomes a
    branch with the same name, and only its children are new names. The probability of class
    ``c`` is ``"proba=" + repr(c)``, e.g. ``"proba=True"``. With ``raw_features=True``, an input
    feature whose name starts with ``"path="`` or ``"proba="`` is refused (``ValueError``).

    **Which tree transforms x.** ``transform_one`` uses the tree as it is; ``learn_one`` then
    grows it. river's `compose.Pipeline` calls a supervised transformer's ``transform_one``
    *before* its ``learn_one`` and hands the next step the transformed x: in
    ``TreePathFeatures() | NRRLS()`` the classifier learns each sample with the path it had
    in the tree before that sample, which is the path it saw when it predicted the sample
    (prequential evaluation: predict, then learn). The pipeline is therefore the loop
    ``z = paths.transform_one(x); model.learn_one(z, y); paths.learn_one(x, y)``.

    **Missing values and refused samples.** ``None`` values are missing (absent); the tree
    sends a sample that lacks a split feature down the most traversed branch, as river's tree
    predicts. Non-numeric values (the tree would take them for nominal features) and non-finite
    ones raise a ``TypeError``/``ValueError`` naming the feature, a missing label a
    ``ValueError``; the transformer is then unchanged.

    The labels are class labels (any hashable, of mixed types too: the probabilities of classes
    that do not compare are ordered by type name and ``repr``); the tree treats every distinct
    value as a class.

    **Determinism.** No random draw enters the tree's growth or its paths: two transformers with
    the same parameters that learn the same stream give the same outputs. (River's Gaussian
    estimators in the leaves each carry a random generator, seeded by the system, that only
    draws samples: the pickles of two such transformers differ in those bytes alone.)

    Examples
    --------

    >>> from river import evaluate, metrics, tree
    >>> from river.datasets import synth
    >>> from river_nrrls import NRRLS, TreePathFeatures

    >>> paths = TreePathFeatures(tree=tree.HoeffdingTreeClassifier(grace_period=50))
    >>> paths.transform_one({"age": 30.0, "salary": 50_000.0})
    {'age': 30.0, 'salary': 50000.0, 'path=': 1.0}

    On river's Agrawal stream, whose concept is a set of thresholds on age and salary, NR-RLS
    on the raw features alone is a poor fit; the nodes of the tree's paths help it:

    >>> agrawal = list(synth.Agrawal(classification_function=2, seed=42).take(5000))
    >>> evaluate.progressive_val_score(agrawal, NRRLS(), metrics.GeometricMean())
    GeometricMean: 55.91%
    >>> model = TreePathFeatures() | NRRLS()
    >>> evaluate.progressive_val_score(agrawal, model, metrics.GeometricMean())
    GeometricMean: 70.45%

    The nodes a sample goes through, named by the branches taken from the root:

    >>> model["TreePathFeatures"].path_names(agrawal[0][0])
    ['path=', 'path=0', 'path=01']

    References
    ----------
    [^1]: Domingos, P. and Hulten, G. (2000). Mining high-speed data streams. In Proceedings of
        the 6th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining,
        71-80.
    [^2]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    # The grown tree is shaped by the template: a new template needs a fresh transformer.
    _state_parameters = frozenset({"tree"})

    def __init__(
        self,
        tree: HoeffdingTreeClassifier | None = None,
        raw_features: bool = True,
        probabilities: bool = True,
    ):
        self.tree = tree
        self.raw_features = raw_features
        self.probabilities = probabilities
        self._tree = _PathTree(**_template_parameters(tree))
        check_bool("raw_features", raw_features)
        check_bool("probabilities", probabilities)
        self._new_lock()  # one call at a time (`OneCallAtATime`)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {
            "tree": HoeffdingTreeClassifier(grace_period=20, max_depth=4),
            "raw_features": False,
            "probabilities": False,
        }

    # ------------------------------------------------------------------ samples

    def _clean(self, x: dict) -> dict:
        """x's numeric values (the missing ones left out), its names checked; raises before any
        change."""
        clean = validate_one(x)
        if self.raw_features:
            for name in clean:
                if isinstance(name, str) and name.startswith((PATH_PREFIX, PROBA_PREFIX)):
                    raise ValueError(
                        f"feature {name!r} would collide with the names of the tree's outputs "
                        f"(which start with {PATH_PREFIX!r} and {PROBA_PREFIX!r}): rename it, "
                        "or set raw_features=False"
                    )
        return clean

    def _names(self, choices: list[int]) -> list[str]:
        names = [PATH_PREFIX]
        for choice in choices:
            names.append(names[-1] + _branch_token(choice))
        return names

    # --------------------------------------------------------------------- API

    def learn_one(  # type: ignore[override]  # (base.Transformer's, for Pipeline, has no y)
        self, x: dict, y: base.typing.ClfTarget, *, w: float = 1.0
    ) -> None:
        """Grow the tree with one sample (the sample's transform is the one before this call).

        Parameters
        ----------
        x
            A dict of numeric features.
        y
            Its class label.
        w
            The sample's weight, passed to the tree.

        """
        with self._lock:
            clean = self._clean(x)
            label = check_label(y)
            weight = check_real("w", w, low=0.0, low_open=True)
            self._tree.learn_one(clean, label, w=weight)

    def transform_one(self, x: dict) -> dict:
        """x's features, the nodes on its path (1.0 each), the class probabilities at its leaf."""
        with self._lock:
            clean = self._clean(x)
            choices, leaf = self._tree.branch_choices(clean)
            out = dict(clean) if self.raw_features else {}
            out.update(dict.fromkeys(self._names(choices), 1.0))
            if self.probabilities:
                proba = self._tree.leaf_probabilities(clean, leaf)
                out.update({f"{PROBA_PREFIX}{label!r}": p for label, p in proba.items()})
            return out

    def path_names(self, x: dict) -> list[str]:
        """The names of the nodes on x's root-to-leaf path, from the root."""
        with self._lock:
            clean = self._clean(x)
            return self._names(self._tree.branch_choices(clean)[0])

    @property
    def grown_tree(self) -> HoeffdingTreeClassifier:
        """The tree grown so far: read or draw it, do not train it."""
        return self._tree


#: The tree `AutoNRRLS` grows by default (``tree=None``): river's Hoeffding tree, splitting
#: sooner than river's defaults (``grace_period=200, delta=1e-7``), so that its paths hold the
#: thresholds of a rule-based concept within the memory of a forgetting NR-RLS after a drift
AUTO_GRACE_PERIOD, AUTO_DELTA = 50, 1e-5


def tree_template(tree: typing.Any) -> HoeffdingTreeClassifier:
    """The template of `AutoNRRLS`'s tree: ``tree`` (checked as `TreePathFeatures` checks it),
    or None: river's tree with ``grace_period=AUTO_GRACE_PERIOD, delta=AUTO_DELTA``."""
    if tree is None:
        return HoeffdingTreeClassifier(grace_period=AUTO_GRACE_PERIOD, delta=AUTO_DELTA)
    _template_parameters(tree)  # (refuses other trees)
    return tree.clone()


def _template_parameters(template: typing.Any) -> dict:
    """The parameters of a tree template (None: river's defaults); other trees are refused."""
    if template is None:
        return {}
    if type(template) is not HoeffdingTreeClassifier:
        raise TypeError(
            "tree must be a river tree.HoeffdingTreeClassifier (its parameters are used) or "
            f"None, got {short_repr(template)}"
        )
    fresh = template.clone()  # the parameters themselves, never the template's own objects
    return {name: getattr(fresh, name) for name in parameter_names(HoeffdingTreeClassifier)}
