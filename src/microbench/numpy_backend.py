"""A host-only backend for harness self-tests (the fault ops): no framework, wall-clock time."""

from __future__ import annotations

import os
import platform
import signal
import time

import numpy as np

from microbench.measurement import DeviceInfo, Measurement, Prepared
from microbench.plan import Case
from microbench.procedure import measure
from microbench.registry import OpSpec
from microbench.timers import wall_clock


class DeviceOutOfMemory(MemoryError):
    """Stands in for a device allocator's out-of-memory error."""


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
                raise DeviceOutOfMemory(f"out of memory: tried to allocate {p['alloc_gb']:.1f} GiB")
            if mode == "hang":
                time.sleep(p["seconds"])
            if mode == "crash":
                os.kill(os.getpid(), signal.SIGKILL)
            return {"out": x["x"] * (3 if mode == "wrong" else 2)}

        prepared = Prepared(call=call, sync=lambda out: None, fetch=lambda out, name, rows: out[name][rows],
                            inputs=x, implementation="numpy")
        return measure(case, spec, prepared, wall_clock, self.device_info())
