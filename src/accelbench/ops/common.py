"""Shared by the compute families: input drawing, float64 helpers, placement parameters, and the JAX
building blocks (fp32-accumulating matmul) that several ops compose."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelbench.catalogue import OpParams, OpSpec, param
from accelbench.catalogue import register as register_spec
from accelbench.measure.numerics import FP8_GEMM_FLOOR
from accelbench.platform.dtypes import DType, dtype
from accelbench.platform.frameworks import jax

FP8 = dtype("float8_e4m3fn")
BF16 = dtype("bfloat16")
F32 = dtype("float32")
TINY = float(np.finfo(np.float32).tiny)  # absmax floor so an all-zero row gets a finite scale


@dataclass(frozen=True)
class OnDevice(OpParams):
    """An op run on one local device, on inputs drawn from a seed: after the op's own parameters."""

    trailing = True
    device: int = param("int", 0, doc="local device index when sharding is none")
    seed: int = param("int", 0, doc="input random seed")


@dataclass(frozen=True)
class Placed(OnDevice):
    """Where a compute op runs (one device, or spread over all) and what it draws, after its own."""

    trailing = True
    sharding: str = param(
        "choice",
        "none",
        ("none", "replicated", "split_m"),
        "one device, replicated over all local devices, or A split along M",
    )


@dataclass(frozen=True)
class Matmul(Placed):
    """A matrix product's size: A (m, k) times B (k, n)."""

    m: int = param("dim", doc="rows of A / output")
    k: int = param("dim", doc="contraction")
    n: int = param("dim", doc="columns of output")


@dataclass
class PlacementExtras:
    """Columns of every compute-suite row: where the op ran."""

    used_device_count: int
    sharding: str


def register_compute(spec: OpSpec) -> OpSpec:
    if not issubclass(spec.typed, Placed):
        raise TypeError(f"op {spec.name}: a compute op's parameters derive from Placed")
    return register_spec(replace(spec, suite="compute", row_extras=PlacementExtras))


INTEGER_SPREAD = 16.0  # integer inputs: normals times this, rounded (mostly nonzero, no overflow)


def normal(rng: np.random.Generator, shape: tuple[int, ...], dt: DType) -> np.ndarray:
    """Standard-normal values rounded to dt (never zeros: they hide unwritten outputs); integer
    dtypes get the normals scaled up first, so they are not mostly zeros."""
    values = rng.standard_normal(shape, dtype=np.float32)
    if dt.integer:
        return np.clip(np.rint(values * INTEGER_SPREAD), -dt.max, dt.max).astype(dt.numpy)
    return values.astype(dt.numpy)


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def sigmoid64(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def fp8_floor(inputs: DType) -> float:
    """fp8 GEMMs may accumulate in the tensor cores' reduced-precision mode (numerics.FP8_GEMM_FLOOR)."""
    return FP8_GEMM_FLOOR if inputs.peak_family == "fp8" else 0.0


def jnp_dtype(name: str) -> Any:
    return jax.numpy.dtype(dtype(name).numpy)


def matmul_f32(a: Any, b: Any, layout: str) -> Any:
    """A x B with fp32 accumulation; fp32 inputs use full fp32 precision (no bf16 passes, no tf32)."""
    lax = jax.lax
    dims = (((1,), (0,)), ((), ())) if layout == "kn" else (((1,), (1,)), ((), ()))
    precision = lax.Precision.HIGHEST if a.dtype == jax.numpy.float32 else None
    return lax.dot_general(
        a, b, dims, precision=precision, preferred_element_type=jax.numpy.float32
    )
