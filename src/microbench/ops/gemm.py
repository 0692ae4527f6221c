"""The Ironwood GEMM family: math, FLOP/byte models, inputs, float64 references and the JAX versions.

The PyTorch twins are in torch_backend/ops/gemm.py; both share everything above the implementations,
so JAX and PyTorch numbers use the same models and the same reference. docs/ops.md derives each model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from microbench.catalogue import Arrays, OpSpec, Param, Params, Traits, array_implementation
from microbench.ops.common import (
    BF16,
    DIRECT_OUT_INPUTS,
    DIRECT_OUT_RESULTS,
    FP8,
    LAYOUT,
    K,
    M,
    N,
    f64,
    fp8_floor_if,
    jnp_dtype,
    matmul_f32,
    matmul_to,
    normal,
    register_compute,
    rows_m,
)
from microbench.platform.dtypes import DType, dtype
from microbench.platform.frameworks import jax

GEMM_DTYPES = (
    "bfloat16",
    "float32",
    "float16",
    "float8",
    "float8_e4m3fn",
    "float8_e5m2",
    "float4",
    "float4_e2m1fn",
)
OUT_DTYPES = ("bfloat16", "float32", "float16")
SCALE_BYTES = 4  # fp32 S_A (M,1) and S_B (1,N)
Fn = Callable[..., dict[str, Any]]


def b_shape(p: Params) -> tuple[int, int]:
    return (p["k"], p["n"]) if p["layout"] == "kn" else (p["n"], p["k"])


def b_as_kn(b: np.ndarray, p: Params) -> np.ndarray:
    return b if p["layout"] == "kn" else b.T


def gemm_flops(p: Params) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def gemm_bytes(p: Params, in_dt: DType, out_dt: DType) -> float:
    return (p["m"] * p["k"] + p["k"] * p["n"]) * in_dt.nbytes + p["m"] * p["n"] * out_dt.nbytes


def scale_bytes(p: Params) -> float:
    return float(SCALE_BYTES * (p["m"] + p["n"]))


def gemm_in_dtype(p: Params) -> DType:
    return dtype(p.get("in_dtype") or p.get("dtype") or "float8")


def gemm_out_dtype(p: Params) -> DType:
    return dtype(p.get("out_dtype") or "bfloat16")


def fp8_gemm_floor(p: Params) -> float:
    return fp8_floor_if(gemm_in_dtype(p).peak_family == "fp8")


def plain_inputs(
    in_dt: Callable[[Params], DType],
) -> Callable[[Params, np.random.Generator], Arrays]:
    def make(p: Params, rng: np.random.Generator) -> Arrays:
        return {
            "a": normal(rng, (p["m"], p["k"]), in_dt(p)),
            "b": normal(rng, b_shape(p), in_dt(p)),
        }

    return make


def plain_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    return {"out": f64(x["a"][rows]) @ f64(b_as_kn(x["b"], p))}


def scaled_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    x = plain_inputs(lambda p: FP8)(p, rng)
    x["scale_a"] = rng.uniform(0.5, 1.5, (p["m"], 1)).astype(np.float32)
    x["scale_b"] = rng.uniform(0.5, 1.5, (1, p["n"])).astype(np.float32)
    return x


def scaled_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    acc = plain_reference(x, p, rows)["out"]
    return {"out": acc * f64(x["scale_a"][rows]) * f64(x["scale_b"])}


def accum_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    x = scaled_inputs(p, rng)
    x["acc"] = rng.standard_normal((p["m"], p["n"]), dtype=np.float32)
    return x


def _fp8(p: Params) -> str:
    return "fp8"


DTYPE_GEMM = register_compute(
    OpSpec(
        name="gemm_multiple_run",
        suite="compute",
        doc="O_bf16 = A x B with a configurable input dtype, fp32 accumulation",
        params=(
            M,
            K,
            N,
            Param("dtype", "dtype", "bfloat16", GEMM_DTYPES, "input dtype of A and B"),
            LAYOUT,
        ),
        flops=gemm_flops,
        bytes=lambda p: gemm_bytes(p, dtype(p["dtype"]), BF16),
        peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
        make_inputs=plain_inputs(gemm_in_dtype),
        reference=plain_reference,
        output_rows=rows_m,
        tolerance_floor=fp8_gemm_floor,
    )
)

register_compute(
    OpSpec(
        name="gemm_simple",
        suite="compute",
        doc="O_bf16 = A_fp8 x B_fp8, fp32 accumulation",
        params=(M, K, N, LAYOUT),
        flops=gemm_flops,
        bytes=lambda p: gemm_bytes(p, FP8, BF16),
        peak_dtype=_fp8,
        make_inputs=plain_inputs(lambda p: FP8),
        reference=plain_reference,
        output_rows=rows_m,
        tolerance_floor=lambda p: fp8_floor_if(True),
    )
)

register_compute(
    OpSpec(
        name="gemm_simple_with_dtype",
        suite="compute",
        doc="O = A x B with input and output dtypes as parameters, fp32 accumulation",
        params=(
            M,
            K,
            N,
            Param("in_dtype", "dtype", "float8", GEMM_DTYPES, aliases=("in_dtype_str",)),
            Param("out_dtype", "dtype", "bfloat16", OUT_DTYPES, aliases=("out_dtype_str",)),
            LAYOUT,
        ),
        flops=gemm_flops,
        bytes=lambda p: gemm_bytes(p, gemm_in_dtype(p), gemm_out_dtype(p)),
        peak_dtype=lambda p: gemm_in_dtype(p).peak_family,
        make_inputs=plain_inputs(gemm_in_dtype),
        reference=plain_reference,
        output_rows=rows_m,
        tolerance_floor=fp8_gemm_floor,
    )
)

register_compute(
    OpSpec(
        name="gemm",
        suite="compute",
        doc="O_bf16 = (A_fp8 x B_fp8) * (S_A S_B^T): fp8 GEMM, fp32 accumulation, outer-product scaling",
        params=(M, K, N, LAYOUT),
        flops=lambda p: gemm_flops(p) + 2.0 * p["m"] * p["n"],
        bytes=lambda p: gemm_bytes(p, FP8, BF16) + scale_bytes(p),
        peak_dtype=_fp8,
        make_inputs=scaled_inputs,
        reference=scaled_reference,
        output_rows=rows_m,
        tolerance_floor=lambda p: fp8_floor_if(True),
    )
)

register_compute(
    OpSpec(
        name="gemm_accum",
        suite="compute",
        doc="O_fp32 += (A_fp8 x B_fp8) * (S_A S_B^T), the fp32 buffer updated in place",
        params=(M, K, N, LAYOUT),
        flops=lambda p: gemm_flops(p) + 3.0 * p["m"] * p["n"],
        bytes=lambda p: (
            (p["m"] * p["k"] + p["k"] * p["n"]) * FP8.nbytes
            + scale_bytes(p)
            + 2 * 4.0 * p["m"] * p["n"]
        ),
        peak_dtype=_fp8,
        make_inputs=accum_inputs,
        reference=lambda x, p, rows: {
            "out": f64(x["acc"][rows]) + scaled_reference(x, p, rows)["out"]
        },
        output_rows=rows_m,
        traits=Traits(donated_input="acc"),
        tolerance_floor=lambda p: fp8_floor_if(True),
    )
)

# ---- JAX ---------------------------------------------------------------------------------------


@array_implementation(("gemm_multiple_run", "gemm_simple", "gemm_simple_with_dtype"), "jax", "jit")
def jax_gemm(p: Params) -> Fn:
    odt = jnp_dtype(gemm_out_dtype(p).name)
    return lambda a, b: {"out": matmul_to(a, b, p["layout"], odt)}


@array_implementation("gemm", "jax", "jit")
def jax_scaled_gemm(p: Params) -> Fn:
    return lambda a, b, sa, sb: {
        "out": (matmul_f32(a, b, p["layout"]) * sa * sb).astype(jax.numpy.bfloat16)
    }


@array_implementation("gemm_accum", "jax", "jit")
def jax_gemm_accum(p: Params) -> Fn:
    return lambda a, b, sa, sb, acc: {"out": acc + matmul_f32(a, b, p["layout"]) * sa * sb}


# ---- gemm_generalized (the jax-bench harness's one GEMM) ------------------------------------------
#
# P = op(A) op(B) accumulated in fp32, then alpha P, + beta C, then (s0 s1^T) on the whole, rounded once
# to out_dtype. Upstream typed the product as in_dtype (an fp8 product for fp8 inputs) and kept C in
# in_dtype; here the accumulator is fp32, as every GEMM of this project, and C is out_dtype (what a
# beta-accumulated output is): docs/jax_bench.md.

GENERALIZED_DTYPES = (
    "float8_e4m3fn",
    "float8_e5m2",
    "bfloat16",
    "float16",
    "float32",
    "int8",
)


def generalized_a_shape(p: Params) -> tuple[int, int]:
    return (p["k"], p["m"]) if p["transpose_a"] else (p["m"], p["k"])


def generalized_b_shape(p: Params) -> tuple[int, int]:
    return (p["n"], p["k"]) if p["transpose_b"] else (p["k"], p["n"])


def generalized_flops(p: Params) -> float:
    """2mnk, + 2mn for the outer-product scaling, + mn for alpha, + mn (beta 1) or 2mn (beta other)."""
    mn = float(p["m"] * p["n"])
    extra = 2 * mn if p["use_scaling_factors"] else 0.0
    extra += mn if p["alpha"] != 1 else 0.0
    extra += 0.0 if p["beta"] == 0 else mn if p["beta"] == 1 else 2 * mn
    return gemm_flops(p) + extra


def generalized_bytes(p: Params) -> float:
    """A and B read in in_dtype, the output written (and C read when beta is not 0) in out_dtype, the
    fp32 scales read (upstream leaves them out)."""
    in_dt, out_dt = dtype(p["in_dtype"]), dtype(p["out_dtype"])
    mn = p["m"] * p["n"]
    total = (p["m"] * p["k"] + p["k"] * p["n"]) * in_dt.nbytes + mn * out_dt.nbytes
    total += mn * out_dt.nbytes if p["beta"] != 0 else 0
    return float(total + (scale_bytes(p) if p["use_scaling_factors"] else 0))


def generalized_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    in_dt = dtype(p["in_dtype"])
    x = {
        "a": normal(rng, generalized_a_shape(p), in_dt),
        "b": normal(rng, generalized_b_shape(p), in_dt),
    }
    if p["beta"] != 0:
        x["c"] = normal(rng, (p["m"], p["n"]), dtype(p["out_dtype"]))
    if p["use_scaling_factors"]:
        x["s0"] = rng.uniform(0.5, 1.5, (p["m"], 1)).astype(np.float32)
        x["s1"] = rng.uniform(0.5, 1.5, (1, p["n"])).astype(np.float32)
    return x


def generalized_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    a = f64(x["a"]).T if p["transpose_a"] else f64(x["a"])
    b = f64(x["b"]).T if p["transpose_b"] else f64(x["b"])
    out = p["alpha"] * (a[rows] @ b)
    if p["beta"] != 0:
        out = out + p["beta"] * f64(x["c"][rows])
    if p["use_scaling_factors"]:
        out = out * f64(x["s0"][rows]) * f64(x["s1"])
    return {"out": out}


register_compute(
    OpSpec(
        name="gemm_generalized",
        suite="compute",
        doc="O = ((alpha op(A) op(B) + beta C) * s0 s1^T) in out_dtype, fp32 accumulation",
        params=(
            Param("m", "dim", 1024),
            Param("k", "dim", 1024),
            Param("n", "dim", 1024),
            Param("in_dtype", "dtype", "float8_e4m3fn", GENERALIZED_DTYPES),
            Param("out_dtype", "dtype", "bfloat16", ("bfloat16", "float16", "float32")),
            Param("use_scaling_factors", "bool", False, doc="row and column fp32 scales"),
            Param("transpose_a", "bool", False, doc="A stored (k, m)"),
            Param("transpose_b", "bool", False, doc="B stored (n, k)"),
            Param("alpha", "float", 1.0),
            Param("beta", "float", 0.0, doc="C (m, n) in out_dtype is read when beta is not 0"),
        ),
        flops=generalized_flops,
        bytes=generalized_bytes,
        peak_dtype=lambda p: dtype(p["in_dtype"]).peak_family,
        make_inputs=generalized_inputs,
        reference=generalized_reference,
        output_rows=rows_m,
        tolerance_floor=lambda p: fp8_floor_if(dtype(p["in_dtype"]).peak_family == "fp8"),
    )
)


def generalized_dims(p: Params) -> Any:
    """dot_general's contracting dimensions for the stored layouts (the result is (m, n) either way)."""
    return (((0 if p["transpose_a"] else 1,), (1 if p["transpose_b"] else 0,)), ((), ()))


