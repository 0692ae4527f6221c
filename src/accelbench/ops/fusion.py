"""Fused-versus-unfused patterns (linear, conv, attention): FLOP and byte models of both versions.
Bytes are the fewest that must cross device memory: the unfused version writes and re-reads every
intermediate; the fused one doesn't."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from accelbench.catalogue import OpParams, OpSpec, param, register
from accelbench.core.column import doc
from accelbench.platform.dtypes import dtype

LINEAR_PATTERNS = ("linear_bias", "linear_bias_relu", "linear_bias_gelu")
CONV_PATTERNS = ("conv_relu", "conv_bn", "conv_bn_relu")
ATTENTION_PATTERNS = ("qk", "qk_softmax", "attention")


@dataclass(frozen=True)
class FusionParams(OpParams):
    """What every fusion pattern takes after its pattern and sizes."""

    trailing = True
    dtype: str = param("dtype", "float32", ("float32", "bfloat16", "float16"))
    device: str = param("choice", "cuda", ("cuda", "cpu"))
    seed: int = param("int", 0)
    pattern = ""  # each family declares its patterns


@dataclass(frozen=True)
class LinearFusionParams(FusionParams):
    pattern: str = param("choice", LINEAR_PATTERNS[0], LINEAR_PATTERNS)
    m: int = param("dim", 512)
    k: int = param("dim", 1024)
    n: int = param("dim", 1024)


@dataclass(frozen=True)
class ConvFusionParams(FusionParams):
    pattern: str = param("choice", CONV_PATTERNS[0], CONV_PATTERNS)
    batch: int = param("dim", 4)
    in_channels: int = param("dim", 128)
    out_channels: int = param("dim", 128)
    size: int = param("dim", 28)
    kernel: int = param("dim", 3)


@dataclass(frozen=True)
class AttentionFusionParams(FusionParams):
    pattern: str = param("choice", ATTENTION_PATTERNS[0], ATTENTION_PATTERNS)
    batch: int = param("dim", 4)
    heads: int = param("dim", 8)
    seq: int = param("dim", 256)
    head_dim: int = param("dim", 64)


# -- linear: X (m,k) @ W^T (k,n) + b (n) [-> activation] ---------------------------------------------


# elementwise passes over Y after the matmul: the bias add, and the activation where there is one
LINEAR_PASSES = {"linear_bias": 1, "linear_bias_relu": 2, "linear_bias_gelu": 2}


def linear_flops(p: LinearFusionParams) -> float:
    return 2.0 * p.m * p.k * p.n + LINEAR_PASSES[p.pattern] * p.m * p.n


def linear_bytes(p: LinearFusionParams, fused: bool) -> float:
    m, k, n, s = p.m, p.k, p.n, dtype(p.dtype).nbytes
    once = (m * k + n * k + n + m * n) * s  # inputs, bias and the output, once each
    return once if fused else once + LINEAR_PASSES[p.pattern] * 2 * m * n * s  # each pass: Y r+w


# -- conv: X (b,c,h,w) * W (o,c,r,r), same padding, stride 1 [-> BN] [-> ReLU] ----------------------


def conv_out(p: ConvFusionParams) -> float:
    return p.batch * p.out_channels * p.size * p.size


# the stages after the conv: (batch norm, ReLU)
CONV_STAGES = {"conv_relu": (False, True), "conv_bn": (True, False), "conv_bn_relu": (True, True)}


def conv_flops(p: ConvFusionParams) -> float:
    macs = conv_out(p) * p.in_channels * p.kernel**2
    has_bn, has_relu = CONV_STAGES[p.pattern]
    return 2.0 * macs + (2 * has_bn + has_relu) * conv_out(p)  # bn: mul+add per output, relu: 1


def conv_bytes(p: ConvFusionParams, fused: bool) -> float:
    s, out = dtype(p.dtype).nbytes, conv_out(p)
    x = p.batch * p.in_channels * p.size**2
    w = p.out_channels * p.in_channels * p.kernel**2
    has_bn, has_relu = CONV_STAGES[p.pattern]
    if fused:  # BN folded into the conv's weights and bias; ReLU applied as the output is written
        return (x + w + out + (p.out_channels if has_bn else 0)) * s
    total = (x + w + out) * s
    if has_bn:
        total += (2 * out + 4 * p.out_channels) * s  # read y and the 4 BN vectors, write y
    if has_relu:
        total += 2 * out * s
    return total


# -- attention: Q, K, V (b,h,s,d) ----------------------------------------------------------------------

# per pattern: FLOPs beyond the QK^T scores, and bytes as (fused, unfused) from |Q| (= |K| = |V| = |O|)
# and |S|. Unfused qk materialises K^T with a copy; unfused softmax passes re-read and re-write S; unfused
# attention writes S, scales it (r+w), softmaxes it (r+w) and reads P for P@V. Flash keeps S on chip.
ATTENTION_MODEL = {
    "qk": (lambda scores, pv: 0.0, lambda qkv, s: (2 * qkv + s, 4 * qkv + s)),
    "qk_softmax": (lambda scores, pv: scores, lambda qkv, s: (2 * qkv + s, 2 * qkv + 5 * s)),
    "attention": (lambda scores, pv: scores + pv, lambda qkv, s: (4 * qkv, 4 * qkv + 7 * s)),
}


def attention_flops(p: AttentionFusionParams) -> float:
    b, h, s, d = p.batch, p.heads, p.seq, p.head_dim
    softmax = 5.0 * b * h * s * s  # scale, max, subtract, exp, normalise
    return 2.0 * b * h * s * s * d + ATTENTION_MODEL[p.pattern][0](softmax, 2.0 * b * h * s * s * d)


def attention_bytes(p: AttentionFusionParams, fused: bool) -> float:
    b, h, s, d, sz = p.batch, p.heads, p.seq, p.head_dim, dtype(p.dtype).nbytes
    fused_bytes, unfused_bytes = ATTENTION_MODEL[p.pattern][1](
        b * h * s * d * sz, b * h * s * s * sz
    )
    return fused_bytes if fused else unfused_bytes


@dataclass
class FusionExtras:
    """The fusion seed's result fields, plus kernel counts that show whether fusion happened."""

    fusion_pattern: str
    input_shape: str
    unfused_latency_s: float
    fused_latency_s: float
    unfused_gflop_per_s: float
    fused_gflop_per_s: float
    unfused_bytes: int
    fused_bytes: int
    speedup_ratio: float
    memory_reduction_pct: float = field(metadata=doc("modelled bytes the fused version saves"))
    unfused_kernels_per_iter: float
    fused_kernels_per_iter: float
    fusion_verdict: str
    fused_impl: str
    unfused_peak_memory_bytes: int | None
    fused_peak_memory_bytes: int | None

    @property
    def speedup(self) -> float:
        return self.speedup_ratio

    LABEL_ORDER: ClassVar[tuple[str, ...]] = ("pattern",)


# op -> the unfused pattern's bytes: each intermediate written by one kernel and read by the next
UNFUSED_BYTES: dict[str, Callable[[Any], float]] = {}


def unfused_bytes(op: str, p: FusionParams) -> float:
    return UNFUSED_BYTES[op](p)


F = TypeVar("F", bound=FusionParams)


def _spec(
    name: str, typed: type[F], flops: Callable[[F], float], nbytes: Callable[[F, bool], float]
) -> OpSpec[F]:
    UNFUSED_BYTES[name] = lambda p: nbytes(p, False)
    return register(
        OpSpec(
            name=name,
            suite="fusion",
            doc=f"unfused vs fused {', '.join(typed.declared_param('pattern').choices)}",
            typed=typed,
            flops=flops,
            bytes=lambda p: nbytes(p, True),
            peak_dtype=lambda p: dtype(p.dtype).peak_family,
            row_extras=FusionExtras,
        )
    )


_spec("fusion_linear", LinearFusionParams, linear_flops, linear_bytes)
_spec("fusion_conv", ConvFusionParams, conv_flops, conv_bytes)
_spec("fusion_attention", AttentionFusionParams, attention_flops, attention_bytes)
