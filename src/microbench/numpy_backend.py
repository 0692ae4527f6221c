"""A host-only backend for harness self-tests (the fault ops): no framework, wall-clock time."""

from __future__ import annotations

import os
import platform
import resource
import signal
import time

import numpy as np

from microbench.measurement import DeviceInfo, Measurement, Prepared
from microbench.plan import Case
from microbench.procedure import measure
from microbench.registry import OpSpec
from microbench.timers import wall_clock


def allocate_under_cap(gib: float, cap_gib: float) -> np.ndarray:
    """Really allocate `gib` with the address space capped at current use + `cap_gib` (RLIMIT_AS), so
    asking beyond the cap fails inside the allocator, as a device allocator would."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    in_use = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    limit = in_use + int(cap_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        return np.ones(int(gib * 2**30), dtype=np.uint8)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class NumpyBackend:
    name = "numpy"

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(kind=platform.processor() or platform.machine(), count=1, platform="cpu",
                          framework="numpy", framework_version=np.__version__)

    def measure(self, case: Case, spec: OpSpec) -> Measurement:
        p = case.params
        x = spec.make_inputs(p, np.random.default_rng(p["seed"]))

        def call() -> dict[str, np.ndarray]:
            mode = p["mode"]
            if mode == "raise":
                raise RuntimeError("injected failure")
            if mode == "oom":
                allocate_under_cap(p["alloc_gb"], p["memory_cap_gb"])
            if mode == "hang":
                time.sleep(p["seconds"])
            if mode == "crash":
                os.kill(os.getpid(), signal.SIGKILL)
            return {"out": x["x"] * (3 if mode == "wrong" else 2)}

        prepared = Prepared(call=call, sync=lambda out: None, fetch=lambda out, name, rows: out[name][rows],
                            inputs=x, implementation="numpy")
        return measure(case, spec, prepared, wall_clock, self.device_info())