@array_implementation("gemm_generalized", "jax", "jit")
def jax_gemm_generalized(p: Params) -> Fn:
    lax, jnp = jax.lax, jax.numpy
    odt = jnp_dtype(gemm_out_dtype(p).name)
    dims = generalized_dims(p)
    plain = p["alpha"] == 1 and p["beta"] == 0 and not p["use_scaling_factors"]
    direct = {p["in_dtype"]} <= set(DIRECT_OUT_INPUTS) and p["out_dtype"] in DIRECT_OUT_RESULTS
    if plain and direct:  # one GEMM kernel, rounded once in its epilogue
        return lambda a, b: {"out": lax.dot_general(a, b, dims, preferred_element_type=odt)}
    accumulate = jnp.int32 if p["in_dtype"] == "int8" else jnp.float32

    def fn(a: Any, b: Any, *rest: Any) -> dict[str, Any]:
        precision = lax.Precision.HIGHEST if a.dtype == jnp.float32 else None
        out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=accumulate)
        out = out.astype(jnp.float32)
        args = list(rest)
        if p["alpha"] != 1:
            out = out * jnp.float32(p["alpha"])
        if p["beta"] != 0:
            c = args.pop(0).astype(jnp.float32)
            out = out + (c if p["beta"] == 1 else jnp.float32(p["beta"]) * c)
        if p["use_scaling_factors"]:
            s0, s1 = args
            out = out * s0 * s1
        return {"out": out.astype(odt)}

    return fn
