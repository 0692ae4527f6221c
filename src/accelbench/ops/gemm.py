"""The Ironwood GEMM family: math, FLOP/byte models (derived in docs/ops.md), inputs, float64
references and the JAX versions; the PyTorch twins share all but the implementations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, Traits, array_implementation, param
from accelbench.errors import unsupported
from accelbench.ops.common import (
    BF16,
    FP8,
    Matmul,
    f64,
    fp8_floor,
    jnp_dtype,
    matmul_f32,
    normal,
    register_compute,
)
from accelbench.platform.dtypes import DType, dtype
from accelbench.platform.frameworks import jax

OUT_DTYPES = ("bfloat16", "float32", "float16")
GEMM_DTYPES = (*OUT_DTYPES, "float8", "float8_e4m3fn", "float8_e5m2", "float4", "float4_e2m1fn")
Fn = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class GemmParams(Matmul):
    """A GEMM of fp8 inputs to a bf16 output (the ops below override either), B (k, n) or (n, k)."""

    layout: str = param("choice", "kn", ("kn", "nk"), "B stored as (K,N) or (N,K)")

    @property
    def input_dtype(self) -> DType:
        return FP8

    @property
    def output_dtype(self) -> DType:
        return BF16


@dataclass(frozen=True)
class DtypeGemmParams(GemmParams):
    dtype: str = param("dtype", "bfloat16", GEMM_DTYPES, "input dtype of A and B")

    @property
    def input_dtype(self) -> DType:
        return dtype(self.dtype)


@dataclass(frozen=True)
class InOutGemmParams(GemmParams):
    in_dtype: str = param("dtype", "float8", GEMM_DTYPES, aliases=("in_dtype_str",))
    out_dtype: str = param("dtype", "bfloat16", OUT_DTYPES, aliases=("out_dtype_str",))

    @property
    def input_dtype(self) -> DType:
        return dtype(self.in_dtype)

    @property
    def output_dtype(self) -> DType:
        return dtype(self.out_dtype)


def b_shape(p: GemmParams) -> tuple[int, int]:
    return (p.k, p.n) if p.layout == "kn" else (p.n, p.k)


def b_as_kn(b: Any, p: GemmParams) -> Any:
    """B as a (K,N) operand, a numpy array or a tensor: for (N,K) storage a free, column-major view."""
    return b if p.layout == "kn" else b.T


def gemm_flops(p: Matmul) -> float:
    return 2.0 * p.m * p.n * p.k


def gemm_bytes(p: Matmul, in_dt: DType, out_dt: DType) -> float:
    return (p.m * p.k + p.k * p.n) * in_dt.nbytes + p.m * p.n * out_dt.nbytes


def scale_bytes(p: Matmul) -> float:
    return float(4 * (p.m + p.n))  # fp32 S_A (M,1) and S_B (1,N)


def plain_inputs(p: GemmParams, rng: np.random.Generator) -> Arrays:
    return {
        "a": normal(rng, (p.m, p.k), p.input_dtype),
        "b": normal(rng, b_shape(p), p.input_dtype),
    }


def plain_reference(x: Arrays, p: GemmParams, rows: np.ndarray) -> Arrays:
    return {"out": f64(x["a"][rows]) @ f64(b_as_kn(x["b"], p))}


def scaled_inputs(p: GemmParams, rng: np.random.Generator) -> Arrays:
    x = plain_inputs(p, rng)
    x["scale_a"] = rng.uniform(0.5, 1.5, (p.m, 1)).astype(np.float32)
    x["scale_b"] = rng.uniform(0.5, 1.5, (1, p.n)).astype(np.float32)
    return x


def scaled_reference(x: Arrays, p: GemmParams, rows: np.ndarray) -> Arrays:
    acc = plain_reference(x, p, rows)["out"]
    return {"out": acc * f64(x["scale_a"][rows]) * f64(x["scale_b"])}


def accum_inputs(p: GemmParams, rng: np.random.Generator) -> Arrays:
    x = scaled_inputs(p, rng)
    x["acc"] = rng.standard_normal((p.m, p.n), dtype=np.float32)
    return x


def plain_gemm(name: str, doc: str, typed: type[GemmParams]) -> OpSpec[Any]:
    """A GEMM of the op's input and output dtypes (its parameter class says which), registered."""
    return register_compute(
        OpSpec(
            name=name,
            doc=doc,
            typed=typed,
            flops=gemm_flops,
            bytes=lambda p: gemm_bytes(p, p.input_dtype, p.output_dtype),
            peak_dtype=lambda p: p.input_dtype.peak_family,
            make_inputs=plain_inputs,
            reference=plain_reference,
            output_rows=lambda p: p.m,
            tolerance_floor=lambda p: fp8_floor(p.input_dtype),
        )
    )


DTYPE_GEMM = plain_gemm(
    "gemm_multiple_run",
    "O_bf16 = A x B with a configurable input dtype, fp32 accumulation",
    DtypeGemmParams,
)
plain_gemm("gemm_simple", "O_bf16 = A_fp8 x B_fp8, fp32 accumulation", GemmParams)
plain_gemm(
    "gemm_simple_with_dtype",
    "O = A x B with input and output dtypes as parameters, fp32 accumulation",
    InOutGemmParams,
)

