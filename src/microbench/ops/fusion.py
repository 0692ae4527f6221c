"""Fused-versus-unfused patterns (linear, conv, attention): FLOP and byte models of both versions.

Bytes are the fewest that must cross device memory: each version's ops read their inputs and write
their outputs once. The unfused version writes and re-reads every intermediate; the fused one doesn't.
"""

from __future__ import annotations

from microbench.dtypes import dtype
from microbench.registry import OpSpec, Param, Params, register

FUSION_DTYPES = ("float32", "bfloat16", "float16")
DTYPE = Param("dtype", "dtype", "float32", FUSION_DTYPES)
DEVICE = Param("device", "choice", "cuda", ("cuda", "cpu"))
SEED = Param("seed", "int", 0)
LINEAR_PATTERNS = ("linear_bias", "linear_bias_relu", "linear_bias_gelu")
CONV_PATTERNS = ("conv_relu", "conv_bn", "conv_bn_relu")
ATTENTION_PATTERNS = ("qk", "qk_softmax", "attention")


def _s(p: Params) -> float:
    return dtype(p["dtype"]).nbytes


# -- linear: X (m,k) @ W^T (k,n) + b (n) [-> activation] ---------------------------------------------

def linear_flops(p: Params) -> float:
    m, k, n = p["m"], p["k"], p["n"]
    return 2.0 * m * k * n + m * n + (m * n if p["pattern"] != "linear_bias" else 0)


def linear_bytes(p: Params, fused: bool) -> float:
    m, k, n, s = p["m"], p["k"], p["n"], _s(p)
    once = (m * k + n * k + n + m * n) * s               # inputs, bias and the output, once each
    if fused:
        return once
    extra = 2 * m * n * s                                 # the bias add re-reads and re-writes Y
    if p["pattern"] != "linear_bias":
        extra += 2 * m * n * s                            # and so does the activation
    return once + extra


# -- conv: X (b,c,h,w) * W (o,c,r,r), same padding, stride 1 [-> BN] [-> ReLU] ----------------------

def conv_out(p: Params) -> float:
    return p["batch"] * p["out_channels"] * p["size"] * p["size"]


def conv_flops(p: Params) -> float:
    macs = conv_out(p) * p["in_channels"] * p["kernel"] ** 2
    per_out = {"conv_relu": 1, "conv_bn": 2, "conv_bn_relu": 3}[p["pattern"]]  # relu: 1, bn: mul+add
    return 2.0 * macs + per_out * conv_out(p)


def conv_bytes(p: Params, fused: bool) -> float:
    s, out = _s(p), conv_out(p)
    x = p["batch"] * p["in_channels"] * p["size"] ** 2
    w = p["out_channels"] * p["in_channels"] * p["kernel"] ** 2
    has_bn = p["pattern"] != "conv_relu"
    if fused:  # BN folded into the conv's weights and bias; ReLU applied as the output is written
        return (x + w + out + (p["out_channels"] if has_bn else 0)) * s
    total = (x + w + out) * s
    if has_bn:
        total += (2 * out + 4 * p["out_channels"]) * s  # read y and the 4 BN vectors, write y
    if p["pattern"] != "conv_bn":
        total += 2 * out * s
    return total


# -- attention: Q, K, V (b,h,s,d) ----------------------------------------------------------------------

def attention_flops(p: Params) -> float:
    b, h, s, d = p["batch"], p["heads"], p["seq"], p["head_dim"]
    scores = 2.0 * b * h * s * s * d
    if p["pattern"] == "qk":
        return scores
    softmax = 5.0 * b * h * s * s  # scale, max, subtract, exp, normalise
    return scores + softmax + (2.0 * b * h * s * s * d if p["pattern"] == "attention" else 0)


def attention_bytes(p: Params, fused: bool) -> float:
    b, h, s, d, sz = p["batch"], p["heads"], p["seq"], p["head_dim"], _s(p)
    qkv = b * h * s * d * sz
    scores = b * h * s * s * sz
    if p["pattern"] == "qk":  # unfused: K^T materialised by a copy first
        return 2 * qkv + scores + (0 if fused else 2 * qkv)
    if p["pattern"] == "qk_softmax":
        return 2 * qkv + scores + (0 if fused else 4 * scores)  # scale and softmax passes
    if fused:  # flash-style: Q, K, V in, O out; the scores never reach memory
        return 4 * qkv
    return 4 * qkv + 7 * scores  # write S, scale (r+w), softmax (r+w), read P for P@V


def _spec(name: str, patterns: tuple[str, ...], dims: tuple[Param, ...], flops, nbytes) -> OpSpec:
    return register(OpSpec(
        name=name, suite="fusion", doc=f"unfused vs fused {', '.join(patterns)}",
        params=(Param("pattern", "choice", patterns[0], patterns), *dims, DTYPE, DEVICE, SEED),
        backends=("torch",), flops=flops, bytes=lambda p: nbytes(p, True),
        peak_dtype=lambda p: dtype(p["dtype"]).peak_family, extra={"unfused_bytes": lambda p: nbytes(p, False)}))


_spec("fusion_linear", LINEAR_PATTERNS, (Param("m", "dim", 512), Param("k", "dim", 1024), Param("n", "dim", 1024)),
      linear_flops, linear_bytes)
_spec("fusion_conv", CONV_PATTERNS, (Param("batch", "dim", 4), Param("in_channels", "dim", 128),
                                     Param("out_channels", "dim", 128), Param("size", "dim", 28),
                                     Param("kernel", "dim", 3)), conv_flops, conv_bytes)
_spec("fusion_attention", ATTENTION_PATTERNS, (Param("batch", "dim", 4), Param("heads", "dim", 8),
                                               Param("seq", "dim", 256), Param("head_dim", "dim", 64)),
      attention_flops, attention_bytes)
