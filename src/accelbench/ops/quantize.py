"""Quantization to fp8 or fp4: dynamic per-row absmax scaling or a fixed scale, of X or of X^T. The
fixed scale defaults to the reference's calibration ("fixed, -224, 224": 224/448 = 0.5); values beyond
the quantized dtype's range saturate, as the reference's quantizer does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.ops.common import BF16, TINY, Placed, f64, jnp_dtype, normal, register_compute
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax


@dataclass(frozen=True)
class QuantizeParams(Placed):
    """X (m, n) in bf16 and the dtype it is quantized to."""

    m: int = param("dim")
    n: int = param("dim")
    qdtype: str = param(
        "dtype",
        "float8",
        ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"),
        "quantized dtype",
        aliases=("quant_dtype",),
    )


@dataclass(frozen=True)
class StaticQuantizeParams(QuantizeParams):
    """...with a fixed scale instead of each row's absmax."""

    scale: float = param("float", 0.5, doc="fixed dequantization scale")


@dataclass(frozen=True)
class Variant:
    transpose: bool
    static: bool

    def rows(self, p: QuantizeParams) -> int:
        """Rows of the output, and the count of dynamic scales."""
        return int(p.n if self.transpose else p.m)

    def reference(self, x: Arrays, p: QuantizeParams, rows: np.ndarray) -> Arrays:
        src = (x["x"].T if self.transpose else x["x"])[rows]
        qdt = dtype(p.qdtype)
        if isinstance(p, StaticQuantizeParams):
            scaled = f64(src) / np.float64(np.float32(p.scale))
            return {"q": np.clip(scaled, -qdt.max, qdt.max).astype(qdt.numpy)}
        amax = np.max(np.abs(f64(src)), axis=1, keepdims=True)  # each row's, dynamically
        scale = (np.maximum(amax, TINY) / qdt.max).astype(np.float32)
        return {"q": (f64(src) / f64(scale)).astype(qdt.numpy), "scale": scale}

    def flops(self, p: QuantizeParams) -> float:
        if self.static:
            return float(p.m * p.n)  # one multiply per element
        # |x| into the row max and the scaling; a division per scale
        return 2.0 * p.m * p.n + self.rows(p)

    def bytes(self, p: QuantizeParams) -> float:
        moved = p.m * p.n * (BF16.nbytes + dtype(p.qdtype).nbytes)
        return moved + (4.0 if self.static else 4.0 * self.rows(p))

    def spec(self, name: str) -> OpSpec:
        what = "X^T" if self.transpose else "X"
        doc = (
            f"bf16 {what} -> fp8 values with a fixed scale"
            if self.static
            else f"bf16 {what} -> fp8 values plus fp32 per-row scales of {what}, dynamic absmax"
        )
        return OpSpec(
            name=name,
            doc=doc,
            typed=StaticQuantizeParams if self.static else QuantizeParams,
            flops=self.flops,
            bytes=self.bytes,
            make_inputs=lambda p, rng: {"x": normal(rng, (p.m, p.n), BF16)},
            reference=self.reference,
            output_rows=self.rows,
        )


def jax_builder(v: Variant) -> Callable[[QuantizeParams], Callable[..., dict[str, Any]]]:
    def build(p: QuantizeParams) -> Callable[..., dict[str, Any]]:
        jnp, qdt, limit = jax.numpy, jnp_dtype(p.qdtype), float(dtype(p.qdtype).max)

        def fn(x: Any) -> dict[str, Any]:
            x32 = (x.T if v.transpose else x).astype(jnp.float32)
            if isinstance(p, StaticQuantizeParams):
                return {"q": jnp.clip(x32 / np.float32(p.scale), -limit, limit).astype(qdt)}
            amax = jnp.max(jnp.abs(x32), axis=1, keepdims=True)
            scale = jnp.maximum(amax, TINY) / jnp.float32(limit)
            return {"q": (x32 / scale).astype(qdt), "scale": scale}

        return fn

    return build


VARIANTS = {
    "quantization": Variant(False, False),
    "transpose_quantization": Variant(True, False),
    "quantization_static_scaling": Variant(False, True),
    "transpose_quantization_static_scaling": Variant(True, True),
}
for _name, _variant in VARIANTS.items():
    register_compute(_variant.spec(_name))
    array_implementation(_name, "jax", "jit")(jax_builder(_variant))
