"""Timers and their registry: a timer turns a prepared op into per-iteration samples.

Backends register their device timers here (`register_timer`); `timer_name` says which one `auto`
picks for a backend on a platform (docs/method.md has the table). The wall clock lives here because
every backend can fall back to it on a CPU, where nothing better exists.
"""

from __future__ import annotations

import functools
import gc
import glob
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from microbench.core.case import Case
from microbench.core.types import Prepared, Timing
from microbench.errors import unsupported
from microbench.platform import interrupt

Timer = Callable[[Prepared, int, int], Timing]  # (prepared, warmup, iterations) -> samples
TimerFactory = Callable[[Case], Timer]

_TIMERS: dict[tuple[str, str], TimerFactory] = {}
# what `auto` means, per (backend, platform); a platform missing here gets the wall clock
AUTO: dict[tuple[str, str], str] = {
    ("jax", "gpu"): "xprof",
    ("jax", "tpu"): "xprof",
    ("jax", "cpu"): "wall",
    ("torch", "gpu"): "cupti",
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
    if (backend, name) not in _TIMERS:
        raise unsupported(f"the {backend} backend has no timer '{name}' here")
    return _TIMERS[(backend, name)](case)


def last_level_cache_bytes() -> int:
    """The CPU's largest cache (sysfs), or 32 MiB where the system does not say."""
    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        with open(path) as f:
            text = f.read().strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes, default=32 << 20)


@functools.cache
def _host_buffer() -> np.ndarray:
    return np.ones(2 * last_level_cache_bytes() // 8)  # allocated and touched once per process


class HostFlush:
    """Evicts the CPU's caches before an iteration (cache: cold) by rewriting twice the last-level cache."""

    def __call__(self) -> None:
        buffer = _host_buffer()
        buffer += 1.0


def no_flush() -> None:
    """cache: warm: nothing between iterations."""


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
        interrupt.check()
        out = prepared.call()
        prepared.sync(out)
        del out


def timed_iterations(
    prepared: Prepared, n: int, flush: Callable[[], None] = no_flush, sustained: bool = False
) -> list[float]:
    """Host wall time of n calls, `flush` run before each outside the clock; outputs released after the
    clock stops. Blocked: each call waits for its outputs. Sustained: the calls (and flushes, queued with
    their `enqueue` where they have one) go back to back and the loop waits once; each sample is then
    the loop's mean."""
    if sustained:
        queue_flush = getattr(flush, "enqueue", flush)
        with gc_paused():
            t0 = time.perf_counter()
            for _ in range(n):
                interrupt.check()
                queue_flush()
                # only the last output is kept: the frameworks free a buffer after the work that uses
                # it, and keeping all n made the allocator grow on every iteration (idling the GPU)
                last = prepared.call()
            prepared.sync(last)  # one device queue: the last finished means all finished
            mean = (time.perf_counter() - t0) / n
        del last
        return [mean] * n
    samples: list[float] = []
    with gc_paused():
        for _ in range(n):
            interrupt.check()
            flush()
            t0 = time.perf_counter()
            out: Any = prepared.call()
            prepared.sync(out)
            t1 = time.perf_counter()
            del out
            samples.append(t1 - t0)
    return samples


def wall_clock(
    prepared: Prepared,
    warmup: int,
    n: int,
    flush: Callable[[], None] = no_flush,
    sustained: bool = False,
) -> Timing:
    """Wall clock around blocked calls: the right timer on a CPU (launch-inclusive by nature)."""
    warm_up(prepared, warmup)
    samples = timed_iterations(prepared, n, flush, sustained)
    return Timing(
        samples_s=samples,
        source="wall_clock",
        wall_samples_s=list(samples),
        launch_samples_s=list(samples),
    )


def host_flush(case: Case) -> Callable[[], None]:
    return HostFlush() if case.run.cache == "cold" else no_flush


@register_timer("wall", ("jax", "torch", "numpy"))
def _wall(case: Case) -> Timer:
    flush = host_flush(case)
    sustained = case.run.cadence == "sustained"
    return lambda prepared, warmup, n: wall_clock(prepared, warmup, n, flush, sustained)
