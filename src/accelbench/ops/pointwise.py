"""Elementwise ops of the Ironwood suite over (m, n) tensors: the training `add` and the inference ops.

One definition per math (`Pointwise`): inputs are upcast to fp32, the math runs there and the result is
rounded to the op's dtype, in JAX, in PyTorch and (in float64, rounded the same way) the reference."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.ops.common import Placed, f64, normal, register_compute, sigmoid64
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

NAMES = "xyz"


@dataclass(frozen=True)
class PointwiseParams(Placed):
    """The tensors' shape and dtype (each op below declares which shapes and dtypes it takes)."""

    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float32", "float16"))

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError


@dataclass(frozen=True)
class MatrixParams(PointwiseParams):
    m: int = param("dim")
    n: int = param("dim")

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.m, self.n)


@dataclass(frozen=True)
class InferenceParams(MatrixParams):
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float8_e4m3fn"))


@dataclass(frozen=True)
class FlatParams(PointwiseParams):
    """The jax-bench harness's simple_add: one flat array of `size` elements."""

    size: int = param("elements", 1 << 20)

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.size,)


@dataclass(frozen=True)
class Pointwise:
    doc: str
    inputs: int  # tensors read; one is written
    flops_per_element: int  # docs/ops.md counts them
    reference: Callable[..., np.ndarray]  # float64 math
    jax: Callable[..., Any]  # fp32 math on JAX arrays

    def spec(self, name: str, typed: type[PointwiseParams]) -> OpSpec[Any]:

        def inputs(p: PointwiseParams, rng: np.random.Generator) -> Arrays:
            return {name: normal(rng, p.shape, dtype(p.dtype)) for name in NAMES[: self.inputs]}

        def reference(x: Arrays, p: PointwiseParams, rows: np.ndarray) -> Arrays:
            out = self.reference(*(f64(x[name][rows]) for name in NAMES[: self.inputs]))
            return {"out": out.astype(dtype(p.dtype).numpy)}

        return OpSpec(
            name=name,
            doc=self.doc,
            typed=typed,
            flops=lambda p: float(self.flops_per_element * math.prod(p.shape)),
            bytes=lambda p: (self.inputs + 1.0) * math.prod(p.shape) * dtype(p.dtype).nbytes,
            peak_dtype=lambda p: dtype(p.dtype).peak_family,
            make_inputs=inputs,
            reference=reference,
            output_rows=lambda p: p.shape[0],
        )

    def jax_build(self, p: PointwiseParams) -> Callable[..., dict[str, Any]]:
        f32, out = jax.numpy.float32, dtype(p.dtype).numpy
        return lambda *xs: {"out": self.jax(*(x.astype(f32) for x in xs)).astype(out)}


ADD = Pointwise("Z = X + Y", 2, 1, lambda x, y: x + y, lambda x, y: x + y)
SILU_MUL = Pointwise(
    "Z = silu(X) * Y = X * sigmoid(X) * Y",
    2,
    5,  # sigmoid (exp, add, divide), two multiplies
    lambda x, y: x * sigmoid64(x) * y,
    lambda x, y: x * jax.nn.sigmoid(x) * y,
)
SIGMOID = Pointwise("Z = sigmoid(X)", 1, 3, sigmoid64, lambda x: jax.nn.sigmoid(x))
OPS: dict[str, tuple[Pointwise, type[PointwiseParams]]] = {
    "add": (ADD, MatrixParams),
    "inference_add": (ADD, InferenceParams),
    "inference_silu_mul": (SILU_MUL, InferenceParams),
    "inference_sigmoid": (SIGMOID, InferenceParams),
    "simple_add": (ADD, FlatParams),
}


for _name, (_op, _typed) in OPS.items():
    register_compute(_op.spec(_name, _typed))
    array_implementation(_name, "jax", "jit")(_op.jax_build)
