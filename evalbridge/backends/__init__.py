"""Backends: who computes the numbers.

Every backend is one module declaring a :class:`~evalbridge.backends.base.Backend` named ``BACKEND``
(name, version, conventions, capabilities, tie policies, ``compute``; see :mod:`.base`), and one line in
:data:`BACKENDS`. :func:`get_backend` returns that declaration; :func:`unsupported` reads its
capabilities; :func:`available` its library.

Missing-query policy and averaging are done once, by :func:`evalbridge.evaluate`.
Backend libraries are imported lazily, inside ``compute``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..errors import InputError
from ..model.settings import Settings
from .base import Backend, Capabilities

if TYPE_CHECKING:
    from ..metrics.spec import Metric
    from ..model.data import Qrels

__all__ = ["BACKENDS", "CROSSCHECK_BACKENDS", "Backend", "Capabilities", "get_backend", "unsupported",
           "tie_problem", "available"]

#: backend name -> the module declaring it (its ``BACKEND``). Modules are imported only when asked for.
#: Adding a backend: one module, one line here.
BACKENDS = {
    "reference": "evalbridge.backends.reference",
    "ranx": "evalbridge.backends.ranx",
    "ir_measures": "evalbridge.backends.ir_measures",
    "pytrec_eval": "evalbridge.backends.pytrec_eval",
    "fast": "evalbridge.backends.fast",
    "auto": "evalbridge.backends.auto",
}

#: The libraries a cross-check compares with by default (Python, command line and config alike).
CROSSCHECK_BACKENDS = ("pytrec_eval", "ranx", "ir_measures")


def get_backend(name: str) -> Backend:
    """The backend registered as ``name``."""
    try:
        path = BACKENDS[name]
    except KeyError:
        raise InputError(f"unknown backend {name!r}; choose one of {', '.join(map(repr, BACKENDS))}.") from None
    backend = importlib.import_module(path).BACKEND
    if not isinstance(backend, Backend) or backend.name != name:
        raise TypeError(f"{path}.BACKEND must be a Backend named {name!r}; got {backend!r}.")
    return backend


def tie_problem(backend: Backend, metric: Metric, ties: str) -> str | None:
    """Why ``backend`` cannot compute ``metric`` under the tie policy ``ties``, or ``None``.

    A backend follows the policies in its ``ties``; under ``ties="average"`` the metric also needs
    an exact tie-aware formula (:func:`evalbridge.metrics.tie_aware.unsupported`).
    """
    if ties not in backend.ties:
        return (f"{backend.name} puts tied documents in one order, so it cannot give the expected value over "
                f"every order of them (ties={ties!r}); the reference can.")
    if ties == "average":
        from ..metrics.tie_aware import unsupported as tie_aware_problem

        return tie_aware_problem(metric)
    return None


def unsupported(backend: Backend, metric: Metric, qrels: Qrels | None = None, *,
                conventions: Settings | None = None) -> str | None:
    """Why ``backend`` cannot compute ``metric`` exactly, or ``None`` when it can.

    Reads its :class:`Capabilities` and, when ``qrels`` is given, checks that its grades can be
    bridged exactly (e.g. exp-gain nDCG over float grades cannot be on an integer-only library);
    when ``conventions`` is given, checks that the backend follows its tie policy (:func:`tie_problem`).
    """
    if conventions is not None and (reason := tie_problem(backend, metric, conventions.ties)) is not None:
        return reason
    reason = backend.capabilities.problem(backend.name, metric)
    if reason is None and qrels is not None and backend.bridged_grades == "int":
        from . import _bridge

        reason = _bridge.grade_problem(backend.name, backend.bridged_grades, metric, _bridge.GradeInfo.of(qrels))
    return reason


def available() -> dict[str, bool]:
    """Backend name -> whether its library can be imported (without importing the library)."""
    from importlib.util import find_spec

    libraries = {name: get_backend(name).library for name in BACKENDS}
    return {name: lib is None or find_spec(lib) is not None for name, lib in libraries.items()}
