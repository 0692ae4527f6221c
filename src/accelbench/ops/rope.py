"""Rotary position embedding (the jax-bench harness's rope): each (even, odd) pair of a head's features
is rotated by the angle of its position, Y = X * F as a complex product, written out as real arithmetic
so both frameworks run the same kernels on ordinary float tensors. F is read once, in the bytes too
(upstream counted X and Y only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.ops.common import Placed, f64, normal, register_compute
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

BASE = 10000.0


@dataclass(frozen=True)
class RopeParams(Placed):
    """X's shape (pairs interleaved in head_dim) and dtype."""

    batch: int = param("dim", 32)
    heads: int = param("dim", 32)
    seq_len: int = param("dim", 1024)
    head_dim: int = param("dim", 128, doc="even: features come in (re, im) pairs")
    dtype: str = param("dtype", "float32", ("float32", "bfloat16", "float16"))


def elements(p: RopeParams) -> int:
    return p.batch * p.heads * p.seq_len * p.head_dim


def frequencies(p: RopeParams) -> np.ndarray:
    """(seq_len, head_dim): cos and sin of each position's angle, interleaved per pair."""
    half = p.head_dim // 2
    inverse = BASE ** (-np.arange(half) * 2.0 / p.head_dim)
    angles = np.arange(p.seq_len)[:, None] * inverse[None, :]
    return np.stack([np.cos(angles), np.sin(angles)], axis=-1).reshape(p.seq_len, -1)


def make_inputs(p: RopeParams, rng: np.random.Generator) -> Arrays:
    dt = dtype(p.dtype)
    x = normal(rng, (p.batch, p.heads, p.seq_len, p.head_dim), dt)
    return {"x": x, "f": frequencies(p).astype(dt.numpy)}


def rotate(x: Any, f: Any, stack: Any) -> Any:
    """The complex product of interleaved (re, im) pairs, with the framework's `stack`."""
    xr, xi, fr, fi = x[..., 0::2], x[..., 1::2], f[..., 0::2], f[..., 1::2]
    return stack([xr * fr - xi * fi, xr * fi + xi * fr], -1).reshape(x.shape)


def reference(x: Arrays, p: RopeParams, rows: np.ndarray) -> Arrays:
    flat = f64(x["x"]).reshape(-1, p.head_dim)[rows]
    positions = rows % p.seq_len
    return {"out": rotate(flat, f64(x["f"])[positions], np.stack)}


register_compute(
    OpSpec(
        name="rope",
        doc="rotary position embedding: each feature pair rotated by its position's angle",
        typed=RopeParams,
        flops=lambda p: 3.0 * elements(p),  # 6 per pair
        bytes=lambda p: dtype(p.dtype).nbytes * (2 * elements(p) + p.seq_len * p.head_dim),
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        make_inputs=make_inputs,
        reference=reference,
        output_rows=lambda p: elements(p) // p.head_dim,
        constraint=lambda p: None if p.head_dim % 2 == 0 else "head_dim must be even",
    )
)


@array_implementation("rope", "jax", "jit")
def jax_rope(p: RopeParams) -> Any:
    # the output as (batch·heads·seq_len, head_dim) rows, a free view, which the check samples
    return lambda x, f: {"out": rotate(x, f, jax.numpy.stack).reshape(-1, p.head_dim)}
