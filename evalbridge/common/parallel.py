"""Independent steps of one pass shared between threads (the columnar fast paths' slices, the resampling's columns).

numpy lets go of the GIL inside each step, so on a machine with free cores the steps of a pass over
millions of rows run side by side; each step writes only its own part of the output, so a result never
depends on the order the threads take them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["each", "cores", "workers"]

#: At most this many threads share one pass (fewer on a machine with fewer cores).
MAX_THREADS = 4
_Out = TypeVar("_Out")


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads_for(jobs: int, threads: int | None = None) -> int:
    """How many threads ``jobs`` independent jobs get: ``threads`` if given, else up to :data:`MAX_THREADS`
    and the cores, never more than the jobs."""
    return max(1, min(jobs, threads if threads is not None else min(MAX_THREADS, cores())))


@contextmanager
def workers(jobs: int, threads: int | None = None) -> Iterator[Executor | None]:
    """A pool for many rounds of ``jobs`` independent jobs (:func:`each` with ``pool=``), or None when one
    thread is all they get (:func:`threads_for`); the pool's threads end with the block."""
    count = threads_for(jobs, threads)
    if count < 2:
        yield None
        return
    with ThreadPoolExecutor(count, thread_name_prefix="evalbridge-steps") as pool:
        yield pool


def each(function: Callable[..., _Out], jobs: Sequence[tuple[Any, ...]], *,
         pool: Executor | None = None) -> list[_Out]:
    """``[function(*job) for job in jobs]``, on up to :data:`MAX_THREADS` threads when there are several
    jobs and cores (on ``pool``'s threads when given). The jobs must be independent: none reads what another
    writes."""
    if pool is not None:
        return list(pool.map(lambda job: function(*job), jobs))
    with workers(len(jobs)) as own:
        if own is None:
            return [function(*job) for job in jobs]
        return list(own.map(lambda job: function(*job), jobs))
