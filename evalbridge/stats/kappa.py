"""The measures of agreement over a confusion table of two judges' grades: Cohen's kappa (plain, linear- or
quadratic-weighted) and Krippendorff's alpha (nominal, ordinal, interval), each one function.

Krippendorff's alpha is computed here from the coincidence matrix (the formula is in :func:`krippendorff_alpha`)
rather than with the ``krippendorff`` package from PyPI: that package is GPL-3.0 and evalbridge is Apache-2.0, so
it is only a test dependency, and the tests check that both give the same alpha at every level of measurement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.parameters import check_choice

if TYPE_CHECKING:
    import numpy as np

__all__ = ["cohen_kappa", "krippendorff_alpha", "KAPPA_WEIGHTS", "ALPHA_LEVELS"]


def _disagreement_none(i: Any, j: Any) -> Any:
    return (i != j).astype("float64")


def _disagreement_linear(i: Any, j: Any) -> Any:
    return abs(i - j).astype("float64")


def _disagreement_quadratic(i: Any, j: Any) -> Any:
    return ((i - j) ** 2).astype("float64")


#: kappa weighting -> disagreement weight w_ij of categories i and j (their positions on the scale)
KAPPA_WEIGHTS: Mapping[str, Callable[[Any, Any], Any]] = {
    "none": _disagreement_none, "linear": _disagreement_linear, "quadratic": _disagreement_quadratic,
}


def _square(confusion: Any) -> np.ndarray:
    import numpy as np

    table = np.asarray(confusion, dtype="float64")
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] == 0:
        raise InputError(f"a confusion table must be square (k x k, k >= 1); got shape {table.shape}.",
                         fix="rows are the categories of judge a, columns the same categories of judge b.")
    if not np.isfinite(table).all() or (table < 0).any():
        raise InputError("a confusion table holds counts: finite numbers >= 0.")
    return table


def cohen_kappa(confusion: Any, *, weights: str = "none") -> float:
    """Cohen's kappa of a k x k confusion table (rows: judge a, columns: judge b, same ordered categories).

    With n_ij the pairs put in category i by a and j by b, n the total, n_i+ and n_+j the margins and
    disagreement weights w_ij:

        kappa_w = 1 - (sum_ij w_ij n_ij) / (sum_ij w_ij n_i+ n_+j / n)

    ``weights="none"`` (w_ij = 1 for i != j, 0 on the diagonal) is Cohen's (1960) kappa,
    (p_o - p_e) / (1 - p_e) with p_o = sum_i n_ii / n and p_e = sum_i n_i+ n_+i / n^2;
    ``linear`` (w_ij = |i - j|) and ``quadratic`` (w_ij = (i - j)^2) are Cohen's (1968) weighted kappa,
    i and j being the positions of the categories on the scale. nan when the expected disagreement is 0
    (both judges put every pair in the same single category, or the table is empty).

    >>> cohen_kappa([[20, 5], [10, 15]])  # p_o = 0.7, p_e = 0.5
    0.4
    """
    import numpy as np

    check_choice(weights, KAPPA_WEIGHTS, "kappa weights")
    table = _square(confusion)
    n = float(table.sum())
    index = np.arange(table.shape[0])
    w = KAPPA_WEIGHTS[weights](index[:, None], index[None, :])
    expected = float((w * np.outer(table.sum(axis=1), table.sum(axis=0))).sum()) / n if n else 0.0
    if expected == 0:
        return math.nan
    return 1.0 - float((w * table).sum()) / expected


def _delta_nominal(values: Any, counts: Any) -> Any:
    return (values[:, None] != values[None, :]).astype("float64")


def _delta_ordinal(values: Any, counts: Any) -> Any:
    import numpy as np

    cumulative = np.concatenate(([0.0], np.cumsum(counts)))
    low = np.minimum.outer(np.arange(len(counts)), np.arange(len(counts)))
    high = np.maximum.outer(np.arange(len(counts)), np.arange(len(counts)))
    between = cumulative[high + 1] - cumulative[low]  # sum of n_g for g from low to high
    return (between - (counts[:, None] + counts[None, :]) / 2) ** 2


def _delta_interval(values: Any, counts: Any) -> Any:
    return (values[:, None] - values[None, :]) ** 2


#: level of measurement -> squared difference delta^2(c, k) of two categories (values, counts n_c)
ALPHA_LEVELS: Mapping[str, Callable[[Any, Any], Any]] = {
    "nominal": _delta_nominal, "ordinal": _delta_ordinal, "interval": _delta_interval,
}


def krippendorff_alpha(confusion: Any, *, level: str = "ordinal", values: Iterable[float] | None = None) -> float:
    """Krippendorff's alpha of two judges, from their k x k confusion table (no missing values).

    Each pair judged by both is a unit with two values, so the coincidence matrix is o = C + C^T
    (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), with n_c = sum_k o_ck and
    n = sum_c n_c = 2 x pairs:

        alpha = 1 - D_o / D_e = 1 - (n - 1) sum_ck o_ck delta^2_ck / sum_ck n_c n_k delta^2_ck

    with delta^2_ck = [c != k] (``nominal``); (v_c - v_k)^2 over the category values v (``interval``);
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 (``ordinal``, ranks only). ``values`` default to 0..k-1.
    nan when D_e = 0 (a single category used).

    >>> a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]  # Krippendorff (2011), binary data, two observers
    >>> b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    >>> table = [[sum(x == i and y == j for x, y in zip(a, b)) for j in (0, 1)] for i in (0, 1)]
    >>> round(krippendorff_alpha(table, level="nominal"), 3)
    0.095
    """
    import numpy as np

    check_choice(level, ALPHA_LEVELS, "level of measurement")
    table = _square(confusion)
    v = np.arange(table.shape[0], dtype="float64") if values is None else np.asarray(values, dtype="float64")
    if v.shape != (table.shape[0],):
        raise InputError(f"got {v.size} category values for a {table.shape[0]} x {table.shape[0]} table.")
    coincidence = table + table.T
    counts = coincidence.sum(axis=1)
    n = float(counts.sum())
    delta = ALPHA_LEVELS[level](v, counts)
    expected = float((np.outer(counts, counts) * delta).sum())
    if expected == 0 or n < 2:
        return math.nan
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected
