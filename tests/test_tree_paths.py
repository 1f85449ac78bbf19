"""TreePathFeatures: the nodes of a sample's path in a Hoeffding tree grown alongside.

Checked against river's own tree (the same parameters, the same stream), a manual
transform-then-learn loop for the pipeline, and the names of every node of the grown tree
recomputed here from the tree's structure.
"""

from __future__ import annotations

import math
import pickle

import pytest
from river import tree
from river.datasets import synth

from river_nrrls import NRRLS, TreePathFeatures
from river_nrrls.tree_paths import _branch_token

GRACE = tree.HoeffdingTreeClassifier(grace_period=30, delta=0.01)  # grows within 1,500 samples


def _agrawal(n: int = 1500, function: int = 2, seed: int = 7) -> list:
    return list(synth.Agrawal(classification_function=function, seed=seed).take(n))


def _node_names(root) -> dict[str, object]:
    """Every node of a river tree by its name (branch choices from the root), from its structure."""
    names: dict[str, object] = {}

    def visit(node, name: str) -> None:
        names[name] = node
        for i, child in enumerate(getattr(node, "children", ()) or ()):
            visit(child, name + (str(i) if i < 10 else f"({i})"))

    if root is not None:
        visit(root, "path=")
    return names


def _split(node) -> tuple | None:
    """A branch's test (feature, threshold); None for a leaf."""
    if not hasattr(node, "children"):
        return None
    return (node.feature, getattr(node, "threshold", getattr(node, "value", None)))


def _assert_same_trees(one: TreePathFeatures, two: TreePathFeatures) -> None:
    """The same grown tree: the same nodes and tests, the same outputs on probe samples.

    (Not the pickles' bytes: river's Gaussian estimators in the leaves each carry a random
    generator seeded from the system, used only to draw samples, never by the tree.)"""
    left, right = _node_names(one.grown_tree._root), _node_names(two.grown_tree._root)
    assert {k: _split(v) for k, v in left.items()} == {k: _split(v) for k, v in right.items()}
    for x, _ in _agrawal(200, seed=123):
        assert one.transform_one(x) == two.transform_one(x)


def test_the_path_is_the_grown_trees_and_the_probabilities_its_prediction():
    stream = _agrawal()
    paths = TreePathFeatures(tree=GRACE)
    reference = tree.HoeffdingTreeClassifier(grace_period=30, delta=0.01)
    for x, y in stream:
        out = paths.transform_one(x)
        nodes = [name for name in out if name.startswith("path=")]
        # the nodes on river's own path through its own tree, named from the structure
        by_node = {id(node): name for name, node in _node_names(reference._root).items()}
        expected = (
            [by_node[id(node)] for node in reference._root.walk(x)]
            if reference._root is not None
            else ["path="]
        )
        assert nodes == expected
        assert all(out[name] == 1.0 for name in nodes)
        probabilities = {k: v for k, v in out.items() if k.startswith("proba=")}
        assert probabilities == {
            f"proba={c!r}": p for c, p in reference.predict_proba_one(x).items()
        }
        assert {k: out[k] for k in x} == x  # the raw features, first
        assert list(out)[: len(x)] == list(x)
        paths.learn_one(x, y)
        reference.learn_one(x, y)
    assert reference.n_nodes > 5  # the tree grew: paths of several depths were compared


def test_names_are_stable_as_the_tree_grows_and_new_nodes_emerge():
    paths = TreePathFeatures(tree=GRACE)
    seen_tests: dict[str, tuple | None] = {}
    previous: set[str] = set()
    emitted: set[str] = set()
    emerged_late = 0
    for i, (x, y) in enumerate(_agrawal(3000)):
        out = paths.transform_one(x)
        new = {name for name in out if name.startswith("path=")} - emitted
        emerged_late += bool(new) and i > 0
        emitted |= new
        paths.learn_one(x, y)
        names = _node_names(paths.grown_tree._root)
        assert previous <= set(names)  # no name ever disappears
        for name, node in names.items():
            test = _split(node)
            if seen_tests.get(name) is not None:
                assert test == seen_tests[name], name  # a branch keeps its test
            seen_tests[name] = test
        previous = set(names)
    assert emerged_late >= 3 and len(previous) > 5
    assert emitted <= previous


def test_deterministic_pickled_and_cloned():
    stream = _agrawal(800)
    one, two = TreePathFeatures(tree=GRACE), TreePathFeatures(tree=GRACE)
    for x, y in stream:
        assert one.transform_one(x) == two.transform_one(x)
        one.learn_one(x, y)
        two.learn_one(x, y)
    _assert_same_trees(one, two)
    copy = pickle.loads(pickle.dumps(one))
    clone = one.clone()
    for x, y in _agrawal(300, seed=8):
        assert copy.transform_one(x) == one.transform_one(x)
        assert set(clone.transform_one(x)) == set(x) | {"path="}  # a fresh tree
        copy.learn_one(x, y)
        one.learn_one(x, y)


