"""Rows of the fusion and elementwise suites in the result formats their seed documents show."""

from __future__ import annotations

from typing import Any

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
FUSION_KEYS = (
    "fusion_pattern",
    "unfused_latency_ms",
    "unfused_gflops",
    "fused_latency_ms",
    "fused_gflops",
    "speedup_factor",
    "memory_reduction",
)


def _num(value: Any) -> Any:
    if value in ("", None):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return int(number) if number.is_integer() and not isinstance(value, float) else number


def fusion_record(row: dict[str, Any]) -> dict[str, Any]:
    """The fusion seed's result dictionary (plus status/error, so failures are never dropped)."""
    out = {key: _num(row.get(key)) for key in FUSION_KEYS}
    out["fusion_pattern"] = row.get("fusion_pattern") or row.get("pattern")
    out["input_shape"] = tuple(int(d) for d in str(row.get("input_shape") or "").split("x") if d)
    out["unfused_bytes"] = (
        int(float(row["unfused_bytes"])) if row.get("unfused_bytes") not in (None, "") else None
    )
    out["fused_bytes"] = (
        int(float(row["fused_bytes"])) if row.get("fused_bytes") not in (None, "") else None
    )
    out["flops"] = int(float(row["flops"])) if row.get("flops") not in (None, "") else None
    out["extra_params"] = {
        k: row.get(k)
        for k in (
            "dtype",
            "platform",
            "device_kind",
            "fused_impl",
            "unfused_kernels",
            "fused_kernels",
            "fusion_verdict",
            "unfused_peak_memory_mb",
            "fused_peak_memory_mb",
        )
    }
    out.update(status=row.get("status"), error=row.get("error") or "")
    return out


def elementwise_record(row: dict[str, Any]) -> dict[str, Any]:
    """The elementwise guide's JSON entry (time_ms is the median device time)."""
    return {
        "operation": ELEMENTWISE_NAMES.get(row["operation"], row["operation"]),
        "implementation": IMPLEMENTATION_NAMES.get(row["implementation"], row["implementation"]),
        "batch_size": int(row["batch"]),
        "sequence_length": int(row["seq"]),
        "tensor_dimension": int(row["hidden"]),
        "dtype": row.get("dtype"),
        "time_ms": _num(row.get("time_ms")),
        "memory_mb": _num(row.get("memory_mb")),
        "inference_speed": _num(row.get("inference_speed")),
        "gpu_efficiency": _num(row.get("gpu_efficiency")),
        "throughput_gbps": _num(row.get("throughput_gbps")),
        "status": row.get("status"),
        "error": row.get("error") or "",
    }


FORMATS = {"fusion": fusion_record, "elementwise": elementwise_record}


def to_seed_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the suites that have a seed format, in that format; other rows are left out."""
    return [FORMATS[row["suite"]](row) for row in rows if row.get("suite") in FORMATS]
