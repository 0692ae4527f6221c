"""LayerNorm, GELU, SiLU and losses over (batch, sequence, hidden): byte models and op counts.

Bytes: the input read once, the output written once (LayerNorm also reads its weight and bias; the
losses read a target and write one scalar). FLOPs are per-element op counts, documented in docs/ops.md.
"""

from __future__ import annotations

from microbench.dtypes import dtype
from microbench.registry import OpSpec, Param, Params, register

OPERATIONS = ("layernorm", "gelu", "gelu_tanh", "silu", "mse_loss", "cross_entropy")
IMPLEMENTATIONS = ("eager", "compile", "triton", "cuda")
OPS_PER_ELEMENT = {"layernorm": 8, "gelu": 8, "gelu_tanh": 9, "silu": 4, "mse_loss": 3, "cross_entropy": 4}


def elements(p: Params) -> int:
    return p["batch"] * p["seq"] * p["hidden"]


def elementwise_bytes(p: Params) -> float:
    s, n, rows = dtype(p["dtype"]).nbytes, elements(p), p["batch"] * p["seq"]
    op = p["operation"]
    if op == "layernorm":
        return 2 * n * s + 2 * p["hidden"] * s
    if op in ("gelu", "gelu_tanh", "silu"):
        return 2 * n * s
    if op == "mse_loss":
        return 2 * n * s + s
    return n * s + rows * 8 + s  # cross_entropy: logits, int64 class indices, one scalar


register(OpSpec(
    name="elementwise", suite="elementwise", doc="LayerNorm / GELU / SiLU / MSE / cross-entropy by implementation",
    params=(Param("operation", "choice", "layernorm", OPERATIONS),
            Param("implementation", "choice", "eager", IMPLEMENTATIONS),
            Param("batch", "dim", 32), Param("seq", "dim", 512), Param("hidden", "dim", 768),
            Param("dtype", "dtype", "bfloat16", ("float32", "bfloat16", "float16")),
            Param("device", "choice", "cuda", ("cuda", "cpu")), Param("seed", "int", 0)),
    backends=("torch",),
    flops=lambda p: float(OPS_PER_ELEMENT[p["operation"]] * elements(p)),
    bytes=elementwise_bytes, peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
))
