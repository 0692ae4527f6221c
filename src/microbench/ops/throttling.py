"""gemm_throttling: one GEMM repeated for a long run, to see whether the chip slows down under load.

The reference's four gap strategies decide what separates consecutive GEMMs; here each is a cadence and a
cache policy, recorded in the row like any other (docs/ironwood.md):

- data_gen_once_block_every_iter: same inputs, each GEMM waits for the previous one (blocked, warm);
- data_gen_once_noblock: same inputs, GEMMs back to back (sustained, warm);
- data_gen_every_iter_block_every_iter: a 256 MB buffer rewritten before every GEMM, so caches are cold
  and there is a gap, as new data gave (blocked, cold);
- data_gen_once_noblock_stressed_no_sharding: back to back on the case's device (sustained, warm); the
  reference drove every device at once from threads, here each device is its own case.

Every row carries the per-iteration series (JSON lines), `decile_drift`/`throttled` (last tenth of the run
against the first) and, with nvidia-ml-py on an NVIDIA GPU, the SM clock, temperature and power sampled
along the run. The output is bf16 (the reference cast it to the input dtype, fp8 for fp8 runs).
"""

from __future__ import annotations

from microbench.catalogue import OpSpec, Param, implementation
from microbench.ops.common import LAYOUT, K, M, N, register_compute, rows_m
from microbench.ops.gemm import (
    BF16,
    GEMM_DTYPES,
    fp8_gemm_floor,
    gemm_bytes,
    gemm_flops,
    gemm_in_dtype,
    jax_gemm,
    plain_inputs,
    plain_reference,
)

STRATEGIES: dict[str, dict[str, str]] = {
    "data_gen_once_block_every_iter": {"cadence": "blocked", "cache": "warm"},
    "data_gen_once_noblock": {"cadence": "sustained", "cache": "warm"},
    "data_gen_every_iter_block_every_iter": {"cadence": "blocked", "cache": "cold"},
    "data_gen_once_noblock_stressed_no_sharding": {"cadence": "sustained", "cache": "warm"},
}

register_compute(
    OpSpec(
        name="gemm_throttling",
        suite="compute",
        doc="O_bf16 = A x B repeated for a long run; the gap strategy sets what separates the GEMMs",
        params=(
            M,
            K,
            N,
            Param("dtype", "dtype", "float8", GEMM_DTYPES, "input dtype of A and B"),
            Param(
                "gap_strategy",
                "choice",
                "data_gen_once_block_every_iter",
                tuple(STRATEGIES),
                "what separates consecutive GEMMs (module docstring)",
            ),
            LAYOUT,
        ),
        flops=gemm_flops,
        bytes=lambda p: gemm_bytes(p, gemm_in_dtype(p), BF16),
        peak_dtype=lambda p: gemm_in_dtype(p).peak_family,
        make_inputs=plain_inputs(gemm_in_dtype),
        reference=plain_reference,
        output_rows=rows_m,
        tolerance_floor=fp8_gemm_floor,
        extra={"run_settings": lambda p: STRATEGIES[p["gap_strategy"]], "monitor_gpu": True},
    )
)
implementation("gemm_throttling", "jax", "jit")(jax_gemm)
