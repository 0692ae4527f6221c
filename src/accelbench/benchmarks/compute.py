"""jax-bench's compute benchmarks, each over its typed fields (sigmoid: named by upstream's cop.yaml)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from accelbench.benchmarks.base import (
    Benchmark,
    UpstreamFields,
    compute_metrics,
    itemsize,
    ours_param,
    per_element,
    replicated,
    shared_with,
)
from accelbench.catalogue import param
from accelbench.ops.gemm import GeneralizedParams
from accelbench.ops.rope import RopeParams
from accelbench.ops.transformer import TransformerParams


@dataclass(frozen=True)
class GemmFields(UpstreamFields):
    m: int = param("dim", 1024, doc="rows of A and of the output")
    k: int = param("dim", 1024, doc="the contracted dimension: columns of A, rows of B")
    n: int = param("dim", 1024, doc="columns of B and of the output")
    in_dtype: str = param("jnp_dtype", "float8_e4m3fn", doc="the operands' dtype (its peak)")
    out_dtype: str = param("jnp_dtype", "bfloat16", doc="the result's dtype")
    seed: int = param("int", 0, doc="PRNG seed of the random operands")
    use_scaling_factors: bool = param(
        "bool", False, doc="scale the result by row and column factors (fp8 recipes)"
    )
    transpose_a: bool = param("bool", False, doc="A is stored K x M")
    transpose_b: bool = param("bool", False, doc="B is stored N x K")
    alpha: float = param("float", 1.0, doc="the product is multiplied by this")
    beta: float = param("float", 0.0, doc="times C added to the product (0: no C)")


def gemm_flops(f: GemmFields, n: int = 1) -> float:
    """2mnk, + 2mn for the scaling factors, + mn for alpha != 1, + mn for beta = 1 (2mn otherwise)."""
    mn = f.m * f.n
    flops = 2 * mn * f.k + (2 * mn if f.use_scaling_factors else 0) + (mn if f.alpha != 1.0 else 0)
    if f.beta != 0.0:
        flops += mn if f.beta == 1.0 else 2 * mn
    return float(flops)


def gemm_bytes(f: GemmFields, n: int = 1) -> float:
    """A and B in in_dtype, the output in out_dtype, and C (when beta != 0) counted at out_dtype."""
    ins, out = itemsize(f.in_dtype), itemsize(f.out_dtype)
    c = f.m * f.n * out if f.beta != 0.0 else 0
    return float((f.m * f.k + f.k * f.n) * ins + f.m * f.n * out + c)


Benchmark(
    "gemm_generalized",
    "GeneralizedGemmBenchmark",
    GemmFields,
    shared_with(GeneralizedParams),  # our op's parameters are upstream's fields, by name
    lambda f: (
        f"m_{f.m}_k_{f.k}_n_{f.n}_{f.in_dtype}_to_{f.out_dtype}"
        f"_ta_{f.transpose_a}_tb_{f.transpose_b}_alpha_{f.alpha}"
        + (f"_beta_{f.beta}" if f.beta != 0.0 else "")
        + ("_sf" if f.use_scaling_factors else "")
    ),
    gemm_flops,
    gemm_bytes,
    metrics=compute_metrics(),
    placement=replicated,
    peak_dtype=lambda f: str(f.in_dtype),
    notes="fp32 accumulation (upstream's product is in_dtype-typed); scaling works for fp8",
).register()


@dataclass(frozen=True)
class QuantizationFields(UpstreamFields):
    m: int = param("dim", 4096, doc="rows of the tensor quantized")
    n: int = param("dim", 4096, doc="columns of the tensor quantized")


Benchmark(
    "quantization",
    "QuantizationBenchmark",
    QuantizationFields,
    lambda f: {"m": f.m, "n": f.n, "qdtype": "float8_e4m3fn"},
    lambda f: f"m_{f.m}_n_{f.n}",
    lambda f, n: 4.0 * f.m * f.n,  # 4 per element
    lambda f, n: float(f.m * f.n * 2 + f.m * f.n + 4 * f.m),  # X, Q, fp32 scales
    placement=replicated,
    notes="fp32 per-row scales with saturation (upstream: bf16 scales, no clamp)",
).register()

MODE_DOC = "ours: bwd times the backward (cop.yaml)"


@dataclass(frozen=True)
class LayerFields(UpstreamFields):
    dim: int = param("dim", 4096, doc="hidden size: the normalised axis")
    batch: int = param("dim", 1024, doc="rows (tokens)")
    mode: str = ours_param("choice", "fwd", ("fwd", "bwd"), MODE_DOC)


def _batch_dim(f: LayerFields) -> int:
    return int(f.batch * f.dim)


def _layer(
    name: str,
    class_name: str,
    width: Callable[[LayerFields], int],
    models: tuple[Callable[[LayerFields, int], float], Callable[[LayerFields, int], float]],
) -> None:
    Benchmark(
        name,
        class_name,
        LayerFields,
        lambda f: {"m": f.batch, "n": width(f)},
        lambda f: f"batch_{f.batch}_dim_{f.dim}",
        *models,
        runs=lambda f: f"{name}_{f.mode}",  # our ops <name>_fwd and <name>_bwd
        placement=replicated,
        notes="`mode: bwd` is ours (upstream's cop.yaml asks for it): the backward pass",
    ).register()


# swiglu: 10 FLOPs per output element; X (batch, 2 dim) read and Y (batch, dim) written, bf16
_layer("swiglu", "SwiGLUBenchmark", lambda f: 2 * f.dim, per_element(10, 6, _batch_dim))
# rmsnorm: 5 FLOPs per element; X read, Y written (bf16) and the dim weights read
_layer(
    "rmsnorm",
    "RMSNormBenchmark",
    lambda f: f.dim,
    (lambda f, n: 5.0 * _batch_dim(f), lambda f, n: 4.0 * _batch_dim(f) + 2 * f.dim),
)


@dataclass(frozen=True)
class SigmoidFields(UpstreamFields):
    batch: int = param("dim", 1024, doc="rows (tokens)")
    dim: int = param("dim", 4096, doc="hidden size")
    mode: str = ours_param("choice", "fwd", ("fwd", "bwd"), MODE_DOC)


Benchmark(
    "sigmoid",
    "SigmoidBenchmark",
    SigmoidFields,
    lambda f: {"m": f.batch, "n": f.dim, "dtype": f.dtype},
    lambda f: f"batch_{f.batch}_dim_{f.dim}",
    lambda f, n: 4.0 * f.batch * f.dim,
    lambda f, n: 2.0 * f.batch * f.dim * itemsize(f.dtype),
    runs=lambda f: "sigmoid_bwd" if f.mode == "bwd" else "inference_sigmoid",
    placement=replicated,
    notes="not registered upstream (its cop.yaml names it); runs here in `dtype`",
).register()


@dataclass(frozen=True)
class RopeFields(UpstreamFields):
    seq_len: int = param("dim", 1024, doc="positions rotated")
    head_dim: int = param("dim", 128, doc="features per head (rotated in pairs)")
    batch: int = param("dim", 32, doc="sequences")
    heads: int = param("dim", 32, doc="attention heads")


def _rope_pairs(f: RopeFields) -> int:
    return int(f.batch * f.heads * f.seq_len * (f.head_dim // 2))


Benchmark(
    "rope",
    "RoPEBenchmark",
    RopeFields,
    shared_with(RopeParams, but=("dtype",)),  # fp32, whatever upstream's dtype says
    lambda f: f"b_{f.batch}_h_{f.heads}_s_{f.seq_len}_d_{f.head_dim}",
    # a complex multiply is 6 FLOPs; X read and Y written as complex64 (the table not counted)
    *per_element(6, 16, _rope_pairs),
    placement=replicated,
    notes="fp32 (re, im) pairs with distinct real and imaginary parts (upstream: equal ones)",
).register()


@dataclass(frozen=True)
class AddFields(UpstreamFields):
    size: int = param("elements", 1048576, doc="elements of each operand")


Benchmark(
    "simple_add",
    "AddBenchmark",
    AddFields,
    lambda f: {"size": f.size, "dtype": "bfloat16"},
    lambda f: f"size_{f.size}",
    *per_element(1, 6, attrgetter("size")),  # one add; x, y read and z written, bf16
    placement=replicated,
    notes="x and y differ (upstream draws both from one key)",
).register()


@dataclass(frozen=True)
class AttentionFields(UpstreamFields):
    mode: str = param(
        "choice", "fwd", ("fwd", "bwd"), doc="fwd: the forward pass; bwd: the gradients"
    )
    causal: bool = param("bool", True, doc="mask future positions")
    batch: int = param("dim", 1, doc="sequences")
    seq_len: int = param("dim", 8192, doc="query and key positions")
    num_q_heads: int = param("dim", 56, doc="query heads")
    num_kv_heads: int = param("dim", 56, doc="key and value heads (fewer: grouped queries)")
    head_dim: int = param("dim", 128, doc="features per head")


def attention_flops(f: AttentionFields, n: int = 1) -> float:
    """(4 S^2 - 2 S^2 causal) Hq D, twice for `bwd`; no batch factor; an int, as upstream's."""
    s = f.seq_len
    flops = (4 * s * s - (2 * s * s if f.causal else 0)) * f.num_q_heads * f.head_dim
    return flops * (2 if f.mode == "bwd" else 1)


