"""One way into PyTorch's profiler (Kineto; CUPTI on a GPU) for every timer, breakdown and count.

`torch.profiler.profile` asks `hasattr(torch, "_inductor")` as it starts, which imports the compiler
stack (~900 modules, 5 s without cached bytecode) into runs that compile nothing, charged to the first
case; the autograd profiler beneath it records the same Kineto events without that. The first session
of a process also starts CUPTI: `warm` pays for it once, before any case's clock starts. CUPTI serves
one profiler a process; Kineto frees it after a GPU session only with TEARDOWN_CUPTI=1, left as the user
set it: a run times JAX before PyTorch, and the teardown cost each later session 8 ms (docs/method.md).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from accelbench.platform import chatter, frameworks
from accelbench.platform.frameworks import torch

# Kineto reads it at each GPU session's end: "1" frees CUPTI (what JAX then finds: `frameworks.CUPTI`)
TEARDOWN = "TEARDOWN_CUPTI"
FREED = ("pending", "PyTorch's profiler (its teardown had not run when JAX's profiler started)")


@contextlib.contextmanager
def recording(device: Any) -> Iterator[Any]:
    """A Kineto session: host operators always, the GPU's kernels on a CUDA device."""
    from torch.autograd import profiler

    on_gpu = device.type == "cuda"
    prof = profiler.profile(use_cpu=True, use_device="cuda" if on_gpu else None, use_kineto=True)
    with chatter.native_stderr("torch", logging.DEBUG):  # its session lines: -vv
        prof.__enter__()
    if on_gpu:  # what it leaves JAX's profiler: CUPTI freed at a CUDA call after it, or kept
        setting = os.environ.get(TEARDOWN)
        kept = f"TEARDOWN_CUPTI={setting}" if setting else "TEARDOWN_CUPTI unset"
        frameworks.CUPTI.setdefault(
            *(FREED if setting == "1" else ("holder", f"PyTorch's profiler ({kept})"))
        )
    try:
        yield prof
    finally:
        with chatter.native_stderr("torch", logging.DEBUG):
            prof.__exit__(None, None, None)


def raw_events(prof: Any) -> list[Any]:
    """Kineto's events, unprocessed: reading them skips the profiler's Python event tree."""
    return list(prof.kineto_results.events())


@functools.cache
def warm(device: Any) -> float:
    """Start the profiler (and CUPTI) once per process and device, outside any case's timing; what a
    session (start, stop, read) costs from then on."""
    cost = 0.0
    for _ in range(2):  # the first session starts CUPTI; the second costs what every later one will
        start = time.perf_counter()
        with recording(device) as prof:
            x = torch.ones(8, device=device)
            (x + 1).sum().item()
        raw_events(prof)
        cost = time.perf_counter() - start
        x.sum().item()  # CUDA calls between sessions, as a case's rounds make: Kineto's teardown lands
    return cost


def session_cost() -> float:
    """What a profiler session costs on the current GPU (its warm-up, paid once): sizes a pilot."""
    return warm(torch.device("cuda", torch.cuda.current_device()))


COUNT_SKIPPED = ("ProfilerStep", "[memory]", "cudaDeviceSynchronize", "cudaStreamSynchronize")


def count_kernels(fn: Callable[[], Any], device: Any, calls: int = 3) -> float:
    """Kernels one call launches: device kernel events on CUDA; on a CPU, top-level operator calls (a
    compiled region counts as one), the closest analogue of a launch."""
    with recording(device) as prof, torch.no_grad():
        for _ in range(calls):
            fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    events = prof.function_events
    if device.type == "cuda":
        kernels = [
            e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
        ]
    else:
        kernels = [
            e for e in events if e.cpu_parent is None and not e.name.startswith(COUNT_SKIPPED)
        ]
    return len(kernels) / calls
