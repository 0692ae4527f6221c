"""gemm_throttling: one GEMM repeated for a long run, to see whether the chip slows down under load.

The reference's four gap strategies decide what separates consecutive GEMMs; here each is a cadence and a
cache policy, recorded in the row like any other (docs/ironwood.md):

- data_gen_once_block_every_iter: same inputs, each GEMM waits for the previous one (blocked, warm);
- data_gen_once_noblock: same inputs, GEMMs back to back (sustained, warm);
- data_gen_every_iter_block_every_iter: a 256 MB buffer rewritten before every GEMM, so caches are cold
  and there is a gap, as new data gave (blocked, cold);
- data_gen_once_noblock_stressed_no_sharding: back to back on the case's device (sustained, warm); the
  reference drove every device at once from threads, here each device is its own case.

Every row carries the per-iteration series (JSON lines), `decile_drift_ratio`/`throttled` (last tenth of the run
against the first) and, with nvidia-ml-py on an NVIDIA GPU, the SM clock, temperature and power sampled
along the run. The output is bf16 (the reference cast it to the input dtype, fp8 for fp8 runs).
"""

from __future__ import annotations

from dataclasses import replace

from microbench.catalogue import Param, RunOverride, Traits, array_implementation
from microbench.ops.common import LAYOUT, K, M, N, register_compute
from microbench.ops.gemm import DTYPE_GEMM, GEMM_DTYPES, jax_gemm

STRATEGIES: dict[str, RunOverride] = {
    "data_gen_once_block_every_iter": RunOverride(cadence="blocked", cache="warm"),
    "data_gen_once_noblock": RunOverride(cadence="sustained", cache="warm"),
    "data_gen_every_iter_block_every_iter": RunOverride(cadence="blocked", cache="cold"),
    "data_gen_once_noblock_stressed_no_sharding": RunOverride(cadence="sustained", cache="warm"),
}

register_compute(  # gemm_multiple_run's GEMM, models and reference, timed over a long run
    replace(
        DTYPE_GEMM,
        name="gemm_throttling",
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
        traits=Traits(run_overrides=lambda p: STRATEGIES[p["gap_strategy"]], monitor_gpu=True),
    )
)
array_implementation("gemm_throttling", "jax", "jit")(jax_gemm)
