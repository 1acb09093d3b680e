"""Backends: who computes the numbers.

Every backend is a module with the same small surface:

* ``NAME`` and ``version() -> str``;
* ``CONVENTIONS``: the :class:`~evalbridge.model.Conventions` the library itself follows;
* ``CAPABILITIES``: metric name -> option -> allowed values (data, read by :func:`unsupported`);
* ``TIES``: the tie policies (:data:`evalbridge.model.TIE_POLICIES`) its ``compute`` follows exactly;
* ``compute(qrels, run, metrics, conventions) -> (values, bridges)``: per-query values for the
  queries present in both the qrels and the run, plus a note for every bridge applied.

Missing-query policy and averaging are done once, by :func:`evalbridge.evaluate`.
Backend libraries are imported lazily, inside ``compute``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import InputError
from ..model import Conventions

if TYPE_CHECKING:
    from ..metrics.spec import Metric
    from ..model import Qrels

__all__ = ["BACKENDS", "get_backend", "unsupported", "tie_problem", "available"]

#: backend name -> module path. Modules are imported only when asked for.
BACKENDS = {
    "reference": "evalbridge.backends.reference",
    "ranx": "evalbridge.backends.ranx",
    "ir_measures": "evalbridge.backends.ir_measures",
    "pytrec_eval": "evalbridge.backends.pytrec_eval",
    "fast": "evalbridge.backends.fast",
    "auto": "evalbridge.backends.auto",
}

#: backend name -> the importable library it needs (``None``: nothing beyond evalbridge).
LIBRARIES = {"reference": None, "ranx": "ranx", "ir_measures": "ir_measures", "pytrec_eval": "pytrec_eval",
             "fast": "numpy", "auto": None}


def get_backend(name: str) -> ModuleType:
    """The backend module called ``name``."""
    try:
        path = BACKENDS[name]
    except KeyError:
        raise InputError(f"unknown backend {name!r}; choose one of {', '.join(map(repr, BACKENDS))}.") from None
    return importlib.import_module(path)


def tie_problem(module: ModuleType, metric: Metric, ties: str) -> str | None:
    """Why backend ``module`` cannot compute ``metric`` under the tie policy ``ties``, or ``None``.

    A backend follows the policies in its ``TIES``; under ``ties="average"`` the metric also needs
    an exact tie-aware formula (:func:`evalbridge.metrics.tie_aware.unsupported`).
    """
    if ties not in module.TIES:
        return (f"{module.NAME} puts tied documents in one order, so it cannot give the expected value over "
                f"every order of them (ties={ties!r}); the reference can.")
    if ties == "average":
        from ..metrics.tie_aware import unsupported as tie_aware_problem

        return tie_aware_problem(metric)
    return None


def unsupported(module: ModuleType, metric: Metric, qrels: Qrels | None = None, *,
                conventions: Conventions | None = None) -> str | None:
    """Why backend ``module`` cannot compute ``metric`` exactly, or ``None`` when it can.

    Reads the module's ``CAPABILITIES`` table (metric -> option -> allowed values) and, when
    ``qrels`` is given, checks that its grades can be bridged exactly (e.g. exp-gain nDCG over
    float grades cannot be on an integer-only library); when ``conventions`` is given, checks
    that the backend follows its tie policy (:func:`tie_problem`).
    """
    if conventions is not None and (reason := tie_problem(module, metric, conventions.ties)) is not None:
        return reason
    capabilities = getattr(module, "CAPABILITIES", None)
    if not capabilities:
        return None
    from . import _bridge

    name = getattr(module, "NAME", module.__name__)
    reason = _bridge.capability_problem(name, capabilities, metric, getattr(module, "MISSING", None))
    if reason is None and qrels is not None:
        grades = getattr(module, "BRIDGED_GRADES", "float")
        reason = _bridge.grade_problem(name, grades, metric, _bridge.GradeInfo.of(qrels))
    return reason


def available() -> dict[str, bool]:
    """Backend name -> whether its library can be imported (without importing it)."""
    from importlib.util import find_spec

    return {name: lib is None or find_spec(lib) is not None for name, lib in LIBRARIES.items()}
