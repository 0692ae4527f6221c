"""Dispatch of the PyTorch suites that are not plain ops (each suite owns its measurement)."""

from __future__ import annotations

from typing import Any

from microbench.measurement import Measurement
from microbench.plan import Case
from microbench.registry import OpSpec


def measure_suite(backend: Any, case: Case, spec: OpSpec) -> Measurement:
    if spec.suite == "quantization":
        from torch_backend.quantization_suite import measure_quantization
        return measure_quantization(backend, case, spec)
    if spec.suite == "fusion":
        from torch_backend.fusion_suite import measure_fusion
        return measure_fusion(backend, case, spec)
    if spec.suite == "elementwise":
        from torch_backend.elementwise_suite import measure_elementwise
        return measure_elementwise(backend, case, spec)
    raise KeyError(f"no PyTorch suite named {spec.suite!r}")