SCALED_GEMM = register_compute(
    OpSpec(
        name="gemm",
        doc="O_bf16 = (A_fp8 x B_fp8) * (S_A S_B^T): fp8 GEMM, fp32 accumulation, outer-product scaling",
        typed=GemmParams,
        flops=lambda p: gemm_flops(p) + 2.0 * p.m * p.n,
        bytes=lambda p: gemm_bytes(p, FP8, BF16) + scale_bytes(p),
        peak_dtype=lambda p: "fp8",
        make_inputs=scaled_inputs,
        reference=scaled_reference,
        output_rows=lambda p: p.m,
        tolerance_floor=lambda p: fp8_floor(FP8),
    )
)
register_compute(  # the scaled GEMM added to an fp32 buffer
    replace(
        SCALED_GEMM,
        name="gemm_accum",
        doc="O_fp32 += (A_fp8 x B_fp8) * (S_A S_B^T), the fp32 buffer updated in place",
        flops=lambda p: gemm_flops(p) + 3.0 * p.m * p.n,
        bytes=lambda p: (p.m * p.k + p.k * p.n) * FP8.nbytes + scale_bytes(p) + 2 * 4.0 * p.m * p.n,
        make_inputs=accum_inputs,
        reference=lambda x, p, rows: {
            "out": f64(x["acc"][rows]) + scaled_reference(x, p, rows)["out"]
        },
        traits=Traits(donated_input="acc"),
    )
)


# inputs whose GEMMs accumulate in fp32 on every backend (MXU, cuBLAS, XLA:CPU), so asking for the
# 16-bit result rounds once in the GEMM's epilogue: the same numbers as an fp32 result cast after it,
# without the separate convert kernel XLA:GPU launches for that cast (about 100 µs at bf16 8192³)
DIRECT_OUT_INPUTS = ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2")
DIRECT_OUT_RESULTS = ("bfloat16", "float16")


def matmul_to(a: Any, b: Any, layout: str, out: Any) -> Any:
    names = {a.dtype.name, b.dtype.name}
    if names <= set(DIRECT_OUT_INPUTS) and jax.numpy.dtype(out).name in DIRECT_OUT_RESULTS:
        dims = (((1,), (0,)), ((), ())) if layout == "kn" else (((1,), (1,)), ((), ()))
        return jax.lax.dot_general(a, b, dims, preferred_element_type=out)
    return matmul_f32(a, b, layout).astype(out)


@array_implementation(("gemm_multiple_run", "gemm_simple", "gemm_simple_with_dtype"), "jax", "jit")
def jax_gemm(p: GemmParams) -> Fn:
    odt = jnp_dtype(p.output_dtype.name)
    return lambda a, b: {"out": matmul_to(a, b, p.layout, odt)}


@array_implementation("gemm", "jax", "jit")
def jax_scaled_gemm(p: GemmParams) -> Fn:
    return lambda a, b, sa, sb: {
        "out": (matmul_f32(a, b, p.layout) * sa * sb).astype(jax.numpy.bfloat16)
    }


@array_implementation("gemm_accum", "jax", "jit")
def jax_gemm_accum(p: GemmParams) -> Fn:
    return lambda a, b, sa, sb, acc: {"out": acc + matmul_f32(a, b, p.layout) * sa * sb}


# gemm_generalized, the jax-bench harness's one GEMM: P = op(A) op(B) accumulated in fp32, then
# alpha P, + beta C, then (s0 s1^T) on the whole, rounded once to out_dtype. Upstream typed the product
# as in_dtype (an fp8 product for fp8 inputs) and kept C in in_dtype; here the accumulator is fp32, as
# every GEMM of this project, and C is out_dtype (what a beta-accumulated output is): docs/jax_bench.md.

NO_GEMM = {"float4_e2m1fn": "an fp4 GEMM (block-scaled e2m1) is not implemented here"}
# NO_GEMM's dtypes are accepted so a sweep over them plans: their cases are unsupported rows here
FP8_KINDS = ("float8_e4m3fn", "float8_e5m2")
GENERALIZED_DTYPES = (*FP8_KINDS, "bfloat16", "float16", "float32", "int8", *NO_GEMM)


@dataclass(frozen=True)
class GeneralizedParams(Matmul):
    m: int = param("dim", 1024, doc="rows of A / output")
    k: int = param("dim", 1024, doc="contraction")
    n: int = param("dim", 1024, doc="columns of output")
    in_dtype: str = param("dtype", "float8_e4m3fn", GENERALIZED_DTYPES)
    out_dtype: str = param("dtype", "bfloat16", ("bfloat16", "float16", "float32"))
    use_scaling_factors: bool = param("bool", False, doc="row and column fp32 scales")
    transpose_a: bool = param("bool", False, doc="A stored (k, m)")
    transpose_b: bool = param("bool", False, doc="B stored (n, k)")
    alpha: float = param("float", 1.0)
    beta: float = param("float", 0.0, doc="C (m, n) in out_dtype is read when beta is not 0")

    @property
    def plain(self) -> bool:
        return self.alpha == 1 and self.beta == 0 and not self.use_scaling_factors


