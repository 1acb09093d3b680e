"""Values as strict JSON data: nan and inf as null, tuples as lists, the rule a result's ``to_dict`` follows.

Example:
    >>> json_ready({"kappa": float("nan"), "labels": ("0", "1"), "n": 3})
    {'kappa': None, 'labels': ['0', '1'], 'n': 3}
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_ready"]


def json_ready(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` for ``json.dumps(allow_nan=False)``: nan and inf become None, tuples lists, in dicts and lists too."""
    return {key: _clean(value) for key, value in data.items()}


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (tuple, list)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value
