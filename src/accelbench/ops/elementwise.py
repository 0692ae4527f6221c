"""LayerNorm, GELU, SiLU and losses over (batch, sequence, hidden): byte models and per-element op
counts (docs/ops.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelbench.catalogue import OpParams, OpSpec, Traits, param, register
from accelbench.platform.dtypes import dtype

OPERATIONS = ("layernorm", "gelu", "gelu_tanh", "silu", "mse_loss", "cross_entropy")
OPS_PER_ELEMENT = {
    "layernorm": 8,
    "gelu": 8,
    "gelu_tanh": 9,
    "silu": 4,
    "mse_loss": 3,
    "cross_entropy": 4,
}


@dataclass(frozen=True)
class ElementwiseParams(OpParams):
    operation: str = param("choice", "layernorm", OPERATIONS)
    batch: int = param("dim", 32)
    seq: int = param("dim", 512)
    hidden: int = param("dim", 768)
    dtype: str = param("dtype", "bfloat16", ("float32", "bfloat16", "float16"))
    device: str = param("choice", "cuda", ("cuda", "cpu"))
    seed: int = param("int", 0)


def elements(p: ElementwiseParams) -> int:
    return p.batch * p.seq * p.hidden


# bytes beyond reading the input once, by operation (p, elements, bytes each, rows): writes, extra reads
EXTRA_BYTES: dict[str, Callable[[ElementwiseParams, int, float, int], float]] = {
    "layernorm": lambda p, n, s, rows: n * s + 2 * p.hidden * s,  # output, weight and bias
    "gelu": lambda p, n, s, rows: n * s,
    "gelu_tanh": lambda p, n, s, rows: n * s,
    "silu": lambda p, n, s, rows: n * s,
    "mse_loss": lambda p, n, s, rows: n * s + s,  # target, one scalar
    "cross_entropy": lambda p, n, s, rows: rows * 8 + s,  # int64 class indices, one scalar
}


def elementwise_bytes(p: ElementwiseParams) -> float:
    s, n = dtype(p.dtype).nbytes, elements(p)
    return n * s + EXTRA_BYTES[p.operation](p, n, s, p.batch * p.seq)


@dataclass
class ElementwiseExtras:
    """What the elementwise guide reports beyond the core columns (its time_ms is time_median_s, its
    throughput gb_per_s, its efficiency bandwidth_of_peak_pct)."""

    peak_memory_bytes: int | None
    calls_per_s: float
    elements_per_s: float


register(
    OpSpec(
        name="elementwise",
        suite="elementwise",
        doc="LayerNorm / GELU / SiLU / MSE / cross-entropy by implementation",
        typed=ElementwiseParams,
        flops=lambda p: float(OPS_PER_ELEMENT[p.operation] * elements(p)),
        bytes=elementwise_bytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        row_extras=ElementwiseExtras,
        traits=Traits(default_implementations=("eager",)),
    )
)
