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

from dataclasses import dataclass, replace

from accelbench.catalogue import RunOverride, Traits, array_implementation, param
from accelbench.ops.common import register_compute
from accelbench.ops.gemm import DTYPE_GEMM, GEMM_DTYPES, DtypeGemmParams, jax_gemm

STRATEGIES: dict[str, RunOverride] = {
    "data_gen_once_block_every_iter": RunOverride(cadence="blocked", cache="warm"),
    "data_gen_once_noblock": RunOverride(cadence="sustained", cache="warm"),
    "data_gen_every_iter_block_every_iter": RunOverride(cadence="blocked", cache="cold"),
    "data_gen_once_noblock_stressed_no_sharding": RunOverride(cadence="sustained", cache="warm"),
}


@dataclass(frozen=True)
class ThrottlingParams(DtypeGemmParams):
    dtype: str = param("dtype", "float8", GEMM_DTYPES, "input dtype of A and B")
    gap_strategy: str = param(
        "choice",
        "data_gen_once_block_every_iter",
        tuple(STRATEGIES),
        "what separates consecutive GEMMs (module docstring)",
    )


register_compute(  # gemm_multiple_run's GEMM, models and reference, timed over a long run
    replace(
        DTYPE_GEMM,
        name="gemm_throttling",
        doc="O_bf16 = A x B repeated for a long run; the gap strategy sets what separates the GEMMs",
        typed=ThrottlingParams,
        traits=Traits(run_overrides=lambda p: STRATEGIES[p.gap_strategy], monitor_gpu=True),
    )
)
array_implementation("gemm_throttling", "jax", "jit")(jax_gemm)
