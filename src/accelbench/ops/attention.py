"""Attention (the reference's tokamax_splash_attention): softmax(Q Kᵀ / √d) V with grouped KV heads,
forward, or forward and backward, causal or not.

Tensors are (batch, seq, heads, dim), so every output is a free (batch·seq, heads·dim) view whose rows
the check samples: the float64 reference computes only the query rows it is asked for. Unlike the
reference, inputs are `dtype`, the scale is the usual 1/√d, and `bwd` times the whole step from
(Q, K, V, dO) to (dQ, dK, dV) (docs/ironwood.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.errors import unsupported
from accelbench.ops.common import Placed, f64, normal, register_compute
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

FULL_BWD_CHECK = 1 << 22  # query x key pairs up to which dK and dV are checked too (dQ always)


@dataclass(frozen=True)
class AttentionParams(Placed):
    batch_size: int = param("dim")
    q_seq_len: int = param("dim")
    kv_seq_len: int = param("dim")
    q_heads: int = param("dim")
    kv_heads: int = param("dim")
    qk_head_dim: int = param("dim")
    v_head_dim: int = param("dim")
    mode: str = param("choice", "fwd", ("fwd", "bwd", "combined"), "combined = bwd")
    causal: bool = param("bool", True)
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float16", "float32"))
    num_samples: int = param("int", 256, doc="the reference's autotune samples (TPU only)")
    tune_pallas_only: bool = param("bool", True, doc="accepted for the reference's configs")


def pairs(p: AttentionParams) -> float:
    """(query, key) pairs attended per head: all Sq·Skv, or under the causal mask (query i sees keys
    0..i; Sq = Skv) S(S+1)/2, a little over half."""
    sq, skv = p.q_seq_len, p.kv_seq_len
    return sq * (sq + 1) / 2 if p.causal else float(sq * skv)


def flops(p: AttentionParams) -> float:
    """Q Kᵀ and P V: 2 (d_qk + d_v) per attended pair and query head; bwd: the forward (1x) plus
    recomputing S, then dV, dP, dQ and dK (2.5x): 3.5x the forward."""
    forward = 2.0 * p.batch_size * p.q_heads * pairs(p) * (p.qk_head_dim + p.v_head_dim)
    return forward * (1.0 if p.mode == "fwd" else 3.5)


def shapes(p: AttentionParams) -> dict[str, tuple[int, int, int, int]]:
    """Q, K, V and dO (O's shape too)."""
    b, sq, skv = p.batch_size, p.q_seq_len, p.kv_seq_len
    return {
        "q": (b, sq, p.q_heads, p.qk_head_dim),
        "k": (b, skv, p.kv_heads, p.qk_head_dim),
        "v": (b, skv, p.kv_heads, p.v_head_dim),
        "do": (b, sq, p.q_heads, p.v_head_dim),
    }


def nbytes(p: AttentionParams) -> float:
    """fwd reads Q, K, V and writes O; bwd reads Q, K, V, dO and writes dQ, dK, dV."""
    n, s = {k: math.prod(v) for k, v in shapes(p).items()}, dtype(p.dtype).nbytes
    qkv = n["q"] + n["k"] + n["v"]
    return s * ((qkv if p.mode == "fwd" else 2 * qkv) + n["do"])


def constraint(p: AttentionParams) -> str | None:
    if p.q_heads % p.kv_heads:
        return f"q_heads ({p.q_heads}) must be a multiple of kv_heads ({p.kv_heads})"
    if p.causal and p.q_seq_len != p.kv_seq_len:
        return (
            "causal attention needs q_seq_len == kv_seq_len (the reference's configs all have it)"
        )
    return None


def make_inputs(p: AttentionParams, rng: np.random.Generator) -> Arrays:
    names = ("q", "k", "v") if p.mode == "fwd" else ("q", "k", "v", "do")
    return {name: normal(rng, shapes(p)[name], dtype(p.dtype)) for name in names}


def _rows_of_batch(
    x: Arrays, p: AttentionParams, b: int, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For query rows s of batch b: probabilities (R, Hkv, G, Skv) and that batch's K, V (Skv, Hkv, d),
    query heads grouped over their KV head, so no K or V is ever copied per head or per row."""
    hkv, group = p.kv_heads, p.q_heads // p.kv_heads
    q = f64(x["q"][b, s]).reshape(len(s), hkv, group, -1)
    k, v = f64(x["k"][b]), f64(x["v"][b])
    logits = np.einsum("rhgd,jhd->rhgj", q, k) / math.sqrt(p.qk_head_dim)
    if p.causal:
        masked = np.arange(p.kv_seq_len)[None, :] > s[:, None]  # (R, Skv)
        logits = np.where(masked[:, None, None, :], -np.inf, logits)
    probs = np.exp(logits - logits.max(axis=3, keepdims=True))
    return probs / probs.sum(axis=3, keepdims=True), q, k, v


def reference(x: Arrays, p: AttentionParams, rows: np.ndarray) -> Arrays:
    parts: list[np.ndarray] = []  # the output (fwd) or dQ (bwd) of each batch's rows
    batches, positions = np.divmod(rows, p.q_seq_len)
    full: list[tuple[np.ndarray, np.ndarray]] = []
    for b in np.unique(batches):  # rows come sorted, so concatenating keeps their order
        s = positions[batches == b]
        probs, q, k, v = _rows_of_batch(x, p, int(b), s)
        if p.mode == "fwd":
            parts.append(np.einsum("rhgj,jhd->rhgd", probs, v).reshape(len(s), -1))
            continue
        do = f64(x["do"][b, s]).reshape(probs.shape[:3] + (-1,))
        dp = np.einsum("rhgd,jhd->rhgj", do, v)
        ds = probs * (dp - np.sum(probs * dp, axis=3, keepdims=True))
        dq = np.einsum("rhgj,jhd->rhgd", ds, k) / math.sqrt(p.qk_head_dim)
        parts.append(dq.reshape(len(s), -1))
        full.append((probs, ds))
    out = {"out" if p.mode == "fwd" else "dq": np.concatenate(parts)}
    whole = len(rows) == p.batch_size * p.q_seq_len
    if full and whole and p.q_seq_len == p.kv_seq_len and pairs(p) * p.batch_size <= FULL_BWD_CHECK:
        out.update(_key_gradients(x, p, full))
    return out


def _key_gradients(
    x: Arrays, p: AttentionParams, per_batch: list[tuple[np.ndarray, np.ndarray]]
) -> Arrays:
    """dK and dV from every query's probabilities (small problems only: the rows are all queries)."""
    dk, dv = [], []
    for b, (probs, ds) in enumerate(per_batch):
        do = f64(x["do"][b]).reshape(probs.shape[:3] + (-1,))
        q = f64(x["q"][b]).reshape(probs.shape[:3] + (-1,))
        dv.append(np.einsum("ihgj,ihgd->jhd", probs, do).reshape(p.kv_seq_len, -1))
        dk.append(np.einsum("ihgj,ihgd->jhd", ds, q).reshape(p.kv_seq_len, -1))
    scale = 1 / math.sqrt(p.qk_head_dim)
    return {"dk": np.concatenate(dk) * scale, "dv": np.concatenate(dv)}


register_compute(
    OpSpec(
        name="tokamax_splash_attention",
        doc="softmax(Q Kᵀ/√d) V with grouped KV heads; bwd: (dQ, dK, dV) from (Q, K, V, dO)",
        typed=AttentionParams,
        flops=flops,
        bytes=nbytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        make_inputs=make_inputs,
        reference=reference,
        output_rows=lambda p: p.batch_size * p.q_seq_len,
        constraint=constraint,
    )
)


def jax_vjp(f: Callable[..., Any], primals: tuple[Any, ...], cotangent: Any) -> tuple[Any, ...]:
    return jax.vjp(f, *primals)[1](cotangent)


def outputs(
    attend: Callable[..., Any], p: AttentionParams, vjp: Callable[..., tuple[Any, ...]] = jax_vjp
) -> Callable[..., dict[str, Any]]:
    """The op around an attention function of (B, S, H, D) arrays, in either framework (`vjp`, its
    pullback): O, or (dQ, dK, dV) from dO."""
    rows_q, rows_kv = p.batch_size * p.q_seq_len, p.batch_size * p.kv_seq_len
    if p.mode == "fwd":
        return lambda q, k, v: {"out": attend(q, k, v).reshape(rows_q, -1)}

    def step(q: Any, k: Any, v: Any, do: Any) -> dict[str, Any]:
        dq, dk, dv = vjp(attend, (q, k, v), do)
        return {
            "dq": dq.reshape(rows_q, -1),
            "dk": dk.reshape(rows_kv, -1),
            "dv": dv.reshape(rows_kv, -1),
        }

    return step


def jax_builder(kernel: str) -> Callable[[AttentionParams], Callable[..., dict[str, Any]]]:
    """jax.nn.dot_product_attention with `kernel`: cuDNN's fused kernel (GPUs) or XLA's composition."""

    def build(p: AttentionParams) -> Callable[..., dict[str, Any]]:
        if kernel == "cudnn" and jax.default_backend() != "gpu":
            raise unsupported("cuDNN attention needs an NVIDIA GPU")
        scale = 1.0 / math.sqrt(p.qk_head_dim)

        def attend(q: Any, k: Any, v: Any) -> Any:
            return jax.nn.dot_product_attention(
                q, k, v, scale=scale, is_causal=p.causal, implementation=kernel
            )

        return outputs(attend, p)

    return build


for _kernel in ("xla", "cudnn"):  # xla first: the default where no name is asked for
    array_implementation("tokamax_splash_attention", "jax", f"jit:{_kernel}")(jax_builder(_kernel))

SPLASH_BLOCK = 128
INTERPRET_OFF_TPU = False  # tests run the splash kernel in Pallas's interpreter on the CPU


@array_implementation("tokamax_splash_attention", "jax", "pallas:splash")
def jax_splash(p: AttentionParams) -> Callable[..., dict[str, Any]]:
    """JAX's Pallas splash-attention kernel (TPU only): the MQA kernel over each KV head's query group,
    vmapped over batch and KV heads, as the reference ran it, at default block sizes; Q pre-scaled by
    1/√d, which the kernel does not apply (docs/ironwood.md)."""
    on_tpu = jax.default_backend() == "tpu"
    if not (on_tpu or INTERPRET_OFF_TPU):
        raise unsupported("the Pallas splash-attention kernel runs on TPUs only")
    sizes = {"q_seq_len": p.q_seq_len, "kv_seq_len": p.kv_seq_len}
    sizes.update(qk_head_dim=p.qk_head_dim, v_head_dim=p.v_head_dim)
    for name, size in sizes.items():
        if size % SPLASH_BLOCK:
            raise unsupported(f"splash attention needs {name} a multiple of {SPLASH_BLOCK}")
    from jax.experimental.pallas.ops.tpu import splash_attention as splash

    b, sq, skv = p.batch_size, p.q_seq_len, p.kv_seq_len
    hkv, group = p.kv_heads, p.q_heads // p.kv_heads
    mask = splash.CausalMask((sq, skv)) if p.causal else splash.FullMask((sq, skv))
    kernel = splash.make_splash_mqa_single_device(
        splash.MultiHeadMask([mask] * group), interpret=not on_tpu
    )
    scale = 1.0 / math.sqrt(p.qk_head_dim)

    def attend(q: Any, k: Any, v: Any) -> Any:
        grouped = (q * scale).reshape(b, sq, hkv, group, -1).transpose(0, 2, 3, 1, 4)
        out = jax.vmap(jax.vmap(kernel))(grouped, k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3))
        return out.transpose(0, 3, 1, 2, 4).reshape(b, sq, p.q_heads, -1)

    return outputs(attend, p)