def attention_bytes(f: AttentionFields, n: int = 1) -> float:
    """Q, K, V and the output at 2 bytes each (fwd); each twice plus dOut for bwd."""
    q = f.num_q_heads * f.seq_len * f.head_dim * 2
    kv = f.num_kv_heads * f.seq_len * f.head_dim * 2
    per_batch = 2 * q + 2 * kv if f.mode == "fwd" else 4 * q + 4 * kv
    return float(f.batch * per_batch)


def _attention(f: AttentionFields) -> dict[str, Any]:
    return {
        "batch_size": f.batch,
        "q_seq_len": f.seq_len,
        "kv_seq_len": f.seq_len,
        "q_heads": f.num_q_heads,
        "kv_heads": f.num_kv_heads,
        "qk_head_dim": f.head_dim,
        "v_head_dim": f.head_dim,
        "mode": f.mode,
        "causal": f.causal,
        "dtype": f.dtype,
    }


Benchmark(
    "attention_flashed",
    "AttentionBenchmark",
    AttentionFields,
    _attention,
    lambda f: f"b_{f.batch}_s_{f.seq_len}_hq_{f.num_q_heads}_hkv_{f.num_kv_heads}_d_{f.head_dim}",
    attention_flops,
    attention_bytes,
    metrics=compute_metrics(),
    runs="tokamax_splash_attention",
    implementation="jit:xla",  # jax.nn.dot_product_attention's default
    notes="attends over the sequence (upstream's layout attends over heads); one device",
).register()


