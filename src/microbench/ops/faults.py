"""Fault-injection ops for testing the harness itself (raise, exhaust memory, hang, crash, lie)."""

from __future__ import annotations

import numpy as np

from microbench.registry import OpSpec, Param, register

MODES = ("ok", "raise", "oom", "hang", "crash", "wrong")

register(OpSpec(
    name="fault", suite="faults",
    doc="host op that behaves as told: ok, raise, oom, hang, crash (kills its process) or wrong (bad output)",
    params=(Param("mode", "choice", "ok", MODES), Param("n", "dim", 64), Param("alloc_gb", "float", 1024.0),
            Param("memory_cap_gb", "float", 1.0, doc="address-space cap while allocating (oom mode)"),
            Param("seconds", "float", 3600.0), Param("seed", "int", 0)),
    backends=("numpy",),
    flops=lambda p: float(p["n"]), bytes=lambda p: 16.0 * p["n"], peak_dtype=lambda p: "fp32",
    make_inputs=lambda p, rng: {"x": rng.standard_normal((p["n"], 1), dtype=np.float32)},
    reference=lambda x, p, rows: {"out": x["x"][rows].astype(np.float64) * 2},
    output_rows=lambda p: p["n"],
))
