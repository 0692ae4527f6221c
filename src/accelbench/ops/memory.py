"""Device memory bandwidth: a device-to-device copy into a new buffer (the reference's
single_device_hbm_copy), the yardstick the memory-bound ops are read against."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, array_implementation, param
from accelbench.ops.common import Placed, f64, normal, register_compute
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import jax

PATTERN = 1 << 20  # distinct values drawn; larger arrays repeat them (a copy cannot tell)


@dataclass(frozen=True)
class CopyParams(Placed):
    num_elements: int = param("elements", doc="elements of X")
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float32", "float16", "float8"))


def copy_inputs(p: CopyParams, rng: np.random.Generator) -> Arrays:
    dt = dtype(p.dtype)
    values = normal(rng, (min(PATTERN, p.num_elements),), dt)
    return {"x": np.resize(values, p.num_elements)}


register_compute(
    OpSpec(
        name="single_device_hbm_copy",
        doc="Y = copy(X) into a new buffer, X a flat array: read once, written once",
        typed=CopyParams,
        flops=lambda p: 0.0,
        bytes=lambda p: 2.0 * p.num_elements * dtype(p.dtype).nbytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        make_inputs=copy_inputs,
        reference=lambda x, p, rows: {"out": x["x"][rows]},
        output_rows=lambda p: int(p.num_elements),
    )
)


@array_implementation("single_device_hbm_copy", "jax", "jit")
def jax_copy(p: CopyParams) -> Callable[..., dict[str, Any]]:
    return lambda x: {"out": x.copy()}


# ---- hbm_bandwidth: the STREAM kernels (the jax-bench harness's memory benchmark) ------------------

STREAM_SCALAR = 3.0  # STREAM's own scalar; upstream drew one at random per case


@dataclass(frozen=True)
class Stream:
    """One STREAM kernel (its math on framework arrays or float64 numpy, with the scalar). One that reads
    nothing writes the scalar everywhere; one that writes nothing reduces its input to one value."""

    reads: int
    flops_per_element: int
    math: Callable[..., Any]
    writes: int = 1


STREAM: dict[str, Stream] = {
    "copy": Stream(1, 0, lambda s, x: x.copy()),
    "scale": Stream(1, 1, lambda s, x: s * x),
    "add": Stream(2, 1, lambda s, x, y: x + y),
    "triad": Stream(2, 2, lambda s, x, y: x + s * y),
    # TPUMS's: every element read once (upstream reduces with any(X); the max is checkable), and
    # every element written once with the scalar (upstream's fill)
    "read_only": Stream(1, 1, lambda s, x: x.max().reshape(1), writes=0),
    "write_only": Stream(0, 0, lambda s: s),
}


@dataclass(frozen=True)
class StreamParams(Placed):
    op_type: str = param("choice", "copy", tuple(STREAM), "y=x, y=s*x, z=x+y, z=x+s*y, max(x), y=s")
    size: int = param("elements", 1 << 27, doc="elements per array (not bytes)")
    dtype: str = param("dtype", "bfloat16", ("bfloat16", "float32", "float16"))


def stream_inputs(p: StreamParams, rng: np.random.Generator) -> Arrays:
    dt = dtype(p.dtype)
    values = normal(rng, (min(PATTERN, p.size), STREAM[p.op_type].reads), dt)
    return {name: np.resize(values[:, i], p.size) for i, name in enumerate("xy"[: values.shape[1]])}


def stream_reference(x: Arrays, p: StreamParams, rows: np.ndarray) -> Arrays:
    kernel = STREAM[p.op_type]
    if not kernel.reads:
        out = np.full(len(rows), STREAM_SCALAR)
    elif not kernel.writes:  # a reduction: of the whole array, whichever rows are checked
        out = kernel.math(STREAM_SCALAR, f64(x["x"]))[rows]
    else:
        out = kernel.math(STREAM_SCALAR, *(f64(x[name][rows]) for name in "xy"[: kernel.reads]))
    return {"out": out.astype(dtype(p.dtype).numpy)}


def stream_bytes(p: StreamParams) -> float:
    kernel = STREAM[p.op_type]
    return float((kernel.reads + kernel.writes) * p.size * dtype(p.dtype).nbytes)


register_compute(
    OpSpec(
        name="hbm_bandwidth",
        doc="a STREAM kernel over flat arrays of `size` elements: copy, scale, add, triad, "
        "read_only or write_only",
        typed=StreamParams,
        flops=lambda p: float(STREAM[p.op_type].flops_per_element * p.size),
        bytes=stream_bytes,
        peak_dtype=lambda p: dtype(p.dtype).peak_family,
        make_inputs=stream_inputs,
        reference=stream_reference,
        output_rows=lambda p: int(p.size) if STREAM[p.op_type].writes else 1,
    )
)


@array_implementation("hbm_bandwidth", "jax", "jit")
def jax_stream(p: StreamParams) -> Callable[..., dict[str, Any]]:
    kernel, jnp = STREAM[p.op_type], jax.numpy
    scalar = jnp.dtype(dtype(p.dtype).numpy).type(STREAM_SCALAR)
    if not kernel.reads:
        return lambda: {"out": jnp.full((p.size,), scalar)}
    return lambda *arrays: {"out": kernel.math(scalar, *arrays)}
