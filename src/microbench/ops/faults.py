"""Fault-injection op for testing the harness itself: behaves as told (raise, exhaust memory, hang, crash, lie)."""

from __future__ import annotations

import gc
import os
import resource
import signal
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from microbench.catalogue import OpSpec, Param, Params, Traits, array_implementation, register


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


def _raise(p: Params) -> None:
    raise RuntimeError("injected failure")


# What each mode does before the (otherwise correct) result is returned.
BEHAVIOURS: dict[str, Callable[[Params], Any]] = {
    "ok": lambda p: None,
    "raise": _raise,
    "oom": lambda p: allocate_under_cap(p["alloc_gb"], p["memory_cap_gb"]),
    "hang": lambda p: time.sleep(p["seconds"]),
    "gc_hang": lambda p: _hang_in_gc_callback(p["seconds"]),
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


register(
    OpSpec(
        name="fault",
        suite="faults",
        doc="host op that behaves as told: ok, raise, oom, hang, crash (kills its process) or wrong (bad output)",
        params=(
            Param("mode", "choice", "ok", tuple(BEHAVIOURS)),
            Param("n", "dim", 64),
            Param("alloc_gb", "float", 1024.0),
            Param(
                "memory_cap_gb", "float", 1.0, doc="address-space cap while allocating (oom mode)"
            ),
            Param("seconds", "float", 3600.0),
            Param("seed", "int", 0),
        ),
        flops=lambda p: float(p["n"]),
        bytes=lambda p: 16.0 * p["n"],
        peak_dtype=lambda p: "fp32",
        make_inputs=lambda p, rng: {"x": rng.standard_normal((p["n"], 1), dtype=np.float32)},
        reference=lambda x, p, rows: {"out": x["x"][rows].astype(np.float64) * 2},
        output_rows=lambda p: p["n"],
        traits=Traits(internal=True),
    )
)


@array_implementation("fault", "numpy", "numpy")
def numpy_fault(p: Params) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    behave = BEHAVIOURS[p["mode"]]
    factor = 3 if p["mode"] == "wrong" else 2

    def call(x: np.ndarray) -> dict[str, np.ndarray]:
        behave(p)
        return {"out": x * factor}

    return call
