"""The TPU flags upstream's op_flags.yaml gives each benchmark: libtpu reads them once, when its
process starts, so a case carries them as its process's environment (`process_env`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accelbench.dialects.jax_bench.benchmarks import V2Benchmark

DVFS = "--xla_tpu_dvfs_p_state=7"


@dataclass(frozen=True)
class FlagSet:
    flags: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def process_env(self) -> tuple[tuple[str, str], ...]:
        return (("LIBTPU_INIT_ARGS", " ".join(self.flags)), *sorted(self.env.items()))


PREMAPPED = str(64 << 30)
GEMM_FLAGS = FlagSet(
    (
        "--xla_tpu_enable_async_collective_fusion=true",
        "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true",
        "--xla_tpu_enable_async_collective_fusion_multiple_steps=true",
        "--xla_tpu_overlap_compute_collective_tc=true",
        "--xla_enable_async_all_gather=true",
        "--xla_enable_async_collective_permute=true",
        "--xla_tpu_enable_all_experimental_scheduler_features=true",
        "--xla_tpu_accumulate_into_mrb=true",
        "--xla_tpu_scoped_vmem_limit_kib=65536",
        "--xla_tpu_vmem_scavenging_mode=NONE",
        DVFS,
    )
)
HOST_FLAGS = FlagSet(
    (DVFS,),
    {
        "TPU_PREMAPPED_BUFFER_SIZE": PREMAPPED,
        "TPU_PREMAPPED_BUFFER_TRANSFER_THRESHOLD_BYTES": PREMAPPED,
    },
)
# keyed as upstream's file is; names upstream has no entry for run with the environment as it is
TPU_FLAGS: dict[str, FlagSet] = {
    "gemm_generalized": GEMM_FLAGS,
    "quantization": GEMM_FLAGS,
    "all_reduce": FlagSet(
        (
            "--xla_jf_debug_level=3",
            "--xla_sc_disable_megacore_partitioning=true",
            "--xla_tpu_disable_sparse_core_collective_offload_remover=true",
            "--xla_tpu_enable_all_reduce_offload_tracing=true",
            "--xla_tpu_enable_all_reduce_scatter_fusion=false",
            "--xla_tpu_enable_sparse_core_collective_offload_all_reduce=true",
            "--xla_tpu_pad_operations_input_tiles=true",
            "--xla_tpu_sparse_core_all_reduce_offload_min_size_in_bytes=0",
            "--xla_tpu_use_tc_device_shape_on_sc=true",
            DVFS,
        )
    ),
    "psum_scatter": FlagSet(
        (
            "--xla_jf_debug_level=3",
            "--xla_sc_disable_megacore_partitioning=true",
            "--xla_tpu_disable_sparse_core_collective_offload_remover=true",
            "--xla_tpu_enable_reduce_scatter_offload_tracing=true",
            "--xla_tpu_enable_sparse_core_collective_offload_nd_reduce_scatter=true",
            "--xla_tpu_enable_sparse_core_collective_offload_reduce_scatter=true",
            "--xla_tpu_enable_sparse_core_reduce_scatter_v2=true",
            "--xla_tpu_use_tc_device_shape_on_sc=true",
            "--xla_tpu_enable_3d_reduce_scatter_decomposer=false",
            DVFS,
            "--xla_tpu_use_single_sparse_core_for_reduce_scatter_offload=false",
            "--xla_tpu_enable_sparse_core_reduce_scatter_padding=true",
        )
    ),
    "all_gather": FlagSet(
        (
            "--xla_jf_debug_level=3",
            "--xla_sc_disable_megacore_partitioning=true",
            "--xla_tpu_disable_sparse_core_collective_offload_remover=true",
            "--xla_tpu_enable_all_gather_offload_tracing=true",
            "--xla_tpu_enable_sparse_core_collective_offload_2d_all_gather=true",
            "--xla_tpu_enable_sparse_core_collective_offload_3d_all_gather=true",
            "--xla_tpu_enable_sparse_core_collective_offload_all_gather=true",
            "--xla_tpu_use_single_sparse_core_for_all_gather_offload=true",
            "--xla_tpu_use_tc_device_shape_on_sc=true",
            DVFS,
            "--xla_tpu_scoped_vmem_limit_kib=65536",
        )
    ),
    "all_to_all": FlagSet(("--xla_jf_debug_level=3", DVFS)),
    "device_to_device": FlagSet(
        (
            "--xla_tpu_collect_sflag_wait_stats_trace=true",
            "--xla_tpu_force_global_barriers=true",
            DVFS,
        )
    ),
    "hbm_bandwidth": FlagSet(
        (
            "--xla_tpu_scoped_vmem_limit_kib=65536",
            "--xla_jf_bounds_check=false",
            DVFS,
            "--xla_tpu_enable_llo_profiling=true",
            "--xla_jf_profile_cheap_ops=true",
        )
    ),
    "host_to_device": HOST_FLAGS,
    "device_to_host": HOST_FLAGS,
}


def process_env(benchmark: V2Benchmark[Any]) -> tuple[tuple[str, str], ...]:
    """The environment a benchmark's process starts with on a TPU host (empty: the current one)."""
    return TPU_FLAGS[benchmark.flags].process_env() if benchmark.flags else ()
