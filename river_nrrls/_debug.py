"""The contribution tables of ``debug_one`` (`NRRLS`, `RLSRegressor`), as river's
``LinearRegression.debug_one`` formats them."""

from __future__ import annotations

import typing

__all__ = ["contribution_table", "format_number"]


def format_number(number: float, decimals: int) -> str:
    """``number`` as river's ``debug_one`` prints it: sign column, thousands separators."""
    return f"{number: ,.{decimals}f}"


def contribution_table(
    values: dict[typing.Hashable, float],
    weights: dict[typing.Hashable, float],
    intercept: float | None,
    decimals: int,
) -> str:
    """Every feature's value, weight and contribution ``value * weight`` (then the intercept's,
    unless ``intercept`` is None), by decreasing contribution (ties: in ``values``' order).

    A feature without a weight has weight 0. No feature and no intercept: the header alone.

    """
    from river.utils.pretty import print_table

    names = [str(name) for name in values]
    column_values = list(values.values())
    column_weights = [weights.get(name, 0.0) for name in values]
    if intercept is not None:
        names.append("Intercept")
        column_values.append(1.0)
        column_weights.append(intercept)
    headers = ["Name", "Value", "Weight", "Contribution"]
    if not names:  # (river's print_table needs a row)
        return "   ".join(headers)
    contributions = [value * weight for value, weight in zip(column_values, column_weights)]
    order = sorted(range(len(names)), key=lambda i: -contributions[i])
    return print_table(
        headers=headers,
        columns=[
            names,
            [format_number(value, decimals) for value in column_values],
            [format_number(weight, decimals) for weight in column_weights],
            [format_number(contribution, decimals) for contribution in contributions],
        ],
        order=order,
    )
