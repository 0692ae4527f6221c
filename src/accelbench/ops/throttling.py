"""gemm_throttling: one GEMM repeated for a long run, to see whether the chip slows down under load.

The reference's four gap strategies (what separates consecutive GEMMs) are each a cadence and a cache
policy (`STRATEGIES`, docs/ironwood.md): new data every iteration is a 256 MB buffer rewritten before
every GEMM (cold caches and a gap); the stressed strategy runs on the case's device, where the reference
drove every device at once from threads. Rows carry the per-iteration series, `decile_drift_ratio` /
`throttled` and, with nvidia-ml-py, the GPU's clocks, temperature and power along the run."""

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
