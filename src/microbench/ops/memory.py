"""Device memory bandwidth: a device-to-device copy into a new buffer (the reference's
single_device_hbm_copy), the yardstick the memory-bound ops are read against."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from microbench.catalogue import Arrays, OpSpec, Param, Params, array_implementation
from microbench.ops.common import normal, register_compute
from microbench.platform.dtypes import dtype

PATTERN = 1 << 20  # distinct values drawn; larger arrays repeat them (a copy cannot tell)


def copy_inputs(p: Params, rng: np.random.Generator) -> Arrays:
    dt = dtype(p["dtype"])
    values = normal(rng, (min(PATTERN, p["num_elements"]),), dt)
    return {"x": np.resize(values, p["num_elements"])}


register_compute(
    OpSpec(
        name="single_device_hbm_copy",
        suite="compute",
        doc="Y = copy(X) into a new buffer, X a flat array: read once, written once",
        params=(
            Param("num_elements", "elements", doc="elements of X"),
            Param("dtype", "dtype", "bfloat16", ("bfloat16", "float32", "float16", "float8")),
        ),
        flops=lambda p: 0.0,
        bytes=lambda p: 2.0 * p["num_elements"] * dtype(p["dtype"]).nbytes,
        peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
        make_inputs=copy_inputs,
        reference=lambda x, p, rows: {"out": x["x"][rows]},
        output_rows=lambda p: int(p["num_elements"]),
    )
)


@array_implementation("single_device_hbm_copy", "jax", "jit")
def jax_copy(p: Params) -> Callable[..., dict[str, Any]]:
    return lambda x: {"out": x.copy()}