def test_a_pipeline_is_the_transform_then_learn_loop():
    """The classifier learns x with the path it had before the tree learnt x."""
    stream = _agrawal(2000, function=1)
    pipeline = TreePathFeatures(tree=GRACE) | NRRLS(forgetting=0.999)
    paths, classifier = TreePathFeatures(tree=GRACE), NRRLS(forgetting=0.999)
    for x, y in stream:
        assert pipeline.predict_proba_one(x) == classifier.predict_proba_one(paths.transform_one(x))
        pipeline.learn_one(x, y)
        z = paths.transform_one(x)
        classifier.learn_one(z, y)
        paths.learn_one(x, y)
    assert pickle.dumps(pipeline["NRRLS"]) == pickle.dumps(classifier)
    assert sum(name.startswith("path=") for name in classifier.weights[True]) > 5


def test_weights_pass_through_a_pipeline_to_the_tree():
    stream = _agrawal(600)
    weighted = TreePathFeatures(tree=GRACE) | NRRLS()
    paths = TreePathFeatures(tree=GRACE)
    for i, (x, y) in enumerate(stream):
        w = 1.0 + (i % 3)
        weighted.learn_one(x, y, w=w)
        paths.learn_one(x, y, w=w)
    _assert_same_trees(weighted["TreePathFeatures"], paths)
    unweighted = TreePathFeatures(tree=GRACE)
    for x, y in stream:
        unweighted.learn_one(x, y)
    assert unweighted.grown_tree.summary != paths.grown_tree.summary  # the weights counted


def test_options_and_the_template():
    x, y = _agrawal(1)[0]
    template = tree.HoeffdingTreeClassifier(grace_period=30, delta=0.01, max_depth=3)
    before = pickle.dumps(template)
    paths = TreePathFeatures(tree=template, raw_features=False, probabilities=False)
    assert paths.transform_one(x) == {"path=": 1.0}
    for x, y in _agrawal(2000):
        paths.learn_one(x, y)
        assert set(paths.transform_one(x)) == set(paths.path_names(x))
    assert pickle.dumps(template) == before  # a template, never trained
    assert paths.grown_tree.grace_period == 30 and paths.grown_tree.height <= 4
    paths.probabilities = True  # an output option takes effect after learning
    assert any(name.startswith("proba=") for name in paths.transform_one(x))
    with pytest.raises(ValueError, match="clone"):
        paths.tree = tree.HoeffdingTreeClassifier()


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"tree": tree.HoeffdingAdaptiveTreeClassifier(seed=1)}, TypeError),
        ({"tree": NRRLS()}, TypeError),
        ({"raw_features": 1}, TypeError),
        ({"probabilities": "yes"}, TypeError),
    ],
)
def test_bad_parameters_are_refused(params, error):
    with pytest.raises(error):
        TreePathFeatures(**params)


def test_a_missing_split_feature_takes_the_trees_most_traversed_branch():
    paths = TreePathFeatures(tree=GRACE)
    for x, y in _agrawal(2000):
        paths.learn_one(x, y)
    x = _agrawal(1, seed=99)[0][0]
    root = paths.grown_tree._root
    partial = {k: v for k, v in x.items() if k != root.feature}
    by_node = {id(node): name for name, node in _node_names(root).items()}
    leaf = root.traverse(partial)  # where river's tree predicts from
    names = paths.path_names(partial)
    assert by_node[id(leaf)] == names[-1]
    assert all(later.startswith(name) for name, later in zip(names, names[1:]))
    walked = list(root.walk(partial))
    assert len(set(map(id, walked))) < len(walked)  # river's walk repeats the child it chose
    assert names == [by_node[id(node)] for node in dict.fromkeys(walked)]
    with_none = {**x, root.feature: None}  # None is missing, as in the rest of the package
    assert paths.transform_one(with_none) == paths.transform_one(partial)


@pytest.mark.parametrize(
    ("x", "y", "w", "error", "match"),
    [
        ({"age": "old"}, True, 1.0, TypeError, "'age'"),
        ({"age": math.inf}, True, 1.0, ValueError, "'age'"),
        ({"age": math.nan}, True, 1.0, ValueError, "'age'"),
        ({"path=0": 1.0}, True, 1.0, ValueError, "'path=0'"),
        ({"proba=True": 1.0}, True, 1.0, ValueError, "'proba=True'"),
        ([1.0], True, 1.0, TypeError, "dict"),
        ({"age": 1.0}, None, 1.0, ValueError, "missing"),
        ({"age": 1.0}, True, 0.0, ValueError, "w"),
        ({"age": 1.0}, True, math.nan, ValueError, "w"),
    ],
)
def test_refused_input_leaves_the_transformer_unchanged(x, y, w, error, match):
    paths = TreePathFeatures(tree=GRACE)
    for xx, yy in _agrawal(200):
        paths.learn_one(xx, yy)
    before = pickle.dumps(paths)
    with pytest.raises(error, match=match):
        paths.learn_one(x, y, w=w)
    if y is not None and w == 1.0:
        with pytest.raises(error, match=match):
            paths.transform_one(x)
    assert pickle.dumps(paths) == before


def test_colliding_names_are_fine_without_the_raw_features():
    paths = TreePathFeatures(raw_features=False)
    paths.learn_one({"path=0": 1.0}, True)
    assert paths.transform_one({"path=0": 1.0}) == {"path=": 1.0, "proba=True": 1.0}


def test_branch_tokens_read_back_unambiguously():
    assert [_branch_token(i) for i in (0, 9, 10, 12)] == ["0", "9", "(10)", "(12)"]
