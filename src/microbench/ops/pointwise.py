"""Elementwise compute ops of the Ironwood suite over an (m, n) tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from microbench.catalogue import OpSpec, Param, Params, implementation
from microbench.ops.common import MN, f64, normal, register_compute, rows_m
from microbench.platform.dtypes import dtype

register_compute(
    OpSpec(
        name="add",
        suite="compute",
        doc="Z = X + Y",
        params=(*MN, Param("dtype", "dtype", "bfloat16", ("bfloat16", "float32", "float16"))),
        flops=lambda p: float(p["m"] * p["n"]),
        bytes=lambda p: 3.0 * p["m"] * p["n"] * dtype(p["dtype"]).nbytes,
        peak_dtype=lambda p: dtype(p["dtype"]).peak_family,
        make_inputs=lambda p, rng: {
            "x": normal(rng, (p["m"], p["n"]), dtype(p["dtype"])),
            "y": normal(rng, (p["m"], p["n"]), dtype(p["dtype"])),
        },
        reference=lambda x, p, rows: {"out": f64(x["x"][rows]) + f64(x["y"][rows])},
        output_rows=rows_m,
    )
)


@implementation("add", "jax", "jit")
def jax_add(p: Params) -> Callable[..., dict[str, Any]]:
    return lambda x, y: {"out": x + y}
