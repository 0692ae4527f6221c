"""The quantized GEMMs of the Ironwood suite: bf16 A (M,K) and B (K,N) quantized to fp8 e4m3 inside the
timed region, an fp8 GEMM with fp32 accumulation, the scales applied, a bf16 result.

Seven ops from one definition, differing only in how a scale covers its operand (`Scaling`). Every op
applies its scales: the reference left them out of all but one, so its outputs were wrong
(docs/ironwood.md)."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation
from accelbench.ops.common import BF16, FP8, TINY, f64, matmul_f32, normal, register_compute
from accelbench.ops.gemm import SCALED_GEMM, GemmParams, b_as_kn, b_shape, gemm_bytes, gemm_flops
from accelbench.platform.frameworks import jax

STATIC_SCALE = 0.5  # the reference's calibration "fixed, -224, 224": 224 / 448
# The float64 dequantized B of the case being checked: the check and the digest each ask several times.
_B_CACHE: dict[tuple[int, Any, str], tuple[weakref.ref[np.ndarray], np.ndarray]] = {}
Block = tuple[int, int]  # (rows, cols) of the operand one scale covers; 0 means the whole axis


@dataclass(frozen=True)
class Scaling:
    """How each operand is scaled to fp8, and how the JAX version contracts the blocks."""

    a_block: Block  # over A (M,K)
    b_block: Block  # over B as (K,N)
    static: bool = False  # the fixed scale instead of absmax / 448
    pow2: bool = False  # scales rounded up to a power of two (MX's e8m0)
    separate_dequant: bool = False  # fp32 accumulators go to memory, then a pass scales them
    jax_kernels: tuple[str, ...] = ("scaled_dot",)  # keys of JAX_KERNELS, each an implementation

    @property
    def k_block(self) -> int:
        """Elements of K one scale covers (0: all of K)."""
        return self.a_block[1]

    def flops(self, p: GemmParams) -> float:
        """The GEMM, quantizing A and B (2 per element dynamic, 1 static), each k-block's partial sums
        scaled by two factors, a division per dynamic scale (docs/ops.md)."""
        scales = grid((p.m, p.k), self.a_block) + grid((p.k, p.n), self.b_block)
        return (
            gemm_flops(p)
            + (1 if self.static else 2) * (p.m * p.k + p.k * p.n)
            + 2.0 * p.m * p.n * grid((p.k, 1), (self.k_block, 1))  # k-blocks
            + (0 if self.static else scales)
        )

    def bytes(self, p: GemmParams) -> float:
        fp32_round_trip = 2 * 4.0 * p.m * p.n if self.separate_dequant else 0.0
        return gemm_bytes(p, BF16, BF16) + fp32_round_trip

    def reference(self, x: Arrays, p: GemmParams, rows: np.ndarray) -> Arrays:
        # A's scales never span rows, so only the checked rows are quantized; B is done once per input
        a = dequantized(f64(x["a"][rows]), self.a_block, self)
        return {"out": a @ self._dequantized_b(x["b"], p)}

    def _dequantized_b(self, b: np.ndarray, p: GemmParams) -> np.ndarray:
        key = (id(b), self, p.layout)
        cached = _B_CACHE.get(key)
        if cached is not None and cached[0]() is b:
            return cached[1]
        value = dequantized(f64(b_as_kn(b, p)), self.b_block, self)
        _B_CACHE.clear()  # one entry: the case being checked
        _B_CACHE[key] = (weakref.ref(b), value)
        return value

    def spec(self, name: str, doc: str) -> OpSpec:
        """The scaled fp8 GEMM's spec (type, peak, rows, tolerance) with this scaling's models."""
        return replace(
            SCALED_GEMM,
            name=name,
            doc=doc,
            flops=self.flops,
            bytes=self.bytes,
            make_inputs=lambda p, rng: {
                "a": normal(rng, (p.m, p.k), BF16),
                "b": normal(rng, b_shape(p), BF16),
            },
            reference=self.reference,
        )


def grid(shape: tuple[int, int], block: Block) -> int:
    """How many scales cover `shape` in blocks of `block` (a ragged last block has its own)."""
    return math.prod(math.ceil(d / (b or d)) for d, b in zip(shape, block, strict=True))


def block_dims(shape: tuple[int, ...], block: Block) -> tuple[int, int]:
    return block[0] or shape[0], block[1] or shape[1]


def dequantized(x: np.ndarray, block: Block, s: Scaling) -> np.ndarray:
    """x quantized to e4m3 (saturating) with float32 block scales (absmax/448, a power of two above it
    for MX), then multiplied back, in float64."""
    br, bc = block_dims(x.shape, block)
    rows, cols = math.ceil(x.shape[0] / br), math.ceil(x.shape[1] / bc)
    if s.static:
        scale = np.full((rows, cols), STATIC_SCALE, np.float32)
    else:
        padded = np.zeros((rows * br, cols * bc))
        padded[: x.shape[0], : x.shape[1]] = np.abs(x)
        amax = padded.reshape(rows, br, cols, bc).max(axis=(1, 3))
        scale = (np.maximum(amax, TINY) / FP8.max).astype(np.float32)
        scale = np.exp2(np.ceil(np.log2(scale))).astype(np.float32) if s.pow2 else scale
    full = np.repeat(np.repeat(f64(scale), br, 0), bc, 1)[: x.shape[0], : x.shape[1]]
    q = np.clip(x / full, -FP8.max, FP8.max).astype(FP8.numpy)
    return f64(q) * full


RECIPES = {
    "gemm_fp8_rowwise": (
        Scaling((1, 0), (0, 1)),
        "A per row and B per column, dynamic absmax; scales applied in the GEMM's epilogue",
    ),
    "gemm_fp8_rowwise_static_scaling": (
        Scaling((0, 0), (0, 0), static=True),
        "A and B with the fixed per-tensor scale 0.5 (no reduction); scales applied",
    ),
    "gemm_fp8_rowwise_w_dequantize": (
        Scaling((1, 0), (0, 1), separate_dequant=True),
        "as gemm_fp8_rowwise, but the fp32 accumulators are written and a separate pass dequantizes",
    ),
    "gemm_fp8_b128_fp32": (
        Scaling((1, 128), (128, 128), jax_kernels=("k_block_loop", "bf16_dequant")),
        "DeepSeek-V3 blocks: A per 1x128 tile along K, B per 128x128 block, fp32 accumulation",
    ),
    "gemm_fp8_b128_fp32_static_scaling": (
        Scaling((1, 128), (128, 128), static=True, jax_kernels=("k_block_loop", "bf16_dequant")),
        "the DeepSeek-V3 block GEMM with every block's scale fixed at 0.5 (no reduction)",
    ),
    "gemm_mxfp8_b32": (
        Scaling((1, 32), (32, 1), pow2=True, jax_kernels=("bf16_dequant",)),
        "MX fp8: 32-element blocks along K for A and B, power-of-two (e8m0) scales",
    ),
    "gemm_mxfp8_b32_static_scaling": (
        Scaling((1, 32), (32, 1), static=True, pow2=True, jax_kernels=("bf16_dequant",)),
        "MX fp8 with every block's scale fixed at 2^-1 (no reduction)",
    ),
}


def jax_block_quantize(x: Any, block: Block, s: Scaling) -> tuple[Any, Any]:
    """(e4m3 values zero-padded to whole blocks, float32 scales (rows, cols) of blocks)."""
    jnp = jax.numpy
    br, bc = block_dims(x.shape, block)
    rows, cols = -(-x.shape[0] // br), -(-x.shape[1] // bc)
    x32 = jnp.pad(x.astype(jnp.float32), ((0, rows * br - x.shape[0]), (0, cols * bc - x.shape[1])))
    blocks = x32.reshape(rows, br, cols, bc)
    if s.static:
        scale = jnp.full((rows, cols), STATIC_SCALE, jnp.float32)
    else:
        scale = jnp.maximum(jnp.max(jnp.abs(blocks), axis=(1, 3)), TINY) / jnp.float32(FP8.max)
        scale = jnp.exp2(jnp.ceil(jnp.log2(scale))) if s.pow2 else scale
    q = jnp.clip(blocks / scale[:, None, :, None], -FP8.max, FP8.max)
    return q.reshape(rows * br, cols * bc).astype(jnp.float8_e4m3fn), scale


def jax_scaled_dot(s: Scaling, qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
    """Per-tensor or per-row/column scales: one fp8 GEMM, then the outer product of the scales."""
    acc = matmul_f32(qa, qb, "kn")
    if s.separate_dequant:
        acc = jax.lax.optimization_barrier(acc)  # the accumulators reach memory before scaling
    return acc * sa * sb


def jax_k_block_loop(s: Scaling, qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
    """XLA has no block-scaled fp8 GEMM: one fp8 GEMM per 128-wide k-block, each partial product
    scaled by its A tile's and B block's scales and added to the fp32 accumulator."""
    jnp, lax = jax.numpy, jax.lax
    bk, bn = s.b_block
    m, n = qa.shape[0], qb.shape[1]
    sb_cols = jnp.repeat(sb, bn, axis=1)  # (k-blocks, N padded)

    def step(i: Any, acc: Any) -> Any:
        a = lax.dynamic_slice_in_dim(qa, i * bk, bk, axis=1)
        b = lax.dynamic_slice_in_dim(qb, i * bk, bk, axis=0)
        partial = matmul_f32(a, b, "kn")
        return acc + partial * lax.dynamic_slice_in_dim(sa, i, 1, axis=1) * sb_cols[i]

    return lax.fori_loop(0, sa.shape[1], step, jnp.zeros((m, n), jnp.float32))


def jax_bf16_dequant(s: Scaling, qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
    """No block-scaled GEMM in XLA on GPUs: dequantize to bf16 and one bf16 GEMM with fp32 accumulation.
    Exact for MX (e4m3 times a power of two is a bf16 value); for 128-blocks each dequantized operand is
    rounded to bf16 (2^-9 relative, far below the fp8 grid's 2^-4), the fast alternative to the loop."""
    jnp = jax.numpy

    def expand(q: Any, scale: Any) -> Any:
        r, c = q.shape[0] // scale.shape[0], q.shape[1] // scale.shape[1]
        full = jnp.repeat(jnp.repeat(scale.astype(jnp.bfloat16), r, axis=0), c, axis=1)
        return q.astype(jnp.bfloat16) * full

    return matmul_f32(expand(qa, sa), expand(qb, sb), "kn")


JAX_KERNELS: dict[str, Callable[..., Any]] = {
    "scaled_dot": jax_scaled_dot,
    "k_block_loop": jax_k_block_loop,
    "bf16_dequant": jax_bf16_dequant,
}


def jax_builder(s: Scaling, kernel: str) -> Callable[[GemmParams], Callable[..., dict[str, Any]]]:
    def build(p: GemmParams) -> Callable[..., dict[str, Any]]:
        def fn(a: Any, b: Any) -> dict[str, Any]:
            qa, sa = jax_block_quantize(a, s.a_block, s)
            qb, sb = jax_block_quantize(b if p.layout == "kn" else b.T, s.b_block, s)
            out = JAX_KERNELS[kernel](s, qa, sa, qb, sb)
            return {"out": out[:, : p.n].astype(jax.numpy.bfloat16)}

        return fn

    return build


for _name, (_scaling, _doc) in RECIPES.items():
    register_compute(_scaling.spec(_name, _doc))
    for _kernel in _scaling.jax_kernels:
        _label = "jit" if _kernel == "scaled_dot" else f"jit:{_kernel}"
        array_implementation(_name, "jax", _label)(jax_builder(_scaling, _kernel))
