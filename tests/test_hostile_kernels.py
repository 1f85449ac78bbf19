"""Hostile input on the compiled kernels and on the Python paths: nothing may crash.

Feature dicts are read where the compiled kernels hold borrowed references (``refill``), so the
input here is built to change under the reader: keys whose ``__eq__`` or ``__hash__`` insert
into, delete from or replace values of the dict being encoded, keys that re-enter the model, a
second thread mutating a dict that the model reads, dict and float subclasses, huge dicts (two
threads on one model: tests/test_refused_calls.py).
Every test runs on both paths (``kernel_path``) and, in CI, under AddressSanitizer
(``.ci/sanitize``). What is checked besides surviving: a refused call raises ValueError,
TypeError or RuntimeError and leaves the model as it was (pickles compared); an accepted one
learned or predicted the sample as it was before the change or as it is after it.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import sys
import threading
import time

import numpy as np
import pytest
from kernel_paths import (
    kernel_path,  # noqa: F401  (a fixture)
    needs_kernels,
)

from river_nrrls import NRRLS, _native

REFUSALS = (ValueError, TypeError, RuntimeError)


class Key:
    """A feature name equal to (and hashing like) its ``name``; the armed ``trap`` runs once, in
    the next ``__eq__`` (or ``__hash__``, as ``where`` says) of any Key."""

    trap = None
    where = "eq"

    def __init__(self, name: str):
        self.name = name

    @classmethod
    def spring(cls, where: str) -> None:
        if cls.trap is not None and cls.where == where:
            trap, cls.trap = cls.trap, None
            trap()

    def __hash__(self):
        Key.spring("hash")
        return hash(self.name)

    def __eq__(self, other):
        Key.spring("eq")
        return isinstance(other, Key) and other.name == self.name

    def __repr__(self):
        return f"Key({self.name!r})"


@pytest.fixture(autouse=True)
def _disarmed():
    Key.trap, Key.where = None, "eq"
    yield
    Key.trap, Key.where = None, "eq"


def _sample(i: int, extra: bool = False) -> dict:
    x = {Key("a"): float(i % 3), Key("b"): float(i % 5) - 2.0, Key("c"): float(i % 7) / 3.0}
    if extra:
        x[Key("new")] = 0.5  # unknown to the model: the encoding looks its key up
    return x


def _warm_model() -> NRRLS:
    model = NRRLS()
    for i in range(30):
        model.learn_one(_sample(i), i % 2 == 0)
    model.predict_one(_sample(3))  # the encoding of this sample is cached
    return model


def _plain(x: dict) -> dict:
    """A snapshot of a feature dict with fresh, trap-free keys."""
    return {Key(key.name) if isinstance(key, Key) else key: value for key, value in dict.items(x)}


def _weights(model) -> dict:
    return {
        label: {getattr(k, "name", k): w for k, w in weights.items()}
        for label, weights in model.weights.items()
    }


def _same_weights(model, twin) -> bool:
    mine, theirs = _weights(model), _weights(twin)
    if mine.keys() != theirs.keys():
        return False
    for label in mine:
        a, b = mine[label], theirs[label]
        if set(a) - set(b) or any(
            abs(w - b.get(k, 0.0)) > 1e-9 * (1 + abs(w)) for k, w in a.items()
        ):
            return False
        if any(abs(w) > 1e-12 for k, w in b.items() if k not in a):
            return False
    return True


def _learned_one_of(model, make, candidates, label) -> bool:
    """Whether ``model`` is a fresh ``make()`` that learned one of ``candidates`` with ``label``."""
    for x in candidates:
        twin = make()
        try:
            twin.learn_one(_plain(x), label)
        except REFUSALS:
            continue
        if _same_weights(model, twin):
            return True
    return False


MUTATIONS = {
    "insert": lambda x: x.__setitem__(Key("inserted"), 1.0),
    "delete": lambda x: x.popitem(),
    "replace": lambda x: [x.__setitem__(key, 5.0) for key in list(x)],
    "replace with nan": lambda x: [x.__setitem__(key, float("nan")) for key in list(x)],
    "clear": lambda x: x.clear(),
}


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("call", ["predict_one", "learn_one"])
@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("where", ["eq", "hash"])
def test_keys_that_change_the_dict_being_encoded(where, mutation, call):
    model = _warm_model()
    before = pickle.dumps(model)
    # __eq__: the cached keys are compared with x's; __hash__: x has a key the model looks up
    x = _sample(3, extra=where == "hash")
    snapshot = _plain(x)
    Key.where = where
    Key.trap = lambda: MUTATIONS[mutation](x)
    try:
        result = model.learn_one(x, True) if call == "learn_one" else model.predict_one(x)
    except REFUSALS:
        assert pickle.dumps(model) == before  # refused: the model as it was
        return
    finally:
        assert Key.trap is None, "the trap did not run: the test tests nothing"
    after = _plain(x)
    if call == "predict_one":
        assert pickle.dumps(model) == before
        reference = pickle.loads(before)
        candidates = []
        for sample in (snapshot, after):  # the dict before or after the change
            try:
                candidates.append(reference.predict_one(sample))
            except REFUSALS:  # (after it, the dict may hold values a model refuses)
                continue
        assert result in candidates
    else:
        assert _learned_one_of(model, _warm_model, [snapshot, after], True)


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("outer", ["predict_one", "learn_one"])
@pytest.mark.parametrize("inner", ["predict_one", "learn_one"])
def test_keys_that_re_enter_the_model(inner, outer):
    model = _warm_model()
    other, x = _sample(4, extra=True), _sample(3)
    learned = []  # the samples whose learn_one returned, in that order

    def step(call, sample, label):
        if call == "learn_one":
            model.learn_one(sample, label)
            learned.append((_plain(sample), label))
        else:
            model.predict_one(sample)

    Key.trap = lambda: step(inner, other, False)
    try:
        step(outer, x, True)
    except REFUSALS:
        pass  # a documented refusal of re-entry would do: the refused calls learned nothing
    assert Key.trap is None
    counts = _warm_model().n_samples
    for _, label in learned:
        counts[label] += 1.0
    assert model.n_samples == counts  # no update lost, none counted twice
    twins = []
    for order in (learned, learned[::-1]):
        twin = _warm_model()
        for sample, label in order:
            twin.learn_one(_plain(sample), label)
        twins.append(twin)
    assert any(_same_weights(model, twin) for twin in twins)
    probabilities = model.predict_proba_one(_plain(x))
    assert np.isfinite(list(probabilities.values())).all()


@dataclasses.dataclass(frozen=True)
class Feature:
    name: str


def _race(model, x: dict, mutate, seconds: float) -> list:
    """``model`` steps on ``x`` while a second thread runs ``mutate(x, rng)``; the exceptions
    of the stepping thread. The mutating thread must raise nothing."""
    stop = threading.Event()
    failures = []

    def mutator():
        rng = np.random.default_rng(0)
        try:
            while not stop.is_set():
                mutate(x, rng)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    errors = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings per second
    thread = threading.Thread(target=mutator)
    thread.start()
    try:
        end = time.perf_counter() + seconds
        step = 0
        while time.perf_counter() < end:
            try:
                model.predict_one(x)
                model.learn_one(x, step % 3 == 0)
            except REFUSALS as error:
                errors.append(error)
            step += 1
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert not failures, failures
    return errors


def _replace_values(x, rng):
    for key in list(x):
        x[key] = float(rng.normal())


def _insert_and_delete(x, rng):
    keys = list(x)
    x[keys[0]] = float(rng.normal())
    if len(keys) > 3:
        x.pop(keys[-1], None)
    else:
        x[type(keys[0])(f"extra{int(rng.integers(5))}")] = 1.0


def _refill_with_fresh_keys(x, rng):
    """A producer reusing the dict for its next sample: the same names, new key objects (equal
    to the remembered ones, not the same), in the same order."""
    names = [getattr(key, "name", key) for key in x] or [f"f{j}" for j in range(6)]
    make = type(next(iter(x), "f0"))
    x.clear()
    x.update({make("".join(name)): float(rng.normal()) for name in names})


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize(
    "mutate",
    [_replace_values, _insert_and_delete, _refill_with_fresh_keys],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("key_type", [str, Feature], ids=["str keys", "frozen dataclass keys"])
def test_a_second_thread_mutating_the_dict_being_learned(key_type, mutate):
    model = NRRLS()
    x = {key_type(f"f{j}"): float(j) / 3.0 for j in range(6)}
    errors = _race(model, x, mutate, seconds=0.4)
    assert all(isinstance(error, REFUSALS) for error in errors)
    state = pickle.loads(pickle.dumps(model))
    clean = {key_type(f"f{j}"): 0.25 * j for j in range(6)}
    for copy_ in (model, state):
        probabilities = copy_.predict_proba_one(clean)
        assert np.isfinite(list(probabilities.values())).all()
    assert _same_weights(model, state)


def _step_unless_refused(model, call: str, x: dict) -> bool:
    """``model.learn_one(x, True)`` or ``model.predict_one(x)``; whether it learned. A refusal
    or a prediction must leave the model as it was."""
    before = pickle.dumps(model)
    try:
        model.learn_one(x, True) if call == "learn_one" else model.predict_one(x)
    except REFUSALS:
        assert pickle.dumps(model) == before
        return False
    if call == "predict_one":
        assert pickle.dumps(model) == before
    return call == "learn_one"


class LyingDict(dict):
    """A dict whose Python-level views disagree with its storage."""

    def __len__(self):
        return 1

    def __iter__(self):
        return iter([Key("a")])

    def keys(self):
        return [Key("zz")]

    def values(self):
        return [float("nan")]

    def items(self):
        return [(Key("b"), 7.0)]

    def __getitem__(self, key):
        raise KeyError(key)


class CountingDict(dict):
    pass


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("kind", [LyingDict, CountingDict])
@pytest.mark.parametrize("call", ["predict_one", "learn_one"])
def test_dict_subclasses(kind, call):
    model = _warm_model()
    x = kind(_sample(3))
    if _step_unless_refused(model, call, x):  # learned what the dict holds, or what its views say
        views = {key: value for key, value in x.items()}
        candidates = [dict(dict.items(x)), views]
        assert _learned_one_of(model, _warm_model, candidates, True)


class Loud(float):
    """A float subclass whose Python-level methods change the dict that holds it."""

    target: dict = {}

    def __float__(self):
        self.target.clear()
        return 1e308

    def __eq__(self, other):
        self.target[Key("eq")] = 1.0
        return False

    __hash__ = float.__hash__

    def __repr__(self):
        self.target.clear()
        return "Loud"


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("call", ["predict_one", "learn_one"])
@pytest.mark.parametrize("value", [Loud(0.5), Loud(float("nan")), Loud(1e308)], ids=repr)
def test_float_subclasses(value, call):
    model = _warm_model()
    x = _sample(3)
    Loud.target = x
    x[Key("b")] = value
    snapshot = _plain(x)
    if _step_unless_refused(model, call, x):
        candidates = [
            {k: float.__float__(v) if isinstance(v, float) else v for k, v in snapshot.items()},
            _plain(x),
        ]
        assert _learned_one_of(model, _warm_model, candidates, True)


@needs_kernels
def test_refill_of_a_huge_dict():
    n_keys = 200_000
    keys = tuple(f"k{i}" for i in range(n_keys))
    columns = np.arange(1, n_keys + 1, dtype=np.intp)
    vector = np.zeros(n_keys + 1)
    vector[0] = 1.0
    vector.flags.writeable = False
    x = dict.fromkeys(keys, 0.0)
    assert _native.refill(x, keys, vector, columns, 1, 1.0) is vector
    x[keys[-1]] = 2.5
    refilled = _native.refill(x, keys, vector, columns, 1, 1.0)
    assert refilled[-1] == 2.5 and refilled[:-1].tolist() == vector[:-1].tolist()
    x[f"k{n_keys}"] = 1.0  # one key more
    assert _native.refill(x, keys, vector, columns, 1, 1.0) is None


def test_a_wide_dict_on_both_paths_gives_the_same_model(monkeypatch):
    rng = np.random.default_rng(2)
    rows = [{f"f{j}": float(v) for j, v in enumerate(row)} for row in rng.normal(size=(12, 300))]
    labels = [i % 3 == 0 for i in range(len(rows))]

    def run():
        model = NRRLS()
        outputs = []
        for x, y in zip(rows, labels):
            model.predict_one(x)  # encoded twice, as in river's loop: the cache's refill
            model.learn_one(x, y)
            outputs.append(model.decision_one(x))
        return outputs

    first = run()
    from kernel_paths import without_kernels

    without_kernels(monkeypatch)
    second = run()
    for mine, theirs in zip(first, second):
        for label in mine:
            assert mine[label] == pytest.approx(theirs[label], rel=1e-8, abs=1e-10)


def test_a_model_survives_a_deep_copy_taken_inside_a_key():
    model = _warm_model()
    copies = []
    Key.trap = lambda: copies.append(copy.deepcopy(model))
    model.learn_one(_sample(3), True)
    assert Key.trap is None and copies
    copies[0].learn_one(_plain(_sample(3)), True)
    assert _same_weights(copies[0], model)
