"""Rows of the fusion and elementwise suites in the result formats their seed documents show."""

from __future__ import annotations

from typing import Any

from microbench.results.compare import number, scaled

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


def _int(row: dict[str, Any], column: str) -> int | None:
    value = number(row, column)
    return None if value is None else int(value)


def fusion_record(row: dict[str, Any]) -> dict[str, Any]:
    """The fusion seed's result dictionary (plus status/error, so failures are never dropped)."""
    return {
        "fusion_pattern": row.get("fusion_pattern") or row.get("pattern"),
        "unfused_latency_ms": scaled(row, "unfused_latency_s", 1e3),
        "unfused_gflops": number(row, "unfused_gflop_per_s"),
        "fused_latency_ms": scaled(row, "fused_latency_s", 1e3),
        "fused_gflops": number(row, "fused_gflop_per_s"),
        "speedup_factor": number(row, "speedup_ratio"),
        "memory_reduction": scaled(row, "memory_reduction_pct", 1e-2),
        "input_shape": tuple(int(d) for d in str(row.get("input_shape") or "").split("x") if d),
        "unfused_bytes": _int(row, "unfused_bytes"),
        "fused_bytes": _int(row, "fused_bytes"),
        "flops": _int(row, "model_flop"),
        "extra_params": {
            "dtype": row.get("dtype"),
            "platform": row.get("platform"),
            "device_kind": row.get("device_kind"),
            "fused_impl": row.get("fused_impl"),
            "unfused_kernels": number(row, "unfused_kernels_per_iter"),
            "fused_kernels": number(row, "fused_kernels_per_iter"),
            "fusion_verdict": row.get("fusion_verdict"),
            "unfused_peak_memory_mb": scaled(row, "unfused_peak_memory_bytes", 1 / MIB),
            "fused_peak_memory_mb": scaled(row, "fused_peak_memory_bytes", 1 / MIB),
        },
        "status": row.get("status"),
        "error": row.get("error") or "",
    }


def elementwise_record(row: dict[str, Any]) -> dict[str, Any]:
    """The elementwise guide's JSON entry (its time_ms is the median device time)."""
    return {
        "operation": ELEMENTWISE_NAMES.get(row["operation"], row["operation"]),
        "implementation": IMPLEMENTATION_NAMES.get(row["implementation"], row["implementation"]),
        "batch_size": int(row["batch"]),
        "sequence_length": int(row["seq"]),
        "tensor_dimension": int(row["hidden"]),
        "dtype": row.get("dtype"),
        "time_ms": scaled(row, "time_median_s", 1e3),
        "memory_mb": scaled(row, "peak_memory_bytes", 1 / MIB),
        "inference_speed": number(row, "calls_per_s"),
        "gpu_efficiency": number(row, "bandwidth_of_peak_pct"),
        "throughput_gbps": number(row, "gb_per_s"),
        "status": row.get("status"),
        "error": row.get("error") or "",
    }


FORMATS = {"fusion": fusion_record, "elementwise": elementwise_record}


def to_seed_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the suites that have a seed format, in that format; other rows are left out."""
    return [FORMATS[row["suite"]](row) for row in rows if row.get("suite") in FORMATS]
