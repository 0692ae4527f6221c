"""What one profiler session costs beside the iterations it times, per framework (issue 39): where an
adaptive case's wall goes when it is not running the op. Not a test; run on the GPU machine
(`bash bench/gpu_run.sh sessions`).

    python bench/trace_overhead.py [jax|torch]

For a ~20 us kernel (add 2048x4096 bf16, blocked, warm cache), sessions of 20, 200 and 2000 iterations,
three of each after the process's first: the session's start, the loop, its stop and the parse of its
events into per-iteration kernel times, in milliseconds, through the same calls the timers make.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

SIZES = (20, 20, 200, 200, 2000, 2000)


def phases(label: str, run: Callable[[int], dict[str, float]]) -> None:
    for n, kind in [(20, "first"), *((n, "later") for n in SIZES)]:
        spent = " ".join(f"{k} {v * 1e3:.1f} ms" for k, v in run(n).items())
        print(f"{label}: {kind} session, n={n}: {spent}", flush=True)


def jax_sessions(host_tracer_level: int | None = None, flush: bool = False) -> None:
    """The timers' options, or those with another host tracer level; with the cold-cache flush (the
    timers' DeviceFlush) before each iteration, as a cold case runs."""
    import jax
    import jax.numpy as jnp
    from jax._src.lib import _profiler

    from accelbench.jax_backend import timers, xplane

    def mb_add(x: Any, y: Any) -> Any:
        return x + y

    add = jax.jit(mb_add)  # its module, jit_mb_add, tags its kernels in the trace
    a = jnp.ones((2048, 4096), jnp.bfloat16)
    add(a, a).block_until_ready()
    options = timers.profile_options()
    if host_tracer_level is not None:
        options.host_tracer_level = host_tracer_level
    cold = timers.device_flush(jax.devices()[0]) if flush else timers.no_flush

    def run(n: int) -> dict[str, float]:
        t0 = time.perf_counter()
        session = _profiler.ProfilerSession(options)
        t1 = time.perf_counter()
        for _ in range(n):
            cold()
            add(a, a).block_until_ready()
        t2 = time.perf_counter()
        serialized = session.stop()
        t3 = time.perf_counter()
        profile = jax.profiler.ProfileData.from_serialized_xspace(serialized)
        iterations = xplane.read(profile, "jit_mb_add", n).iterations
        t4 = time.perf_counter()
        assert len(iterations) == n
        return {"start": t1 - t0, "loop": t2 - t1, "stop": t3 - t2, "parse": t4 - t3}

    label = f"host_tracer_level {options.host_tracer_level}, flush {flush}"
    phases(f"jax {jax.__version__} {jax.devices()[0].device_kind} ({label})", run)


def torch_sessions() -> None:
    import torch
    from torch.autograd.profiler import record_function

    from accelbench.measure.attribution import attribute
    from torch_backend import profiling, timing

    device = torch.device("cuda", 0)
    a = torch.ones((2048, 4096), dtype=torch.bfloat16, device=device)
    torch.add(a, a)
    torch.cuda.synchronize()

    def run(n: int) -> dict[str, float]:
        t0 = time.perf_counter()
        session = profiling.recording(device)
        prof: Any = session.__enter__()
        t1 = time.perf_counter()
        for _ in range(n):
            with record_function(timing.ITERATION):
                torch.add(a, a)
                torch.cuda.synchronize()
        t2 = time.perf_counter()
        session.__exit__(None, None, None)
        t3 = time.perf_counter()
        iterations = attribute(*timing.windows_and_kernels(profiling.raw_events(prof), 0)[:3])
        t4 = time.perf_counter()
        assert len(iterations) == n
        return {"start": t1 - t0, "loop": t2 - t1, "stop": t3 - t2, "parse": t4 - t3}

    phases(f"torch {torch.__version__} {torch.cuda.get_device_name()}", run)


def jax_levels() -> None:
    """What the JAX host tracer and the flush add per iteration (the timers keep level 2)."""
    for level in (2, 1, 0):
        for flush in (False, True):
            jax_sessions(level, flush)


RUNS: dict[str, Callable[[], None]] = {
    "jax": jax_sessions,
    "torch": torch_sessions,
    "jax-levels": jax_levels,
}

if __name__ == "__main__":
    for framework in sys.argv[1:] or ["jax", "torch"]:
        RUNS[framework]()
