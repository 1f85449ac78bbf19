"""Polynomial feature expansions of the NR-RLS paper: Toh's reduced model (RM) and the full one."""

from __future__ import annotations

import itertools
import numbers
import typing

import numpy as np
from river import base

from ._checks import row_name, short_repr
from ._frames import as_frame, native_frame
from ._index import sort_features
from ._parameters import LiveParameters
from ._validation import validate_frame, validate_one

__all__ = ["PolynomialExtender"]

_KINDS = ("reduced", "full")
_AGGREGATES = ("sum", "mean")
_BIAS_NAME = "bias"
_CACHE_SIZE = 16  # layouts remembered (one per distinct ordered feature set)


class _Layout(typing.NamedTuple):
    """How one ordered set of input features is expanded (built once, then cached)."""

    order: np.ndarray  # input position (in the caller's order) of every sorted feature
    names: list[str]  # output names, in column order
    parents: list[tuple[np.ndarray, np.ndarray]]  # "full": per degree >= 2, (prefix, last)
    orders: list[int]  # the lowest degree whose expansion has the column, per column


class Expansion(typing.NamedTuple):
    """One sample's expansion with the names and orders of its columns (internal: what
    `PolynomialExtender.expand_with_layout` gives the order selector). ``names`` and
    ``orders`` are the extender's cached lists: read them, never change them."""

    values: dict[str, float]  # transform_one's output: {term name: value}, in column order
    names: list[str]  # the output names, in column order (the keys of ``values``)
    orders: list[int]  # the order of every output (`PolynomialExtender.output_orders`)


def _power_name(name: str, power: int) -> str:
    return name if power == 1 else f"{name}^{power}"


def _check_unique(names: list[str], sources: list[tuple]) -> None:
    """Raise if two output columns got the same name (input names such as ``"a^2"``)."""
    if len(set(names)) == len(names):
        return
    first: dict[str, tuple] = {}
    for name, source in zip(names, sources):
        if name in first:
            raise ValueError(
                f"the output name {name!r} is produced both by {first[name]!r} and by "
                f"{source!r}; rename the input features so that their expansion is unambiguous"
            )
        first[name] = source


def _reduced_names(features: list, degree: int, aggregate: str, include_bias: bool) -> list[str]:
    labels = list(map(str, features))
    names = [_BIAS_NAME] if include_bias else []
    sources: list[tuple] = [("bias",)] if include_bias else []
    # Block 2: x_j^k, k = 1..r (k-major, so that k = 1 gives the inputs themselves).
    for power in range(1, degree + 1):
        names.extend(_power_name(label, power) for label in labels)
        sources.extend((feature, power) for feature in features)
    if degree > 1:
        # Block 3: (sum x)^k, k = 1..r; block 4: x_j (sum x)^(k-1), k = 2..r.
        names.extend(_power_name(aggregate, power) for power in range(1, degree + 1))
        sources.extend((aggregate, power) for power in range(1, degree + 1))
        for power in range(1, degree):
            names.extend(f"{label}*{_power_name(aggregate, power)}" for label in labels)
            sources.extend((feature, aggregate, power) for feature in features)
    _check_unique(names, sources)
    return names


def _reduced_orders(n_inputs: int, degree: int, include_bias: bool) -> list[int]:
    """The lowest degree r whose RM has each column, in `_reduced_names`'s column order."""
    orders = [1] if include_bias else []
    for power in range(1, degree + 1):
        orders.extend([power] * n_inputs)  # x_j^k: from degree k on
    if degree > 1:
        orders.extend(max(power, 2) for power in range(1, degree + 1))  # S^k: from max(k, 2)
        for power in range(1, degree):
            orders.extend([power + 1] * n_inputs)  # x_j S^(k-1): from degree k on
    return orders


