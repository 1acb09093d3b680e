"""Values as strict JSON data, one rule for every result's ``to_dict`` and every report: nan and inf as null,
tuples as lists, keys as text, paths as text, numpy scalars as Python numbers.

Example:
    >>> json_ready({"kappa": float("nan"), "labels": ("0", "1"), "n": 3})
    {'kappa': None, 'labels': ['0', '1'], 'n': 3}
    >>> json_value([float("inf"), {1: 0.5}])
    [None, {'1': 0.5}]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

__all__ = ["json_ready", "json_value"]


def json_ready(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` for ``json.dumps(allow_nan=False)``: :func:`json_value` of a mapping."""
    return {str(key): json_value(value) for key, value in data.items()}


def json_value(value: Any) -> Any:
    """``value`` as strict JSON data: nan and inf become None, tuples lists, mapping keys text, paths text,
    numpy scalars Python numbers; in mappings and lists too."""
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return json_ready(value)
    if isinstance(value, (tuple, list)):
        return [json_value(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    numpy = sys.modules.get("numpy")  # a numpy scalar exists only once numpy is imported
    if numpy is not None and isinstance(value, numpy.generic):
        return json_value(value.item())
    return value
