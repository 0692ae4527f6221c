"""LayerNorm, GELU, SiLU and losses over (batch, sequence, hidden): byte models and per-element op
counts (docs/ops.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelbench.catalogue import OpParams, OpSpec, Traits, param, register
from accelbench.platform.dtypes import dtype

# by operation: ops per element, and bytes beyond reading the input once (p, elements, bytes each,
# rows): writes, extra reads
OPERATIONS: dict[str, tuple[int, Callable[[ElementwiseParams, int, float, int], float]]] = {
    "layernorm": (8, lambda p, n, s, rows: n * s + 2 * p.hidden * s),  # output, weight and bias
    "gelu": (8, lambda p, n, s, rows: n * s),
    "gelu_tanh": (9, lambda p, n, s, rows: n * s),
    "silu": (4, lambda p, n, s, rows: n * s),
    "mse_loss": (3, lambda p, n, s, rows: n * s + s),  # target, one scalar
    "cross_entropy": (4, lambda p, n, s, rows: rows * 8 + s),  # int64 class indices, one scalar
}


@dataclass(frozen=True)
class ElementwiseParams(OpParams):
    operation: str = param("choice", "layernorm", tuple(OPERATIONS))
    batch: int = param("dim", 32)
    seq: int = param("dim", 512)
    hidden: int = param("dim", 768)
    dtype: str = param("dtype", "bfloat16", ("float32", "bfloat16", "float16"))
    device: str = param("choice", "cuda", ("cuda", "cpu"))
    seed: int = param("int", 0)


def elements(p: ElementwiseParams) -> int:
    return p.batch * p.seq * p.hidden


def elementwise_bytes(p: ElementwiseParams) -> float:
    s, n = dtype(p.dtype).nbytes, elements(p)
    return n * s + OPERATIONS[p.operation][1](p, n, s, p.batch * p.seq)


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
        flops=lambda p: float(OPERATIONS[p.operation][0] * elements(p)),
        bytes=elementwise_bytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        row_extras=ElementwiseExtras,
        traits=Traits(default_implementations=("eager",)),
    )
)
