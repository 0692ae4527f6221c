"""The Ironwood training compute ops: math, FLOP/byte models, inputs and float64 references.

Both backends implement these names; everything here is shared, so the JAX and
PyTorch numbers use the same models and the same reference. docs/ops.md derives
each model.
"""

from __future__ import annotations

import numpy as np

from microbench.dtypes import DType, dtype
from microbench.numerics import FP8_GEMM_FLOOR
from dataclasses import replace

from microbench.registry import Arrays, OpSpec, Param, Params
from microbench.registry import register as _register_spec

FP8 = dtype("float8_e4m3fn")
BF16 = dtype("bfloat16")
F32 = dtype("float32")
TINY = float(np.finfo(np.float32).tiny)  # absmax floor so an all-zero row gets a finite scale
BACKENDS = ("jax", "torch")

M, K, N = Param("m", "dim", doc="rows of A / output"), Param("k", "dim", doc="contraction"), Param("n", "dim", doc="columns of output")
LAYOUT = Param("layout", "choice", "kn", ("kn", "nk"), "B stored as (K,N) or (N,K)")
GEMM_DTYPES = ("bfloat16", "float32", "float16", "float8", "float8_e4m3fn", "float8_e5m2", "float4", "float4_e2m1fn")
OUT_DTYPES = ("bfloat16", "float32", "float16")
# Every compute op also takes where to run and which inputs to draw.
PLACEMENT = (Param("sharding", "choice", "none", ("none", "replicated", "split_m"),
                   "one device, replicated over all local devices, or A split along M"),
             Param("device", "int", 0, doc="local device index when sharding is none"),
             Param("seed", "int", 0, doc="input random seed"))


def register(spec: OpSpec) -> OpSpec:
    return _register_spec(replace(spec, params=spec.params + PLACEMENT))


def fp8_gemm_floor(p: Params) -> float:
    """fp8 GEMMs may accumulate in the tensor cores' reduced-precision mode (numerics.FP8_GEMM_FLOOR)."""
    return FP8_GEMM_FLOOR if gemm_in_dtype(p).peak_family == "fp8" else 0.0


# ---- shared math helpers -------------------------------------------------------------

def normal(rng: np.random.Generator, shape: tuple[int, ...], dt: DType) -> np.ndarray:
    """Standard-normal values rounded to dt (never zeros: they hide unwritten outputs)."""
    return rng.standard_normal(shape, dtype=np.float32).astype(dt.numpy)


def b_shape(p: Params) -> tuple[int, int]:
    return (p["k"], p["n"]) if p["layout"] == "kn" else (p["n"], p["k"])


