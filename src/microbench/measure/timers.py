"""Timers and their registry: a timer turns a prepared op into per-iteration samples.

Backends register their device timers here (`register_timer`); `timer_name` says which one `auto`
picks for a backend on a platform (docs/method.md has the table). The wall clock lives here because
every backend can fall back to it on a CPU, where nothing better exists.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from microbench.config.cases import Case
from microbench.measure.types import Prepared, Timing

Timer = Callable[[Prepared, int, int], Timing]  # (prepared, warmup, iterations) -> samples
TimerFactory = Callable[[Case], Timer]

_TIMERS: dict[tuple[str, str], TimerFactory] = {}
# what `auto` means, per (backend, platform); a platform missing here gets the wall clock
AUTO: dict[tuple[str, str], str] = {
    ("jax", "gpu"): "xprof",
    ("jax", "tpu"): "xprof",
    ("jax", "cpu"): "wall",
    ("torch", "gpu"): "cuda_events",
    ("torch", "cpu"): "wall",
    ("numpy", "cpu"): "wall",
}


def register_timer(name: str, backends: tuple[str, ...]) -> Callable[[TimerFactory], TimerFactory]:
    def decorate(factory: TimerFactory) -> TimerFactory:
        for backend in backends:
            if (backend, name) in _TIMERS:
                raise ValueError(f"timer {name!r} of backend {backend!r} registered twice")
            _TIMERS[(backend, name)] = factory
        return factory

    return decorate


def timer_name(backend: str, platform: str, requested: str = "auto") -> str:
    return AUTO.get((backend, platform), "wall") if requested == "auto" else requested


def get_timer(backend: str, name: str, case: Case) -> Timer:
    return _TIMERS[(backend, name)](case)


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
            out: Any = prepared.call()
            prepared.sync(out)
            t1 = time.perf_counter()
            del out
            samples.append(t1 - t0)
    return samples


def wall_clock(prepared: Prepared, warmup: int, n: int) -> Timing:
    """Wall clock around blocked calls: the right timer on a CPU."""
    warm_up(prepared, warmup)
    samples = timed_iterations(prepared, n)
    return Timing(samples_s=samples, source="wall_clock", wall_samples_s=list(samples))


@register_timer("wall", ("jax", "torch", "numpy"))
def _wall(case: Case) -> Timer:
    return wall_clock
