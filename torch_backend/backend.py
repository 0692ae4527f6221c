"""PyTorch backend: device choice, inputs, numerics check and device timing for each suite."""

from __future__ import annotations

import platform
import time

import numpy as np
import torch

from microbench.errors import unsupported
from microbench.measurement import DeviceInfo, Measurement, Prepared
from microbench.plan import Case
from microbench.procedure import check_fits, measure
from microbench.registry import OpSpec
from microbench.timers import wall_clock
from torch_backend import compute_ops
from torch_backend.devices import synchronizer
from torch_backend.tensors import to_numpy, to_torch
from torch_backend.timing import cuda_events


def default_device() -> torch.device:
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def warm_gpu(seconds: float = 0.3) -> None:
    """Bring an idle GPU to its working clocks before the first sample (seen on an H200: the first case of
    a run was ~15% slow with clocks still ramping from idle)."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()


class TorchBackend:
    name = "torch"

    def __init__(self) -> None:
        if torch.cuda.is_available():
            warm_gpu()

    def device_info(self) -> DeviceInfo:
        return self.device_info_for(default_device())

    def device_info_for(self, device: torch.device) -> DeviceInfo:
        if device.type == "cuda":
            return DeviceInfo(kind=torch.cuda.get_device_name(device), count=torch.cuda.device_count(), platform="gpu",
                              framework="torch", framework_version=torch.__version__)
        return DeviceInfo(kind=platform.processor() or platform.machine(), count=1, platform="cpu",
                          framework="torch", framework_version=torch.__version__)

    def timer(self, device: torch.device):
        return cuda_events if device.type == "cuda" else wall_clock

    def _compute_device(self, case: Case) -> torch.device:
        if case.params.get("sharding", "none") != "none":
            raise unsupported("the PyTorch parity ops run on one device (sharding: none)")
        base = default_device()
        if base.type == "cuda":
            index = case.params.get("device", 0)
            if index >= torch.cuda.device_count():
                raise unsupported(f"device {index} requested but only {torch.cuda.device_count()} GPUs exist")
            return torch.device("cuda", index)
        return base

    def prepare_compute(self, case: Case, spec: OpSpec, device: torch.device) -> Prepared:
        if device.type == "cuda":
            check_fits(spec, case, torch.cuda.get_device_properties(device).total_memory)
        host = spec.make_inputs(case.params, np.random.default_rng(case.params.get("seed", 0)))
        args = [to_torch(host[name], device) for name in host]
        gemms = compute_ops.Gemms(device)
        fn = compute_ops.build(spec.name, case.params, gemms)
        fp8_gemm = any(a.dtype in compute_ops.FP8 for a in args) or spec.name == "gemm_fp8_rowwise"

        def call() -> dict[str, torch.Tensor]:
            with torch.inference_mode():
                return fn(*args)  # gemm_accum updates its buffer in place

        def fetch(out: dict[str, torch.Tensor], name: str, rows: np.ndarray) -> np.ndarray:
            return to_numpy(out[name][torch.as_tensor(rows, device=out[name].device)])

        return Prepared(call=call, sync=synchronizer(device), fetch=fetch, inputs=host, implementation=gemms.label if fp8_gemm else "eager",
                        extra={"devices_used": 1, "sharding": "none"})

    def measure(self, case: Case, spec: OpSpec) -> Measurement:
        if spec.suite == "compute":
            device = self._compute_device(case)
            prepared = self.prepare_compute(case, spec, device)
            return measure(case, spec, prepared, self.timer(device), self.device_info_for(device))
        from torch_backend.suites import measure_suite
        return measure_suite(self, case, spec)
