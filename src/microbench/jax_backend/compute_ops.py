"""The Ironwood compute ops written in JAX. Each builder returns fn(*inputs) -> dict of outputs.

Input order follows the names produced by the op's make_inputs (see microbench.ops.compute).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from microbench.dtypes import dtype
from microbench.ops.compute import TINY
from microbench.registry import Params

Builder = Callable[[Params], Callable[..., dict[str, Any]]]


def jnp_dtype(name: str) -> Any:
    return jnp.dtype(dtype(name).numpy)


def _dims(layout: str) -> tuple[tuple[tuple[int], tuple[int]], tuple[tuple[()], tuple[()]]]:
    return (((1,), (0,)), ((), ())) if layout == "kn" else (((1,), (1,)), ((), ()))


def matmul_f32(a: Any, b: Any, layout: str) -> Any:
    """A x B with fp32 accumulation; fp32 inputs use full fp32 precision (no bf16 passes, no tf32)."""
    precision = lax.Precision.HIGHEST if a.dtype == jnp.float32 else None
    return lax.dot_general(a, b, _dims(layout), precision=precision, preferred_element_type=jnp.float32)


def quantize(x: Any, axis: int, qdtype: Any) -> tuple[Any, Any]:
    """Dynamic absmax quantization along `axis`: fp8 values and fp32 dequantization scales."""
    x32 = x.astype(jnp.float32)
    amax = jnp.max(jnp.abs(x32), axis=axis, keepdims=True)
    scale = jnp.maximum(amax, TINY) / jnp.float32(float(jnp.finfo(qdtype).max))
    return (x32 / scale).astype(qdtype), scale


def _gemm_to(out_dtype: Callable[[Params], str]) -> Builder:
    def build(p: Params) -> Callable[..., dict[str, Any]]:
        odt = jnp_dtype(out_dtype(p))
        return lambda a, b: {"out": matmul_f32(a, b, p["layout"]).astype(odt)}
    return build


def _scaled(p: Params) -> Callable[..., dict[str, Any]]:
    return lambda a, b, sa, sb: {"out": (matmul_f32(a, b, p["layout"]) * sa * sb).astype(jnp.bfloat16)}


def _accum(p: Params) -> Callable[..., dict[str, Any]]:
    return lambda a, b, sa, sb, acc: {"out": acc + matmul_f32(a, b, p["layout"]) * sa * sb}


def _rowwise(p: Params) -> Callable[..., dict[str, Any]]:
    f8 = jnp.float8_e4m3fn
    b_k_axis = 0 if p["layout"] == "kn" else 1

    def fn(a: Any, b: Any) -> dict[str, Any]:
        qa, sa = quantize(a, 1, f8)          # (M,1)
        qb, sb = quantize(b, b_k_axis, f8)    # (1,N) for (K,N); (N,1) for (N,K)
        sb_row = sb if p["layout"] == "kn" else sb.T
        return {"out": (matmul_f32(qa, qb, p["layout"]) * sa * sb_row).astype(jnp.bfloat16)}
    return fn


def _quant(transpose: bool, static: bool) -> Builder:
    def build(p: Params) -> Callable[..., dict[str, Any]]:
        qdt = jnp_dtype(p["qdtype"])
        if static:
            scale = np.float32(p["scale"])
            return lambda x: {"q": ((x.T if transpose else x).astype(jnp.float32) / scale).astype(qdt)}

        def fn(x: Any) -> dict[str, Any]:
            q, s = quantize(x.T if transpose else x, 1, qdt)
            return {"q": q, "scale": s}
        return fn
    return build


BUILDERS: dict[str, Builder] = {
    "gemm_multiple_run": _gemm_to(lambda p: "bfloat16"),
    "gemm_simple": _gemm_to(lambda p: "bfloat16"),
    "gemm_simple_with_dtype": _gemm_to(lambda p: p["out_dtype"]),
    "gemm": _scaled,
    "gemm_accum": _accum,
    "gemm_fp8_rowwise": _rowwise,
    "add": lambda p: (lambda x, y: {"out": x + y}),
    "quantization": _quant(False, False),
    "transpose_quantization": _quant(True, False),
    "quantization_static_scaling": _quant(False, True),
    "transpose_quantization_static_scaling": _quant(True, True),
}
