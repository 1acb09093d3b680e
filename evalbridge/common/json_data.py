"""Values as strict JSON data, one rule for every result's ``to_dict`` and every report: nan and inf as null,
tuples as lists, keys as text, paths as text, numpy scalars as Python numbers; :func:`json_text` is the one way
every JSON output is written (no ``NaN`` / ``Infinity``, which are not JSON).

Example:
    >>> json_ready({"kappa": float("nan"), "labels": ("0", "1"), "n": 3})
    {'kappa': None, 'labels': ['0', '1'], 'n': 3}
    >>> json_value([float("inf"), {1: 0.5}])
    [None, {'1': 0.5}]
    >>> json_text({"detectable": float("inf"), "name": "bm25"}, indent=None)
    '{"detectable": null, "name": "bm25"}\\n'
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

__all__ = ["json_ready", "json_value", "json_text"]


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


def json_text(data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``data`` as a strict JSON document (:func:`json_value`: nan and inf as null), UTF-8 text, one line end."""
    return json.dumps(json_value(data), indent=indent, ensure_ascii=False, allow_nan=False, sort_keys=sort_keys) + "\n"
