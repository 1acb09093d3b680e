"""How closely a run reproduces another: RMSE of the per-query values, effect ratio, delta relative improvement.

The measures of Breuer et al., "How to Measure the Reproducibility of System-oriented IR Experiments" (SIGIR 2020),
as repro_eval computes them, over one metric's per-query values (numpy arrays, one value per query):

* ``rmse(original, reproduced)`` = sqrt(mean_q (o_q - r_q)^2), the two runs' values on the same queries in the
  same order: 0 when every query's value is reproduced;
* ``effect_ratio(original, original_baseline, reproduced, reproduced_baseline)`` = the mean per-query improvement
  of the reproduced pair over the mean per-query improvement of the original pair: 1 when the effect is
  reproduced whole, below 1 smaller, above larger, negative reversed; nan when the original has no effect;
* ``delta_relative_improvement(...)`` = RI_original - RI_reproduced, RI = (mean(system) - mean(baseline)) /
  mean(baseline): 0 when the relative improvement is reproduced; nan when a baseline's mean is 0.

A pair's arrays are aligned by query (the same queries in the same order); the original and the reproduced pairs
may cover different queries (a reproduction on another collection).

Example:
    >>> import numpy as np
    >>> round(rmse(np.array([0.5, 0.7]), np.array([0.4, 0.7])), 4)
    0.0707
    >>> round(effect_ratio(np.array([0.6, 0.8]), np.array([0.4, 0.6]), np.array([0.5, 0.7]), np.array([0.4, 0.6])), 4)
    0.5
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["rmse", "effect_ratio", "delta_relative_improvement"]

_Floats = npt.NDArray[np.float64]


def _checked(name: str, values: _Floats) -> _Floats:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be one value per query, at least one; got shape {array.shape}.")
    if not np.isfinite(array).all():
        where = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name} holds {array[where]} at position {where}, not a finite number; every query needs "
                         f"a value.")
    return array


def _pair(name: str, system: _Floats, baseline: _Floats) -> tuple[_Floats, _Floats]:
    a, b = _checked(name, system), _checked(name + " baseline", baseline)
    if a.shape != b.shape:
        raise ValueError(f"the {name} system and its baseline have {a.size} and {b.size} values; a pair is compared "
                         f"query by query, on the same queries.")
    return a, b


def rmse(original: _Floats, reproduced: _Floats) -> float:
    """Root mean square error of the reproduced per-query values against the original ones (see the module)."""
    o, r = _pair("original", original, reproduced)
    return math.sqrt(math.fsum(((o - r) ** 2).tolist()) / o.size)


def effect_ratio(original: _Floats, original_baseline: _Floats, reproduced: _Floats,
                 reproduced_baseline: _Floats) -> float:
    """Mean improvement of the reproduced pair over the mean improvement of the original pair (see the module)."""
    o, ob = _pair("original", original, original_baseline)
    r, rb = _pair("reproduced", reproduced, reproduced_baseline)
    effect = math.fsum((o - ob).tolist()) / o.size
    return math.fsum((r - rb).tolist()) / r.size / effect if effect != 0 else math.nan


def delta_relative_improvement(original: _Floats, original_baseline: _Floats, reproduced: _Floats,
                               reproduced_baseline: _Floats) -> float:
    """RI of the original pair minus RI of the reproduced pair (see the module)."""
    o, ob = _pair("original", original, original_baseline)
    r, rb = _pair("reproduced", reproduced, reproduced_baseline)

    def relative(system: _Floats, baseline: _Floats) -> float:
        base = math.fsum(baseline.tolist()) / baseline.size
        return (math.fsum(system.tolist()) / system.size - base) / base if base != 0 else math.nan

    return relative(o, ob) - relative(r, rb)
