"""Timers and their registry: a timer turns a prepared op into per-iteration samples. The wall clock
lives here (every backend's fallback on a CPU); device timers live in their backend's timer module,
found by the catalogue's discovery, so a config's timer is checked without importing a framework."""

from __future__ import annotations

import functools
import glob
import os
import socket
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import discover, get_spec
from accelbench.core.case import Case
from accelbench.core.types import Kernel, Prepared, Timing
from accelbench.errors import CaseFailure, Status, unsupported
from accelbench.measure import garbage
from accelbench.names import portable_name
from accelbench.platform import interrupt

Timer = Callable[[Prepared, int, int], Timing]  # (prepared, warmup, iterations) -> samples
TimerFactory = Callable[[Case], Timer]


@dataclass
class Described:
    """A timer with what the procedure reads beside it: what its profiler session costs, where each call
    is one (a warm-up session's, then the latest round's: `procedure.pilot_size` outlasts it), and a
    pass naming its kernels, run once after the timed loop (inside a round it cost every round one)."""

    timer: Timer
    session_s: float = 0.0
    breakdown: Callable[[Prepared], list[Kernel]] | None = None

    def __call__(self, prepared: Prepared, warmup: int, n: int) -> Timing:
        timing = self.timer(prepared, warmup, n)
        self.session_s = timing.session_s or self.session_s
        return timing


AUTO = "auto"
FALLBACK = "wall"  # what `auto` means where no timer claims the (backend, platform)


@dataclass(frozen=True)
class TimerInfo:
    backends: tuple[str, ...] | None  # None: every backend
    auto_on: tuple[tuple[str, str], ...]  # (backend, platform) pairs where `auto` picks this timer
    factory: TimerFactory


_TIMERS: dict[str, TimerInfo] = {}


def register_timer(
    name: str,
    backends: tuple[str, ...] | None = None,
    auto_on: tuple[tuple[str, str], ...] = (),
) -> Callable[[TimerFactory], TimerFactory]:
    """Register a timer for some backends (None: all), the automatic choice on `auto_on`."""

    def decorate(factory: TimerFactory) -> TimerFactory:
        if name in _TIMERS or name == AUTO:
            raise ValueError(f"timer {name!r} registered twice")
        claimed = {pair for info in _TIMERS.values() for pair in info.auto_on}
        if set(auto_on) & claimed:
            raise ValueError(f"timer {name!r}: another timer is already auto on {auto_on}")
        _TIMERS[name] = TimerInfo(backends, tuple(auto_on), factory)
        return factory

    return decorate


def registered_timers() -> dict[str, TimerInfo]:
    discover()  # every backend's timer module has registered
    return dict(_TIMERS)


def timer_names() -> tuple[str, ...]:
    """What a config's `timer:` may say."""
    return (AUTO, *sorted(registered_timers()))


def timer_name(backend: str, platform: str, requested: str = AUTO) -> str:
    """The timer `requested` means for this backend on this platform."""
    if requested != AUTO:
        return requested
    claims = (n for n, i in registered_timers().items() if (backend, platform) in i.auto_on)
    return next(claims, FALLBACK)


def get_timer(backend: str, name: str, case: Case) -> Timer:
    info = registered_timers().get(name)
    if info is None or backend not in (info.backends or (backend,)):
        raise unsupported(f"the {backend} backend has no timer '{name}' here")
    return info.factory(case)


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


def flush_host_cache() -> None:
    """cache: cold on a CPU: rewrite twice the last-level cache before an iteration."""
    buffer = _host_buffer()
    buffer += 1.0


def no_flush() -> None:
    """cache: warm: nothing between iterations."""


class Metered:
    """A flush that keeps the host wall it took (`flush_s`: blocked, each waits for the device); a
    sustained loop's queued flushes (`enqueue`) are the device's time, not measured here."""

    def __init__(self, flush: Callable[[], None]) -> None:
        self.flush, self.seconds = flush, 0.0
        if hasattr(flush, "enqueue"):
            self.enqueue = flush.enqueue

    def __call__(self) -> None:
        t0 = time.perf_counter()
        self.flush()
        self.seconds += time.perf_counter() - t0


CLOCK_RAMP_S = 0.3  # busy time that brings an idle GPU to its working clocks