def _full_layout(features: list, degree: int, include_bias: bool):
    """Names and (prefix, last) index pairs of every monomial of degree 1..r, river's order."""
    labels = list(map(str, features))
    positions = range(len(features))
    names = [_BIAS_NAME] if include_bias else []
    sources: list[tuple] = [("bias",)] if include_bias else []
    names.extend(labels)
    sources.extend((feature,) for feature in features)
    orders = [1] * len(names)  # the constant and the inputs: from degree 1 on
    parents = []
    # monomial (sorted positions) -> column in its block
    previous: dict[tuple[int, ...], int] = {(j,): j for j in positions}
    for size in range(2, degree + 1):
        current: dict[tuple[int, ...], int] = {}
        prefix, last = [], []
        for combo in itertools.combinations_with_replacement(positions, size):
            current[combo] = len(current)
            prefix.append(previous[combo[:-1]])
            last.append(combo[-1])
            names.append("*".join(labels[j] for j in combo))
            sources.append(tuple(features[j] for j in combo))
            orders.append(size)  # a monomial of degree s: from degree s on
        parents.append((np.asarray(prefix, dtype=np.intp), np.asarray(last, dtype=np.intp)))
        previous = current
    _check_unique(names, sources)
    return names, parents, orders


def _check_degree(degree: typing.Any) -> int:
    if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral):
        raise TypeError(f"degree must be a positive int, got {short_repr(degree)}")
    if degree < 1:
        raise ValueError(f"degree must be a positive int, got {short_repr(degree)}")
    return int(degree)


