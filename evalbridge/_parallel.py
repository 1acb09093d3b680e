"""Independent steps of one pass shared between threads (the columnar fast paths' slices).

numpy lets go of the GIL inside each step, so on a machine with free cores the steps of a pass over
millions of rows run side by side; each step writes only its own part of the output, so a result never
depends on the order the threads take them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["each", "cores"]

#: At most this many threads share one pass (fewer on a machine with fewer cores).
MAX_THREADS = 4
_Out = TypeVar("_Out")


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def each(function: Callable[..., _Out], jobs: Sequence[tuple[Any, ...]]) -> list[_Out]:
    """``[function(*job) for job in jobs]``, on up to :data:`MAX_THREADS` threads when there are several
    jobs and cores. The jobs must be independent: none reads what another writes."""
    threads = min(MAX_THREADS, cores(), len(jobs))
    if threads < 2:
        return [function(*job) for job in jobs]
    with ThreadPoolExecutor(threads, thread_name_prefix="evalbridge-slices") as pool:
        return list(pool.map(lambda job: function(*job), jobs))