@dataclass(frozen=True)
class MoeFields(UpstreamFields):
    model_dim: int = param("dim", 7168, doc="the model's hidden size")
    mslen: int = param("dim", 1024, doc="tokens in the layer's batch")
    tp: int = ours_param("int", 1, doc="ours: tensor parallel over tp devices")
    etp: int = ours_param("int", 1, doc="ours: expert tensor parallel (the layer has no experts)")
    cp: int = ours_param("int", 1, doc="ours: context parallel over cp devices")
    ep: int = ours_param("int", 1, doc="ours: expert parallel (the layer has no experts)")


def _moe_place(f: MoeFields, devices: Callable[[], int]) -> dict[str, Any]:
    """Upstream splits the tokens over every device (the weights' first rows too): context parallel."""
    n = devices()
    return {"cp": n} if n > 1 and f.mslen % n == 0 and f.cp == 1 else {}


Benchmark(
    "transformer_layer_moe",
    "TransformerLayerMoE",
    MoeFields,
    shared_with(TransformerParams),
    lambda f: f"dim_{f.model_dim}_len_{f.mslen}",
    lambda f, n: 24.0 * f.mslen * f.model_dim**2,
    lambda f, n: 10.0 * f.mslen * f.model_dim * 2 + 10.0 * f.model_dim**2 * 2,
    metrics=compute_metrics(total_flops=False),
    placement=_moe_place,
    notes="tp/cp shard the layer (ours); the four matmuls are 20 mslen D^2 (model_flops)",
).register()
