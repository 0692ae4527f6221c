"""Framework-neutral timing loops: warm up, then one sample per iteration, GC off while timing."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from microbench.measurement import Prepared, Timing


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def warm_up(prepared: Prepared, warmup: int) -> None:
    for _ in range(warmup):
        out = prepared.call()
        prepared.sync(out)
        del out


def timed_iterations(prepared: Prepared, n: int) -> list[float]:
    """Host wall time of n blocked calls; outputs are released after the clock stops."""
    samples: list[float] = []
    with gc_paused():
        for _ in range(n):
            t0 = time.perf_counter()
            out = prepared.call()
            prepared.sync(out)
            t1 = time.perf_counter()
            del out
            samples.append(t1 - t0)
    return samples


def wall_clock(prepared: Prepared, warmup: int, n: int, reason: str | None = None) -> Timing:
    """Wall clock around blocked calls: the right timer on CPU, a labelled fallback elsewhere."""
    warm_up(prepared, warmup)
    samples = timed_iterations(prepared, n)
    return Timing(samples_s=samples, source="wall_clock", wall_samples_s=list(samples), fallback=reason)


Timer = Callable[[Prepared, int, int], Timing]
