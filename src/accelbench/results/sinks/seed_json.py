"""Fusion and elementwise rows in their seed documents' result formats (`--seed-json FILE`)."""

from __future__ import annotations

import sys
from typing import Any

from accelbench.ops.elementwise import ElementwiseExtras, ElementwiseParams
from accelbench.ops.fusion import FusionExtras, FusionParams
from accelbench.results.records import Row
from accelbench.results.sinks import SEED_JSON, RunContext, Sink, register_sink
from accelbench.results.writer import check_new_file, write_json_atomically

ELEMENTWISE_NAMES = {
    "layernorm": "LayerNorm",
    "gelu": "GELU",
    "gelu_tanh": "GELU_tanh",
    "silu": "Swish",
    "mse_loss": "MSELoss",
    "cross_entropy": "CrossEntropyLoss",
}
IMPLEMENTATION_NAMES = {
    "eager": "PyTorch",
    "compile": "torch.compile",
    "triton": "Triton",
    "cuda": "CUDA",
}
MIB = 2**20  # the seeds' "MB" is what torch's memory counters divide by


def scaled(value: float | None, factor: float) -> float | None:
    """A value in the seed's unit, to 12 digits: 0.008816 s is 8.816 ms, not 8.816000000000001."""
    return None if value is None else float(f"{value * factor:.12g}")


def fusion_record(row: Row) -> dict[str, Any]:
    """The fusion seed's result dictionary (plus status/error, so failures are never dropped)."""
    x = row.extras if isinstance(row.extras, FusionExtras) else None
    p = row.params if isinstance(row.params, FusionParams) else None
    shape = x.input_shape if x else ""
    return {
        "fusion_pattern": x.fusion_pattern if x else p and p.pattern,
        "unfused_latency_ms": scaled(x.unfused_latency_s, 1e3) if x else None,
        "unfused_gflops": x.unfused_gflop_per_s if x else None,
        "fused_latency_ms": scaled(x.fused_latency_s, 1e3) if x else None,
        "fused_gflops": x.fused_gflop_per_s if x else None,
        "speedup_factor": x.speedup_ratio if x else None,
        "memory_reduction": scaled(x.memory_reduction_pct, 1e-2) if x else None,
        "input_shape": tuple(int(d) for d in str(shape or "").split("x") if d),
        "unfused_bytes": int(x.unfused_bytes) if x else None,
        "fused_bytes": int(x.fused_bytes) if x else None,
        "flops": int(row.derived.model_flop) if row.derived.model_flop is not None else None,
        "extra_params": {
            "dtype": p and p.dtype,
            "platform": row.environment.platform,
            "device_kind": row.environment.device_kind,
            "fused_impl": x.fused_impl if x else None,
            "unfused_kernels": x.unfused_kernels_per_iter if x else None,
            "fused_kernels": x.fused_kernels_per_iter if x else None,
            "fusion_verdict": x.fusion_verdict if x else None,
            "unfused_peak_memory_mb": scaled(x.unfused_peak_memory_bytes, 1 / MIB) if x else None,
            "fused_peak_memory_mb": scaled(x.fused_peak_memory_bytes, 1 / MIB) if x else None,
        },
        "status": row.status.value,
        "error": row.identity.error or "",
    }


def elementwise_record(row: Row) -> dict[str, Any]:
    """The elementwise guide's JSON entry (its time_ms is the median device time)."""
    x = row.extras if isinstance(row.extras, ElementwiseExtras) else None
    p = row.params
    assert isinstance(p, ElementwiseParams)
    operation = p.operation
    implementation = row.identity.implementation or ""
    return {
        "operation": ELEMENTWISE_NAMES.get(operation, operation),
        "implementation": IMPLEMENTATION_NAMES.get(implementation, implementation),
        "batch_size": p.batch,
        "sequence_length": p.seq,
        "tensor_dimension": p.hidden,
        "dtype": p.dtype,
        "time_ms": scaled(row.median_s, 1e3),
        "memory_mb": scaled(x.peak_memory_bytes, 1 / MIB) if x else None,
        "inference_speed": x.calls_per_s if x else None,
        "gpu_efficiency": row.roofline.bandwidth_of_peak_pct,
        "throughput_gbps": row.derived.gb_per_s,
        "status": row.status.value,
        "error": row.identity.error or "",
    }


FORMATS = {"fusion": fusion_record, "elementwise": elementwise_record}


def to_seed_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Rows of the suites that have a seed format, in that format; other rows are left out."""
    return [FORMATS[row.identity.suite](row) for row in rows if row.identity.suite in FORMATS]


class SeedJson(Sink):
    def __init__(self, path: str, overwrite: bool) -> None:
        self.path = path
        self.overwrite = overwrite

    def open(self) -> None:
        check_new_file(self.path, "--seed-json", self.overwrite)

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if not interrupted:
            write_json_atomically(self.path, to_seed_records(rows))
            print(f"seed-format JSON: {self.path}", file=sys.stderr)


@register_sink("seed_json", order=20)
def seed_json(context: RunContext) -> Sink | None:
    path = context.options.flag(SEED_JSON)
    return SeedJson(path, context.options.overwrite) if path else None
