"""Timing shared by the benchmark scripts: the best wall time of repeated calls and the
tracemalloc peak of one further call (numpy reports its buffers to tracemalloc)."""

from __future__ import annotations

import time
import tracemalloc


def timed(call, repeats: int) -> tuple[float, float, object]:
    """(best of ``repeats`` wall times in seconds, peak MiB of one traced call, its result)."""
    best = min(_once(call) for _ in range(repeats))
    tracemalloc.start()
    result = call()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak, result


def _once(call) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0
