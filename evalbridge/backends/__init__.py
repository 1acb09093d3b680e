"""Backends: who computes the numbers.

Every backend is a module with the same small surface:

* ``NAME`` and ``version() -> str``;
* ``CONVENTIONS``: the :class:`~evalbridge.types.Conventions` the library itself follows;
* ``CAPABILITIES``: metric name -> option -> allowed values (data, read by :func:`unsupported`);
* ``compute(qrels, run, metrics, conventions) -> (values, bridges)``: per-query values for the
  queries present in both the qrels and the run, plus a note for every bridge applied.

Missing-query policy and averaging are done once, by :func:`evalbridge.evaluate`.
Backend libraries are imported lazily, inside ``compute``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import InputError

__all__ = ["BACKENDS", "get_backend"]

#: backend name -> module path. Modules are imported only when asked for.
BACKENDS = {
    "reference": "evalbridge.backends.reference",
}


def get_backend(name: str) -> ModuleType:
    """The backend module called ``name``."""
    try:
        path = BACKENDS[name]
    except KeyError:
        raise InputError(f"unknown backend {name!r}; choose one of {', '.join(map(repr, BACKENDS))}.") from None
    return importlib.import_module(path)