def keep_busy(burst: Callable[[], None], seconds: float = CLOCK_RAMP_S) -> None:
    """Repeat `burst` (work, waited for) for `seconds`, once per process before any case: an idle GPU's
    first case ran ~15% slow on an H200 with its clocks still ramping (an idle H100 read 345 MHz)."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        burst()


gc_paused = garbage.paused  # a timed window: see measure/garbage.py


def warm_up(prepared: Prepared, warmup: int) -> float | None:
    """`warmup` blocked calls; the fastest one's wall (None without any) sizes a pilot: the first is
    slow (JAX gemm 4096³, H100: 2.6-6.7 ms, then ... 0.28 ms; a median sized pilots at 20, not ~50)."""
    walls = []
    for _ in range(warmup):
        interrupt.check()
        t0 = time.perf_counter()
        out = prepared.call()
        prepared.sync(out)
        walls.append(time.perf_counter() - t0)
        del out
    return min(walls, default=None)


# what a case's trace folder names besides op, id and shape: what most often tells two cases apart
TRACE_NAMED = ("dtype", "in_dtype", "out_dtype", "layout", "recipe", "sparsity", "mode", "op_type")
TRACE_NAME_CHARS = 96


def trace_session_dir(case: Case) -> str | None:
    """`<trace_dir>/<op>-<id>-<shape>-<TRACE_NAMED...>/plugins/profile/<session>/` (xprof's layout;
    the id early, so a list that cuts long names tells cases apart), None where no trace is kept."""
    outputs = case.outputs
    if not outputs.trace_dir:
        return None
    shape = get_spec(case.op).shape(case.params)
    named = [str(v) for k in TRACE_NAMED if (v := case.params.value(k)) not in (None, "")]
    label = "-".join(x for x in (case.op, case.id[:8], shape, *named, case.implementation) if x)
    folder = portable_name(label, TRACE_NAME_CHARS)
    session = outputs.trace_session or time.strftime("%Y_%m_%d_%H_%M_%S")
    path = os.path.join(outputs.trace_dir, folder, "plugins", "profile", session)
    mine = os.path.relpath(path, outputs.trace_dir).split(os.sep)  # the trace_dir itself may be one
    for depth in range(1, len(mine) + 1):  # a link planted where the case names its own folders
        if os.path.islink(planted := os.path.join(outputs.trace_dir, *mine[:depth])):
            raise CaseFailure(Status.ERROR, f"{planted} is a symbolic link: no trace through one")
    return path


def keep_trace(session_dir: str | None, suffix: str, write: Callable[[str], object]) -> None:
    """A session's trace as `<session_dir>/<host><suffix>` where the case keeps one (a later round
    replaces it); a folder that cannot be written is the case's error."""
    if session_dir is None:
        return
    try:
        os.makedirs(session_dir, exist_ok=True)
        write(os.path.join(session_dir, portable_name(socket.gethostname()) + suffix))
    except OSError as error:
        raise CaseFailure(
            Status.ERROR, f"could not write the trace under {session_dir}: {error.strerror}"
        ) from None


def timed_iterations(
    prepared: Prepared,
    n: int,
    flush: Callable[[], None] = no_flush,
    sustained: bool = False,
    step: Callable[[int], AbstractContextManager[Any]] | None = None,
) -> list[float]:
    """Host wall of n calls, `flush` before each outside the clock. Blocked: each call waits for its
    outputs. Sustained: calls (and `enqueue`d flushes) back to back, one wait, each sample the loop's
    mean. `step`: each iteration inside a context of its number (a kept trace's step marker)."""
    marked = step or (lambda i: nullcontext())
    if sustained:
        queue_flush = getattr(flush, "enqueue", flush)
        with gc_paused():
            t0 = time.perf_counter()
            for i in range(n):
                interrupt.check()
                queue_flush()
                # only the last output is kept: the frameworks free a buffer after the work that uses
                # it, and keeping all n made the allocator grow on every iteration (idling the GPU)
                with marked(i):
                    last = prepared.call()
            prepared.sync(last)  # one device queue: the last finished means all finished
            mean = (time.perf_counter() - t0) / n
        del last
        return [mean] * n
    samples: list[float] = []
    with gc_paused():
        for i in range(n):
            interrupt.check()
            flush()
            with marked(i):
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
    metered = Metered(flush)
    return wall_timing(timed_iterations(prepared, n, metered, sustained), metered.seconds)


def wall_timing(samples: list[float], flush_s: float, **more: Any) -> Timing:
    """Host wall samples as a timing: its time, wall and launch samples alike."""
    return Timing(
        samples_s=samples,
        source="wall_clock",
        wall_samples_s=list(samples),
        launch_samples_s=list(samples),
        flush_s=flush_s,
        **more,
    )


def host_flush(case: Case) -> Callable[[], None]:
    return flush_host_cache if case.run.cache == "cold" else no_flush


@register_timer(FALLBACK)
def _wall(case: Case) -> Timer:
    return functools.partial(
        wall_clock, flush=host_flush(case), sustained=case.run.cadence == "sustained"
    )