def b_as_kn(b: np.ndarray, p: Params) -> np.ndarray:
    return b if p["layout"] == "kn" else b.T


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def quantize_rows(x: np.ndarray, qdt: DType) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic absmax quantization along axis 1: (values in qdt, float32 dequant scales (rows,1))."""
    amax = np.max(np.abs(f64(x)), axis=1, keepdims=True)
    scale = (np.maximum(amax, TINY) / qdt.max).astype(np.float32)
    return (f64(x) / f64(scale)).astype(qdt.numpy), scale


def gemm_flops(p: Params) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def gemm_bytes(p: Params, in_dt: DType, out_dt: DType) -> float:
    return (p["m"] * p["k"] + p["k"] * p["n"]) * in_dt.nbytes + p["m"] * p["n"] * out_dt.nbytes


def rows_m(p: Params) -> int:
    return p["m"]


# ---- GEMMs ---------------------------------------------------------------------------

def _plain_gemm_inputs(in_dt: DType):
    def make(p: Params, rng: np.random.Generator) -> Arrays:
        return {"a": normal(rng, (p["m"], p["k"]), in_dt), "b": normal(rng, b_shape(p), in_dt)}
    return make


def _plain_gemm_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    return {"out": f64(x["a"][rows]) @ f64(b_as_kn(x["b"], p))}


def gemm_in_dtype(p: Params) -> DType:
    return dtype(p.get("in_dtype") or p.get("dtype") or "float8")


def gemm_out_dtype(p: Params) -> DType:
    return dtype(p.get("out_dtype") or "bfloat16")


def _dtype_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    return _plain_gemm_inputs(gemm_in_dtype(p))(p, rng)


register(OpSpec(
    name="gemm_multiple_run", suite="compute",
    doc="O_bf16 = A x B with a configurable input dtype, fp32 accumulation",
    params=(M, K, N, Param("dtype", "dtype", "bfloat16", GEMM_DTYPES, "input dtype of A and B"), LAYOUT),
    backends=BACKENDS, flops=gemm_flops,
    bytes=lambda p: gemm_bytes(p, dtype(p["dtype"]), BF16),
    peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
    make_inputs=_dtype_inputs, reference=_plain_gemm_reference, output_rows=rows_m,
    tolerance_floor=fp8_gemm_floor,
))

register(OpSpec(
    name="gemm_simple", suite="compute",
    doc="O_bf16 = A_fp8 x B_fp8, fp32 accumulation",
    params=(M, K, N, LAYOUT), backends=BACKENDS, flops=gemm_flops,
    bytes=lambda p: gemm_bytes(p, FP8, BF16), peak_dtype=lambda p: "fp8",
    make_inputs=_plain_gemm_inputs(FP8), reference=_plain_gemm_reference, output_rows=rows_m,
    tolerance_floor=lambda p: FP8_GEMM_FLOOR,
))

register(OpSpec(
    name="gemm_simple_with_dtype", suite="compute",
    doc="O = A x B with input and output dtypes as parameters, fp32 accumulation",
    params=(M, K, N, Param("in_dtype", "dtype", "float8", GEMM_DTYPES),
            Param("out_dtype", "dtype", "bfloat16", OUT_DTYPES), LAYOUT),
    backends=BACKENDS, flops=gemm_flops,
    bytes=lambda p: gemm_bytes(p, gemm_in_dtype(p), gemm_out_dtype(p)),
    peak_dtype=lambda p: gemm_in_dtype(p).peak_family,
    make_inputs=_dtype_inputs, reference=_plain_gemm_reference, output_rows=rows_m,
    tolerance_floor=fp8_gemm_floor,
))


def _scaled_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    x = _plain_gemm_inputs(FP8)(p, rng)
    x["scale_a"] = rng.uniform(0.5, 1.5, (p["m"], 1)).astype(np.float32)
    x["scale_b"] = rng.uniform(0.5, 1.5, (1, p["n"])).astype(np.float32)
    return x


def _scaled_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    acc = _plain_gemm_reference(x, p, rows)["out"]
    return {"out": acc * f64(x["scale_a"][rows]) * f64(x["scale_b"])}


SCALE_BYTES = lambda p: 4.0 * (p["m"] + p["n"])  # noqa: E731  fp32 S_A (M,1) and S_B (1,N)

register(OpSpec(
    name="gemm", suite="compute",
    doc="O_bf16 = (A_fp8 x B_fp8) * (S_A S_B^T): fp8 GEMM, fp32 accumulation, outer-product scaling",
    params=(M, K, N, LAYOUT), backends=BACKENDS,
    flops=lambda p: gemm_flops(p) + 2.0 * p["m"] * p["n"],
    bytes=lambda p: gemm_bytes(p, FP8, BF16) + SCALE_BYTES(p), peak_dtype=lambda p: "fp8",
    make_inputs=_scaled_inputs, reference=_scaled_reference, output_rows=rows_m,
    tolerance_floor=lambda p: FP8_GEMM_FLOOR,
))


def _accum_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    x = _scaled_inputs(p, rng)
    x["acc"] = rng.standard_normal((p["m"], p["n"]), dtype=np.float32)
    return x


register(OpSpec(
    name="gemm_accum", suite="compute",
    doc="O_fp32 += (A_fp8 x B_fp8) * (S_A S_B^T), the fp32 buffer updated in place",
    params=(M, K, N, LAYOUT), backends=BACKENDS,
    flops=lambda p: gemm_flops(p) + 3.0 * p["m"] * p["n"],
    bytes=lambda p: (p["m"] * p["k"] + p["k"] * p["n"]) * FP8.nbytes + SCALE_BYTES(p) + 2 * 4.0 * p["m"] * p["n"],
    peak_dtype=lambda p: "fp8",
    make_inputs=_accum_inputs,
    reference=lambda x, p, rows: {"out": f64(x["acc"][rows]) + _scaled_reference(x, p, rows)["out"]},
    output_rows=rows_m, extra={"accumulates": "acc"}, tolerance_floor=lambda p: FP8_GEMM_FLOOR,
))


def _rowwise_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    return _plain_gemm_inputs(BF16)(p, rng)


def _rowwise_reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
    qa, sa = quantize_rows(x["a"][rows], FP8)
    qb_t, sb_t = quantize_rows(b_as_kn(x["b"], p).T, FP8)  # B per column = B^T per row
    return {"out": (f64(qa) @ f64(qb_t).T) * f64(sa) * f64(sb_t).T}


register(OpSpec(
    name="gemm_fp8_rowwise", suite="compute",
    doc="bf16 A, B quantized dynamically to fp8 (A per row, B per column, absmax), fp8 GEMM, scales applied",
    params=(M, K, N, LAYOUT), backends=BACKENDS,
    flops=lambda p: gemm_flops(p) + 2.0 * p["m"] * p["n"] + 2.0 * p["m"] * p["k"] + 2.0 * p["k"] * p["n"] + p["m"] + p["n"],
    bytes=lambda p: gemm_bytes(p, BF16, BF16), peak_dtype=lambda p: "fp8",
    make_inputs=_rowwise_inputs, reference=_rowwise_reference, output_rows=rows_m,
    tolerance_floor=lambda p: FP8_GEMM_FLOOR,
))


# ---- elementwise and quantization ----------------------------------------------------

MN = (Param("m", "dim"), Param("n", "dim"))

register(OpSpec(
    name="add", suite="compute", doc="Z = X + Y",
    params=(*MN, Param("dtype", "dtype", "bfloat16", ("bfloat16", "float32", "float16"))),
    backends=BACKENDS,
    flops=lambda p: float(p["m"] * p["n"]),
    bytes=lambda p: 3.0 * p["m"] * p["n"] * dtype(p["dtype"]).nbytes,
    peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
    make_inputs=lambda p, rng: {"x": normal(rng, (p["m"], p["n"]), dtype(p["dtype"])),
                                "y": normal(rng, (p["m"], p["n"]), dtype(p["dtype"]))},
    reference=lambda x, p, rows: {"out": f64(x["x"][rows]) + f64(x["y"][rows])},
    output_rows=rows_m,
))

QDTYPE = Param("qdtype", "dtype", "float8", ("float8", "float8_e4m3fn", "float8_e5m2"), "quantized dtype")
STATIC_SCALE = Param("scale", "float", 0.05, doc="fixed dequantization scale")


def _bf16_x(p: Params, rng: np.random.Generator) -> Arrays:
    return {"x": normal(rng, (p["m"], p["n"]), BF16)}


def _oriented(x: Arrays, transpose: bool) -> np.ndarray:
    return x["x"].T if transpose else x["x"]


def _quant_spec(name: str, transpose: bool, static: bool) -> OpSpec:
    rows_of_output = (lambda p: p["n"]) if transpose else rows_m
    scales = (lambda p: p["n"]) if transpose else (lambda p: p["m"])

    def reference(x: Arrays, p: Params, rows: np.ndarray) -> Arrays:
        src = _oriented(x, transpose)[rows]
        qdt = dtype(p["qdtype"])
        if static:
            return {"q": (f64(src) / np.float64(np.float32(p["scale"]))).astype(qdt.numpy)}
        q, scale = quantize_rows(src, qdt)
        return {"q": q, "scale": scale}

    what = "X^T" if transpose else "X"
    if static:
        doc = f"bf16 {what} -> fp8 values with a fixed scale"
        flops = lambda p: float(p["m"] * p["n"])  # noqa: E731  one multiply per element
        nbytes = lambda p: p["m"] * p["n"] * (BF16.nbytes + dtype(p["qdtype"]).nbytes) + 4.0  # noqa: E731
    else:
        doc = f"bf16 {what} -> fp8 values plus fp32 per-row scales of {what}, dynamic absmax"
        # per element: |x| into the row max, and the scaling; per scale: one division
        flops = lambda p: 2.0 * p["m"] * p["n"] + scales(p)  # noqa: E731
        nbytes = lambda p: p["m"] * p["n"] * (BF16.nbytes + dtype(p["qdtype"]).nbytes) + 4.0 * scales(p)  # noqa: E731
    params = (*MN, QDTYPE, STATIC_SCALE) if static else (*MN, QDTYPE)
    return OpSpec(name=name, suite="compute", doc=doc, params=params, backends=BACKENDS,
                  flops=flops, bytes=nbytes, peak_dtype=lambda p: "bf16", make_inputs=_bf16_x,
                  reference=reference, output_rows=rows_of_output,
                  extra={"transpose": transpose, "static": static})


for _name, _t, _s in (("quantization", False, False), ("transpose_quantization", True, False),
                      ("quantization_static_scaling", False, True),
                      ("transpose_quantization_static_scaling", True, True)):
    register(_quant_spec(_name, _t, _s))
