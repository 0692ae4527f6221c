"""Fault-injection op for testing the harness itself: behaves as told (raise, exhaust memory, hang, crash, lie)."""

from __future__ import annotations

import gc
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import OpParams, OpSpec, Traits, array_implementation, param, register


def allocate_under_cap(gib: float, cap_gib: float) -> np.ndarray:
    """Really allocate `gib` with the address space capped at current use + `cap_gib` (RLIMIT_AS), so
    asking beyond the cap fails inside the allocator, as a device allocator would."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * resource.getpagesize()
    limit = in_use + int(cap_gib * 2**30)
    resource.setrlimit(
        resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
    )
    try:
        return np.ones(int(gib * 2**30), dtype=np.uint8)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _raise(p: FaultParams) -> None:
    raise RuntimeError("injected failure")


# What each mode does before the (otherwise correct) result is returned.
BEHAVIOURS: dict[str, Callable[[FaultParams], Any]] = {
    "ok": lambda p: None,
    "raise": _raise,
    "oom": lambda p: allocate_under_cap(p.alloc_gb, p.memory_cap_gb),
    "hang": lambda p: time.sleep(p.seconds),
    "gc_hang": lambda p: _hang_in_gc_callback(p.seconds),
    "crash": lambda p: os.kill(os.getpid(), signal.SIGKILL),
    "wrong": lambda p: None,
}


def _hang_in_gc_callback(seconds: float) -> None:
    """A hang whose time is spent inside a garbage-collection callback, where an exception raised by a
    signal handler is swallowed (as in JAX's): what an in-process timeout must still stop."""

    def slow(phase: str, info: dict[str, Any]) -> None:
        time.sleep(0.5)

    gc.callbacks.append(slow)
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            gc.collect()
    finally:
        gc.callbacks.remove(slow)


@dataclass(frozen=True)
class FaultParams(OpParams):
    mode: str = param("choice", "ok", tuple(BEHAVIOURS))
    n: int = param("dim", 64)
    alloc_gb: float = param("float", 1024.0)
    memory_cap_gb: float = param("float", 1.0, doc="address-space cap while allocating (oom mode)")
    seconds: float = param("float", 3600.0)
    seed: int = param("int", 0)


register(
    OpSpec(
        name="fault",
        suite="faults",
        doc="host op that behaves as told: ok, raise, oom, hang, crash (kills its process) or wrong (bad output)",
        typed=FaultParams,
        flops=lambda p: float(p.n),
        bytes=lambda p: 16.0 * p.n,
        peak_dtype=lambda p: "fp32",
        make_inputs=lambda p, rng: {"x": rng.standard_normal((p.n, 1), dtype=np.float32)},
        reference=lambda x, p, rows: {"out": x["x"][rows].astype(np.float64) * 2},
        output_rows=lambda p: p.n,
        traits=Traits(internal=True),
    )
)


@array_implementation("fault", "numpy", "numpy")
def numpy_fault(p: FaultParams) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    behave = BEHAVIOURS[p.mode]
    factor = 3 if p.mode == "wrong" else 2

    def call(x: np.ndarray) -> dict[str, np.ndarray]:
        behave(p)
        return {"out": x * factor}

    return call
