"""The TPU flags upstream's op_flags.yaml gives each benchmark: libtpu reads them once, when its
process starts, so a case carries them as its process's environment (`process_env`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import Any

from accelbench.benchmarks.base import TPUMS, V2, Benchmark, Upstream
from accelbench.core.case import Case
from accelbench.errors import UserError, visible

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


def process_env(benchmark: Benchmark[Any]) -> tuple[tuple[str, str], ...]:
    """The environment a benchmark's process starts with on a TPU host (empty: the current one)."""
    return TPU_FLAGS[benchmark.flags].process_env() if benchmark.flags else ()


def flag_sets(path: str) -> dict[str, FlagSet]:
    """--xla_flags_file_path: per benchmark name, a list of flags or `{flags: [...], env: {...}}`
    (both forms upstream's op_flags.yaml has used), replacing the packaged sets. A name no
    benchmark has is said (its flags are never used); an env value must be a string or a number."""
    from accelbench.config.yaml_reader import read_yaml

    data = read_yaml(path)
    if not isinstance(data, dict):
        raise UserError("must be a YAML mapping of benchmark name to flags", key=path)
    out = {}
    for name, entry in data.items():
        out[str(name)] = _flag_set(entry, f"{path}: {name}")
        if str(name) not in (*TPUMS, *V2, *TPU_FLAGS):
            print(
                visible(f"warning: {path}: {name}: names no benchmark: its flags are never used"),
                file=sys.stderr,
            )
    return out


def _flag_set(entry: Any, where: str) -> FlagSet:
    if isinstance(entry, dict):
        if extra := sorted(set(entry) - {"flags", "env"}):
            raise UserError(f"{extra[0]}: an entry holds flags and env only", key=where)
        flags, env = entry.get("flags") or [], entry.get("env") or {}
    else:
        flags, env = entry, {}
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise UserError("flags must be a list of strings", key=where)
    if not isinstance(env, dict):
        raise UserError("env must be a mapping", key=where)
    for key, value in env.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            kind = type(value).__name__
            raise UserError(f"env {key}: must be a string or a number, got a {kind}", key=where)
    return FlagSet(tuple(flags), {str(k): str(v) for k, v in env.items()})


def with_flags(cases: list[Case], sets: dict[str, FlagSet]) -> list[Case]:
    """Each case's TPU flags from the file (by its TPUMS name, else its jax-bench one); none where
    the file names neither, as upstream passes none."""
    out = []
    for case in cases:
        origin = case.origin
        names = (origin.name, origin.benchmark.name) if isinstance(origin, Upstream) else ()
        chosen = next((sets[n] for n in names if n in sets), None)
        out.append(replace(case, process_env=chosen.process_env() if chosen else ()))
    return out