def epilogue(
    p: GeneralizedParams, out: Any, rest: tuple[Any, ...], f32: Callable[[Any], Any]
) -> Any:
    """alpha, + beta C, then the scales s0 s1^T on the fp32 product, in either framework (`f32`: its
    cast to fp32); `rest` holds C where beta is not 0, then s0 and s1."""
    args = list(rest)
    if p.alpha != 1:
        out = out * p.alpha
    if p.beta != 0:
        c = f32(args.pop(0))
        out = out + (c if p.beta == 1 else p.beta * c)
    if p.use_scaling_factors:
        s0, s1 = args
        out = out * s0 * s1
    return out


def generalized_flops(p: GeneralizedParams) -> float:
    """2mnk, + 2mn for the outer-product scaling, + mn for alpha, + mn (beta 1) or 2mn (beta other)."""
    mn = float(p.m * p.n)
    extra = 2 * mn if p.use_scaling_factors else 0.0
    extra += mn if p.alpha != 1 else 0.0
    extra += 0.0 if p.beta == 0 else mn if p.beta == 1 else 2 * mn
    return gemm_flops(p) + extra


def generalized_bytes(p: GeneralizedParams) -> float:
    """A and B read in in_dtype, the output written (and C read when beta is not 0) in out_dtype, the
    fp32 scales read (upstream leaves them out)."""
    out_dt = dtype(p.out_dtype)
    total = gemm_bytes(p, dtype(p.in_dtype), out_dt)
    total += p.m * p.n * out_dt.nbytes if p.beta != 0 else 0
    return float(total + (scale_bytes(p) if p.use_scaling_factors else 0))


def generalized_inputs(p: GeneralizedParams, rng: np.random.Generator) -> Arrays:
    in_dt = dtype(p.in_dtype)
    x = {
        "a": normal(rng, (p.k, p.m) if p.transpose_a else (p.m, p.k), in_dt),
        "b": normal(rng, (p.n, p.k) if p.transpose_b else (p.k, p.n), in_dt),
    }
    if p.beta != 0:
        x["c"] = normal(rng, (p.m, p.n), dtype(p.out_dtype))
    if p.use_scaling_factors:
        x["s0"] = rng.uniform(0.5, 1.5, (p.m, 1)).astype(np.float32)
        x["s1"] = rng.uniform(0.5, 1.5, (1, p.n)).astype(np.float32)
    return x


def generalized_reference(x: Arrays, p: GeneralizedParams, rows: np.ndarray) -> Arrays:
    a = f64(x["a"]).T if p.transpose_a else f64(x["a"])
    b = f64(x["b"]).T if p.transpose_b else f64(x["b"])
    out = p.alpha * (a[rows] @ b)
    if p.beta != 0:
        out = out + p.beta * f64(x["c"][rows])
    if p.use_scaling_factors:
        out = out * f64(x["s0"][rows]) * f64(x["s1"])
    return {"out": out}


register_compute(
    OpSpec(
        name="gemm_generalized",
        doc="O = ((alpha op(A) op(B) + beta C) * s0 s1^T) in out_dtype, fp32 accumulation",
        typed=GeneralizedParams,
        flops=generalized_flops,
        bytes=generalized_bytes,
        peak_dtype=lambda p: dtype(p.in_dtype).peak_family,
        make_inputs=generalized_inputs,
        reference=generalized_reference,
        output_rows=lambda p: p.m,
        tolerance_floor=lambda p: fp8_floor(dtype(p.in_dtype)),
    )
)


@array_implementation("gemm_generalized", "jax", "jit")
def jax_gemm_generalized(p: GeneralizedParams) -> Fn:
    if p.in_dtype in NO_GEMM:
        raise unsupported(NO_GEMM[p.in_dtype])
    lax, jnp = jax.lax, jax.numpy
    odt = jnp_dtype(p.out_dtype)
    # contracting dimensions of the stored layouts (the result is (m, n) either way)
    dims = (((0 if p.transpose_a else 1,), (1 if p.transpose_b else 0,)), ((), ()))
    direct = p.in_dtype in DIRECT_OUT_INPUTS and p.out_dtype in DIRECT_OUT_RESULTS
    if p.plain and direct:  # one GEMM kernel, rounded once in its epilogue
        return lambda a, b: {"out": lax.dot_general(a, b, dims, preferred_element_type=odt)}
    accumulate = jnp.int32 if p.in_dtype == "int8" else jnp.float32

    def fn(a: Any, b: Any, *rest: Any) -> dict[str, Any]:
        precision = lax.Precision.HIGHEST if a.dtype == jnp.float32 else None
        out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=accumulate)
        out = epilogue(p, out.astype(jnp.float32), rest, lambda c: c.astype(jnp.float32))
        return {"out": out.astype(odt)}

    return fn