class PolynomialExtender(LiveParameters, base.MiniBatchTransformer):
    """Polynomial expansion of the NR-RLS paper: Toh's reduced model (RM) or the full one.

    The NR-RLS paper makes its linear learner nonlinear with Toh's *reduced multivariate
    polynomial model* (RM, Toh, Tran and Srinivasan 2004) of order r. For ``l`` input features
    ``x_1..x_l`` and ``S = x_1 + ... + x_l``, the ``kind="reduced"`` expansion of order ``r >= 2``
    is, in column order,

    - ``x_j^k`` for k = 1..r (``r l`` terms),
    - ``S^k`` for k = 1..r (``r`` terms),
    - ``x_j S^(k-1)`` for k = 2..r (``(r - 1) l`` terms),

    that is ``K = r + l (2r - 1)`` outputs, ``1 + r + l (2r - 1)`` with ``include_bias=True``:
    it grows linearly in ``l``, where the full polynomial has ``C(l + r, r) - 1`` terms (376,739
    for l = 22 and r = 6). Order 1 is the linear model: the inputs themselves (the column ``S``
    would be an exact copy of their sum, so it is left out).

    ``kind="full"`` gives every monomial of degree 1..r, with the same values and names as
    `river.feature_extraction.PolynomialExtender` (which has no mini-batch form).

    Parameters
    ----------
    degree
        The order r of the polynomial, a positive int.
    kind
        ``"reduced"`` (Toh's RM, the paper's choice) or ``"full"`` (every monomial).
    include_bias
        Add the constant feature ``"bias"`` equal to 1 (RM's ``alpha_0`` term). Leave it off in
        front of `river_nrrls.NRRLS`, which has its own intercept.
    aggregate
        ``"sum"`` (the paper): the RM terms use ``S = sum_j x_j``. ``"mean"`` (**a deviation from
        the paper**): they use ``S / n_features`` instead. It is a rescaling of columns only (the
        model spans the same functions), but for inputs in [0, 1] ``S^r`` reaches ``l^r``
        (1.4e11 for l = 72, r = 6) whereas the mean stays in [0, 1]. With a ridge b > 0 the
        solution differs: with the sum, the same b hardly regularises the weights of the huge
        ``S`` columns, and the least-squares system stays ill-conditioned even after rescaling.
        ``benchmarks/results/poly_conditioning.md`` measures it on bundled data sets (the
        polynomial guide): at high orders the sum's systems are not determined in double
        precision where the mean's stay well conditioned, and the mean's prequential G-mean is
        as high or higher. Only for ``kind="reduced"``.
    n_features
        The ``l`` that ``aggregate="mean"`` divides by (required then, and only then). It is a
        *constant* of the stream, for instance ``dataset.n_features``, not the number of
        features present in the current sample: absent features count as zero in the mean, so
        that a feature that appears later never changes the past values of the ``S`` columns
        (this is what keeps NR-RLS exact when features emerge). A stream with more features
        than ``n_features`` still works, only the "mean" can then exceed the inputs' range.

    Notes
    -----
    **Output names** are strings, stable across calls, and the same for ``transform_one`` and
    ``transform_many``. With ``name = str(feature)`` and ``agg`` the word ``"sum"`` or ``"mean"``
    (written ``agg`` below):

    - ``x_j^k``: ``name`` for k = 1 (the input itself), ``name^k`` for k >= 2, e.g. ``"bmi^3"``;
    - ``S^k``: ``agg`` for k = 1, ``agg^k`` for k >= 2, e.g. ``"sum^2"`` (never tied to a feature);
    - ``x_j S^(k-1)``: ``name*agg`` for k = 2, ``name*agg^(k-1)`` for k >= 3, e.g.
      ``"bmi*sum^2"``;
    - full kind: river's names, the feature names of a monomial in sorted order joined by
      ``"*"``, e.g. ``"age*bmi*bmi"``;
    - the constant: ``"bias"``.

    If two inputs would give the same output name (say features ``"a"`` and ``"a^2"``, or ``1``
    and ``"1"``, or a feature called ``"sum"``) the call raises a ``ValueError`` naming both.

    **Missing values.** A feature that is absent from ``x`` (or ``None``, or a ``NaN`` cell of a
    DataFrame) counts as zero: it adds nothing to ``S`` and gets no ``x_j`` columns of its own
    in ``transform_one`` (``transform_many`` writes zeros in the columns of a feature that is
    observed in other rows, and no columns for a feature that is missing from every row). The
    ``S`` columns are always there. The order of the keys of ``x`` does not matter: features
    are expanded in a deterministic sorted order. Non-numeric or non-finite values, and values
    whose expansion would overflow, raise a ``TypeError``/``ValueError`` naming the feature.

    The transformer is stateless (``learn_one`` does nothing); ``transform_many`` is vectorised
    over the whole frame.

    **Nesting.** Both kinds are nested in the degree: the outputs of degree r are outputs of
    every higher degree R, with the same names and the same values bit for bit (every term is
    computed by the same operations whatever the degree), and degree R adds the terms of orders
    r + 1..R: ``x_j^k`` and ``x_j S^(k-1)`` have order k, ``S^k`` order max(k, 2) (order 1 has no
    ``S``), a monomial of degree k order k, the constant order 1. `output_orders` gives the
    order of every output. `PolynomialOrderSelector` builds on it: the least-squares system of
    order r is a principal block of order R's, so it learns order R's statistics only.

    Examples
    --------

    >>> from river_nrrls import PolynomialExtender

    >>> poly = PolynomialExtender(degree=2)
    >>> poly.transform_one({"b": 2.0, "a": 1.0})
    {'a': 1.0, 'b': 2.0, 'a^2': 1.0, 'b^2': 4.0, 'sum': 3.0, 'sum^2': 9.0,
     'a*sum': 3.0, 'b*sum': 6.0}

    >>> mean = PolynomialExtender(degree=2, aggregate="mean", n_features=4)
    >>> mean.transform_one({"b": 2.0, "a": 1.0})["mean^2"]
    0.5625

    The paper's nonlinear NR-RLS is a pipeline:

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import NRRLS, datasets

    >>> pima = list(stream.shuffle(datasets.Pima(), buffer_size=768, seed=42))  # file is ordered
    >>> model = PolynomialExtender(degree=3) | NRRLS()
    >>> evaluate.progressive_val_score(pima, model, metrics.GeometricMean())
    GeometricMean: 71.63%

    and its better-conditioned variant (a deviation from the paper, see ``aggregate``):

    >>> model = PolynomialExtender(degree=3, aggregate="mean", n_features=8) | NRRLS()
    >>> evaluate.progressive_val_score(pima, model, metrics.GeometricMean())
    GeometricMean: 72.90%

    References
    ----------
    [^1]: Toh, K.-A., Tran, Q.-L. and Srinivasan, D. (2004). Benchmarking a reduced multivariate
        polynomial pattern classifier. IEEE Transactions on Pattern Analysis and Machine
        Intelligence, 26(6), 740-755.
    [^2]: Jang, S.-I. (2023). Deterministic online classification: non-iteratively reweighted
        recursive least-squares for binary class rebalancing. arXiv preprint arXiv:2301.09230.
        [doi:10.48550/arXiv.2301.09230](https://doi.org/10.48550/arXiv.2301.09230)

    """

    # Stateless: a parameter set after construction always takes effect (see LiveParameters).

    def __init__(
        self,
        degree: int = 2,
        kind: str = "reduced",
        include_bias: bool = False,
        aggregate: str = "sum",
        n_features: int | None = None,
    ):
        self.degree = degree
        self.kind = kind
        self.include_bias = include_bias
        self.aggregate = aggregate
        self.n_features = n_features
        self._degree = _check_degree(degree)
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if not isinstance(include_bias, (bool, np.bool_)):
            raise TypeError(f"include_bias must be a bool, got {include_bias!r}")
        if aggregate not in _AGGREGATES:
            raise ValueError(f"aggregate must be one of {_AGGREGATES}, got {aggregate!r}")
        if aggregate == "mean" and kind != "reduced":
            raise ValueError("aggregate='mean' only applies to kind='reduced'")
        if aggregate == "mean":
            if (
                isinstance(n_features, (bool, np.bool_))
                or not isinstance(n_features, numbers.Integral)
                or n_features < 1
            ):
                raise ValueError(
                    f"aggregate='mean' needs n_features, a positive int, got {n_features!r}"
                )
        elif n_features is not None:
            raise ValueError(f"n_features is only used by aggregate='mean', got {n_features!r}")
        # S = scale * sum_j x_j (n_features is a positive int with aggregate="mean", else None)
        self._scale = 1.0 if n_features is None else 1.0 / n_features
        self._layouts: dict[tuple, _Layout] = {}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"degree": 1}
        yield {"degree": 4, "include_bias": True, "aggregate": "mean", "n_features": 6}
        yield {"degree": 3, "kind": "full", "include_bias": True}

    def __getstate__(self) -> dict:
        # The layout cache is derived data: leave it out so that a pickle depends only on the
        # parameters, whatever was transformed before.
        state = self.__dict__.copy()
        state["_layouts"] = {}
        return state

    # ------------------------------------------------------------------- sizes

    def n_outputs(self, n_inputs: int) -> int:
        """Number of output columns for ``n_inputs`` present features (the bias included)."""
        n, r = n_inputs, self._degree
        bias = 1 if self.include_bias else 0
        if self.kind == "full":
            count = 1
            for i in range(1, r + 1):  # C(l + r, r), the constant included
                count = count * (n + i) // i
            return count - 1 + bias
        if r == 1:
            return n + bias
        return r + n * (2 * r - 1) + bias  # K = 1 + r + l (2r - 1) with the bias

    # ----------------------------------------------------------------- layouts

    def _layout(self, features: tuple) -> _Layout:
        """The expansion layout of features given in this order (cached per ordered tuple)."""
        # The types are part of the key: 1, 1.0 and True are equal keys with different names.
        key = (features, tuple(map(type, features)))
        layout = self._layouts.get(key)
        if layout is not None:
            return layout
        ordered = sort_features(features)
        where = {feature: i for i, feature in enumerate(features)}
        order = np.fromiter((where[f] for f in ordered), dtype=np.intp, count=len(ordered))
        if self.kind == "full":
            names, parents, orders = _full_layout(ordered, self._degree, self.include_bias)
        else:
            names = _reduced_names(ordered, self._degree, self.aggregate, self.include_bias)
            parents = []
            orders = _reduced_orders(len(ordered), self._degree, self.include_bias)
        layout = _Layout(order, names, parents, orders)
        if len(self._layouts) >= _CACHE_SIZE:
            self._layouts.clear()
        self._layouts[key] = layout
        return layout

    # ------------------------------------------------------------------ kernel

    def _expand(self, values: np.ndarray, layout: _Layout) -> np.ndarray:
        """Expand an (n, l) matrix whose columns are in sorted feature order."""
        n_rows, n_inputs = values.shape
        r = self._degree
        blocks = [np.ones((n_rows, 1))] if self.include_bias else []
        if self.kind == "full":
            blocks.append(values)
            previous = values
            for prefix, last in layout.parents:
                previous = previous[:, prefix] * values[:, last]  # x_{i1} ... x_{id}
                blocks.append(previous)
            return np.concatenate(blocks, axis=1) if len(blocks) > 1 else values.copy()
        if r == 1:
            return np.concatenate(blocks + [values], axis=1)
        powers = np.empty((n_rows, r, n_inputs))
        powers[:, 0] = values
        for k in range(1, r):
            np.multiply(powers[:, k - 1], values, out=powers[:, k])  # x_j^(k+1)
        aggregate = values.sum(axis=1) * self._scale  # S = sum_j x_j (or the mean)
        aggregate_powers = np.empty((n_rows, r))
        aggregate_powers[:, 0] = aggregate
        for k in range(1, r):
            aggregate_powers[:, k] = aggregate_powers[:, k - 1] * aggregate  # S^(k+1)
        cross = values[:, None, :] * aggregate_powers[:, : r - 1, None]  # x_j S^(k-1), k = 2..r
        blocks.append(powers.reshape(n_rows, r * n_inputs))
        blocks.append(aggregate_powers)
        blocks.append(cross.reshape(n_rows, (r - 1) * n_inputs))
        return np.concatenate(blocks, axis=1)

    # -------------------------------------------------------------- transforms

    def _expand_finite(self, values: np.ndarray, layout: _Layout, features, rows=None):
        """`_expand`, refusing (``ValueError`` naming the feature) outputs that overflow."""
        with np.errstate(over="ignore", invalid="ignore"):
            expanded = self._expand(values, layout)
        if values.size and not np.isfinite(expanded).all():
            row = int(np.argmax(~np.isfinite(expanded).all(axis=1)))
            column = int(np.argmax(np.abs(values[row])))  # the largest input of that row
            where = "" if rows is None else f" at row {row_name(rows, row)!r}"
            value = float(values[row, column])
            raise ValueError(
                f"feature {features[column]!r} has a value {value!r}{where} too "
                f"large for a polynomial of degree {self._degree}: its expansion overflows"
            )
        return expanded

    def transform_one(self, x: dict) -> dict:
        """Expand one sample: ``{term name: value}``, the terms listed above, named and ordered
        as the columns of `transform_many`. A value whose expansion would overflow raises a
        ``ValueError`` naming the feature."""
        return self._expand_one(x)[0]

    def expand_with_layout(self, x: dict) -> Expansion:
        """`transform_one`'s expansion of ``x`` with the names and the orders of its columns
        (`output_orders`), from one validation and one expansion: what the order selector
        needs to learn one sample for every order (internal interface)."""
        values, layout = self._expand_one(x)
        return Expansion(values, layout.names, layout.orders)

    def _expand_one(self, x: dict) -> tuple[dict[str, float], _Layout]:
        """`transform_one` and the layout of its columns."""
        clean = validate_one(x)
        layout = self._layout(tuple(clean))
        values = np.fromiter(clean.values(), dtype=float, count=len(clean))[layout.order]
        if values.size and not np.abs(values).max() <= 1e15:  # rare: check the outputs
            names = list(clean)
            features = [names[i] for i in layout.order]
            expanded = self._expand_finite(values[None, :], layout, features)[0]
        else:
            expanded = self._expand(values[None, :], layout)[0]
        return dict(zip(layout.names, expanded.tolist())), layout

    def output_orders(self, x: dict) -> dict[str, int]:
        """The order of every output of ``transform_one(x)``: the lowest degree r whose
        expansion (the other parameters the same) has that column.

        The expansions are nested: the outputs of degree r are exactly the outputs of a higher
        degree whose order is at most r, with the same values bit for bit (see Notes).

        >>> PolynomialExtender(degree=3).output_orders({"a": 0.5})
        {'a': 1, 'a^2': 2, 'a^3': 3, 'sum': 2, 'sum^2': 2, 'sum^3': 3, 'a*sum': 2, 'a*sum^2': 3}

        """
        layout = self._expand_one(x)[1]  # validates x as transform_one does
        return dict(zip(layout.names, layout.orders))

    def transform_many(self, X: typing.Any) -> typing.Any:
        """Expand every row of ``X``, any dataframe river accepts (pandas, polars, pyarrow, ...);
        the result is in ``X``'s backend (pandas: on ``X``'s index)."""
        frame = as_frame(X)
        matrix, observed = validate_frame(frame)
        columns = np.flatnonzero(observed)
        layout = self._layout(tuple(frame.columns[columns]))
        values = matrix[:, columns[layout.order]]
        features = list(frame.columns[columns[layout.order]])
        expanded = self._expand_finite(values, layout, features, frame.index)
        return native_frame(expanded, columns=list(layout.names), like=X)
