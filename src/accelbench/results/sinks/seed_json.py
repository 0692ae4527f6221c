"""Fusion and elementwise rows in their seed documents' result formats (`--seed-json FILE`)."""

from __future__ import annotations

import sys
from typing import Any

from accelbench.ops.elementwise import ElementwiseExtras, ElementwiseParams
from accelbench.ops.fusion import FusionExtras, FusionParams
from accelbench.results.columns import EARLIER_NAMES
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
IMPLEMENTATION_NAMES = dict(eager="PyTorch", compile="torch.compile", triton="Triton", cuda="CUDA")


def scaled(value: float | None, factor: float) -> float | None:
    """A value in the seed's unit, to 12 digits: 0.008816 s is 8.816 ms, not 8.816000000000001."""
    return None if value is None else float(f"{value * factor:.12g}")


def seed_fields(extras: Any, *names: str) -> dict[str, Any]:
    """Seed fields read from the row's extras in the seed's units: its names are `EARLIER_NAMES`'."""
    out = {}
    for name in names:
        column, factor = EARLIER_NAMES.get(name, (name, 1))
        value = None if extras is None else getattr(extras, str(column))  # a renamed field raises
        out[name] = value if factor == 1 else scaled(value, 1 / factor)
    return out


def fusion_record(row: Row) -> dict[str, Any]:
    """The fusion seed's result dictionary (plus status/error, so failures are never dropped)."""
    x = row.extras if isinstance(row.extras, FusionExtras) else None
    p = row.params if isinstance(row.params, FusionParams) else None
    shape = x.input_shape if x else ""
    rates = ("unfused_latency_ms", "unfused_gflops", "fused_latency_ms", "fused_gflops")
    kernels = ("fused_impl", "unfused_kernels", "fused_kernels", "fusion_verdict")
    return {
        "fusion_pattern": x.fusion_pattern if x else p and p.pattern,
        **seed_fields(x, *rates, "speedup_factor", "memory_reduction"),
        "input_shape": tuple(int(d) for d in str(shape or "").split("x") if d),
        "unfused_bytes": int(x.unfused_bytes) if x else None,
        "fused_bytes": int(x.fused_bytes) if x else None,
        "flops": int(row.derived.model_flop) if row.derived.model_flop is not None else None,
        "extra_params": {
            "dtype": p and p.dtype,
            "platform": row.environment.platform,
            "device_kind": row.environment.device_kind,
            **seed_fields(x, *kernels, "unfused_peak_memory_mb", "fused_peak_memory_mb"),
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
        **seed_fields(x, "memory_mb", "inference_speed"),
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
        self.path, self.overwrite = path, overwrite

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
