"""SwiGLU and RMSNorm over an (m, n) activation, forward and backward, as a transformer layer runs them.

Math in fp32 whatever the storage dtype, one rounding at the end. A backward op times (X, dY) to dX,
the forward quantities it needs recomputed from X inside the timed region, as a fused backward kernel
does (the reference counted only the ops XLA attributed to the pullback: docs/ironwood.md). RMSNorm's
gamma is an fp32 input, not a constant a compiler could fold away; its gradient is not computed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.ops.common import BF16, Placed, f64, normal, register_compute, sigmoid64
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

EPS = 1e-6
GAMMA_BYTES = 4  # fp32 per column


@dataclass(frozen=True)
class LayerParams(Placed):
    """X (m, n), in bf16 unless the op declares a dtype."""

    m: int = param("dim")
    n: int = param("dim")
    dtype = "bfloat16"  # a class attribute, not a parameter: the ops that take one declare it


@dataclass(frozen=True)
class InferenceNormParams(LayerParams):
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float8_e4m3fn"))


@dataclass(frozen=True)
class SigmoidBwdParams(LayerParams):
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float32", "float16"))


def swiglu64(x: np.ndarray) -> np.ndarray:
    a, b = np.split(x, 2, axis=1)
    return a * sigmoid64(a) * b


def swiglu_grad64(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    a, b = np.split(x, 2, axis=1)
    s = sigmoid64(a)
    return np.concatenate([dy * b * s * (1 + a * (1 - s)), dy * a * s], axis=1)


def rmsnorm64(x: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS) * gamma


def rmsnorm_grad64(x: np.ndarray, gamma: np.ndarray, dy: np.ndarray) -> np.ndarray:
    r = 1.0 / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS)
    g = dy * gamma
    return r * g - x * r**3 * np.mean(g * x, axis=1, keepdims=True)


def jax_swiglu(x: Any) -> Any:
    a, b = jax.numpy.split(x.astype(jax.numpy.float32), 2, axis=1)
    return (jax.nn.silu(a) * b).astype(x.dtype)


def jax_sigmoid(x: Any) -> Any:
    return jax.nn.sigmoid(x.astype(jax.numpy.float32)).astype(x.dtype)


def jax_rmsnorm(x: Any, gamma: Any, out_dtype: Any) -> Any:
    x32 = x.astype(jax.numpy.float32)
    r = jax.lax.rsqrt(jax.numpy.mean(x32 * x32, axis=1, keepdims=True) + EPS)
    return (x32 * r * gamma).astype(out_dtype)


def _even_n(p: LayerParams) -> str | None:
    return None if p.n % 2 == 0 else f"n must be even to split X in two halves, got {p.n}"


@dataclass(frozen=True)
class Layer:
    doc: str
    flops: Callable[[LayerParams], float]
    bytes: Callable[[LayerParams], float]
    inputs: Callable[[LayerParams, np.random.Generator], Arrays]
    reference: Callable[[Arrays, LayerParams], np.ndarray]  # on the rows given, as float64
    jax: Callable[[LayerParams], Callable[..., Any]]
    typed: type[LayerParams] = LayerParams
    constraint: Callable[[LayerParams], str | None] = lambda p: None

    def spec(self, name: str) -> OpSpec[Any]:
        def reference(x: Arrays, p: LayerParams, rows: np.ndarray) -> Arrays:
            picked = {k: f64(v[rows]) if v.ndim == 2 else f64(v) for k, v in x.items()}
            return {"out": np.asarray(self.reference(picked, p)).astype(dtype(p.dtype).numpy)}

        return OpSpec(
            name=name,
            doc=self.doc,
            typed=self.typed,
            flops=self.flops,
            bytes=self.bytes,
            make_inputs=self.inputs,
            reference=reference,
            output_rows=lambda p: p.m,
            constraint=self.constraint,
        )


def _x(p: LayerParams, rng: np.random.Generator) -> np.ndarray:
    return normal(rng, (p.m, p.n), dtype(p.dtype))


def _gamma(p: LayerParams, rng: np.random.Generator) -> np.ndarray:
    return np.asarray(rng.uniform(0.5, 1.5, p.n), dtype=np.float32)


def _half(p: LayerParams) -> float:
    return p.m * p.n / 2


def _rms_bwd(p: LayerParams) -> Callable[..., Any]:
    def fn(x: Any, gamma: Any, dy: Any) -> dict[str, Any]:
        _, pullback = jax.vjp(lambda x: jax_rmsnorm(x, gamma, x.dtype), x)
        return {"out": pullback(dy)[0]}

    return fn


RMSNORM_FWD = Layer(
    doc="Y = X / rms(X) * gamma over each row (eps 1e-6), fp32 math",
    flops=lambda p: 4.0 * p.m * p.n + 3.0 * p.m,  # x^2, sum, two multiplies; 3 per row
    bytes=lambda p: 2.0 * p.m * p.n * dtype(p.dtype).nbytes + GAMMA_BYTES * p.n,
    inputs=lambda p, rng: {"x": _x(p, rng), "gamma": _gamma(p, rng)},
    reference=lambda x, p: rmsnorm64(x["x"], x["gamma"]),
    jax=lambda p: lambda x, gamma: {"out": jax_rmsnorm(x, gamma, dtype(p.dtype).numpy)},
)
LAYERS: dict[str, Layer] = {
    "swiglu_fwd": Layer(
        doc="Y = silu(A) * B, A and B the two halves of X's columns",
        flops=lambda p: 5 * _half(p),  # sigmoid (exp, add, divide), two multiplies per output
        bytes=lambda p: (p.m * p.n + _half(p)) * BF16.nbytes,  # read X, write Y (n/2)
        inputs=lambda p, rng: {"x": _x(p, rng)},
        reference=lambda x, p: swiglu64(x["x"]),
        jax=lambda p: lambda x: {"out": jax_swiglu(x)},
        constraint=_even_n,
    ),
    "swiglu_bwd": Layer(
        doc="dX of SwiGLU from X and dY (the VJP w.r.t. X)",
        flops=lambda p: 11 * _half(p),  # docs/ops.md counts the 11 per output pair
        bytes=lambda p: (2 * p.m * p.n + _half(p)) * BF16.nbytes,  # X, dY (n/2) in; dX out
        inputs=lambda p, rng: {"x": _x(p, rng), "dy": normal(rng, (p.m, p.n // 2), BF16)},
        reference=lambda x, p: swiglu_grad64(x["x"], x["dy"]),
        jax=lambda p: lambda x, dy: {"out": jax.vjp(jax_swiglu, x)[1](dy)[0]},
        constraint=_even_n,
    ),
    "rmsnorm_fwd": RMSNORM_FWD,
    "rmsnorm_bwd": Layer(
        doc="dX of RMSNorm from X and dY (the VJP w.r.t. X; gamma held constant)",
        flops=lambda p: 8.0 * p.m * p.n + 7.0 * p.m,  # docs/ops.md
        bytes=lambda p: 3.0 * p.m * p.n * BF16.nbytes + GAMMA_BYTES * p.n,
        inputs=lambda p, rng: {
            "x": _x(p, rng),
            "gamma": _gamma(p, rng),
            "dy": normal(rng, (p.m, p.n), BF16),
        },
        reference=lambda x, p: rmsnorm_grad64(x["x"], x["gamma"], x["dy"]),
        jax=_rms_bwd,
    ),
    "inference_rmsnorm": replace(RMSNORM_FWD, typed=InferenceNormParams),
    # the backward of inference_sigmoid (the jax-bench sample cop.yaml runs sigmoid with mode: bwd)
    "sigmoid_bwd": Layer(
        doc="dX of sigmoid from X and dY: dY * s * (1 - s), s = sigmoid(X) recomputed",
        flops=lambda p: 6.0 * p.m * p.n,  # sigmoid (exp, add, divide), 1 - s, two multiplies
        bytes=lambda p: 3.0 * p.m * p.n * dtype(p.dtype).nbytes,  # X, dY in; dX out
        inputs=lambda p, rng: {"x": _x(p, rng), "dy": normal(rng, (p.m, p.n), dtype(p.dtype))},
        reference=lambda x, p: x["dy"] * sigmoid64(x["x"]) * (1 - sigmoid64(x["x"])),
        jax=lambda p: lambda x, dy: {"out": jax.vjp(jax_sigmoid, x)[1](dy)[0]},
        typed=SigmoidBwdParams,
    ),
}

for _name, _layer in LAYERS.items():
    register_compute(_layer.spec(_name))
    array_implementation(_name, "jax", "jit")(_layer.jax)
