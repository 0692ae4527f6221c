"""The jax-bench harness's benchmarks (its v2 dialect) as this project's ops.

Each of upstream's names is one `V2Benchmark`: its fields as upstream's Config declares them (names,
defaults, order), which of our ops runs it and with which parameters, upstream's class name and run id,
and the metrics its `summary.csv` reports. The math is ours (float64-checked, correct FLOP and byte
models); where upstream's figure differs, docs/jax_bench.md says how. Registration is one
`register_v2(...)`; the dialect (config/jax_bench.py) and the summary sink read this table only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from microbench.catalogue import Param
from microbench.errors import UserError, did_you_mean
from microbench.ops import collectives
from microbench.platform.dtypes import dtype

Fields = Mapping[str, Any]  # one case's fields, upstream's names, defaults filled in

# Every upstream Config starts with these (BaseBenchmarkParams), in this order.
BASE_FIELDS = (
    Param("warmup_tries", "int", 10, doc="untimed calls before timing"),
    Param("num_runs", "int", 10, doc="timed calls, at least"),
    Param("min_duration_s", "float", 0.0, doc="keep timing until this many seconds have passed"),
    Param("xprof_timing", "bool", False, doc="keep the device trace (device time is used anyway)"),
    Param("xprof_dir", "str", "/tmp/tensorboard", doc="where traces go when xprof_timing is on"),
    Param("system", "str", "", doc="a hardware preset for the roofline (ironwood, gfc)"),
    Param("use_trace_roofline", "bool", False, doc="add XLA's own FLOP and byte counts"),
    Param("hardware_stats", "mapping", None, doc="roofline peaks (what `hardware:` sets)"),
    Param("dtype", "dtype", "bfloat16", doc="what it sets differs per benchmark"),
)


# This project's keys, allowed in a v2 entry (and on a one-off command line) beside upstream's fields.
OURS_AS_PARAMS = (
    Param("backend", "str", "jax", doc="jax, torch (a list in YAML): the PyTorch twin too"),
    Param("implementation", "str", None, doc="one of the op's registered implementations"),
    Param("timeout_s", "float", None, doc="stop a case after this long"),
    Param("check", "str", "strict", doc="strict, flag or off: the float64 check"),
    Param("timer", "str", "auto", doc="a registered timer; auto: device time where there is one"),
    Param("cache", "str", "cold", doc="cold: caches flushed before each iteration; warm"),
    Param("cadence", "str", "blocked", doc="blocked or sustained"),
    Param("threads", "int", None, doc="host threads of PyTorch's CPU ops"),
    Param("target_precision", "float", None, doc="time until the median is known within +-this"),
    Param("max_runs", "int", 10_000, doc="with target_precision: at most this many iterations"),
    Param("max_time_s", "float", 10.0, doc="with target_precision: at most this long timing"),
    Param("inputs", "str", "fixed", doc="rotate: input_sets sets cycled through the iterations"),
    Param("input_sets", "int", 4, doc="with inputs: rotate, how many sets"),
)
OURS = tuple(p.name for p in OURS_AS_PARAMS)


@dataclass(frozen=True)
class Figures:
    """What a benchmark's metrics are computed from: the case's fields, our models, and a time."""

    fields: Fields
    flops: float
    bytes: float
    seconds: float  # upstream's avg_ms (IQR-filtered mean), in seconds
    extras: Any = None  # the row's extras (a collective's group and traffic)


Metrics = Callable[[Figures], dict[str, Any]]


def _rate(amount: float, seconds: float, unit: float) -> float:
    return amount / seconds / unit if seconds > 0 else math.inf


def compute_metrics(total_flops: bool = True) -> Metrics:
    def metrics(f: Figures) -> dict[str, Any]:
        out: dict[str, Any] = {"tflops_per_sec": _rate(f.flops, f.seconds, 1e12)}
        if total_flops:
            out["total_flops"] = f.flops
        out["intensity"] = f.flops / f.bytes if f.bytes else 0.0
        return out

    return metrics


def intensity_metrics(f: Figures) -> dict[str, Any]:
    return {"intensity": f.flops / f.bytes if f.bytes else 0.0}


def hbm_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": _rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "intensity": f.flops / f.bytes if f.bytes else 0.0,
        "op_type": str(f.fields["op_type"]).lower(),
    }


def host_metrics(f: Figures) -> dict[str, Any]:
    """GiB/s, as upstream (and the Ironwood harness before it) reports host transfers."""
    mib = f.fields["data_size_mib"]
    return {"bandwidth_gb_s": _rate(mib / 1024, f.seconds, 1.0), "total_bytes_mib": mib}


def d2d_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": _rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "src_device_index": f.fields["src_device_index"],
        "dst_device_index": f.fields["dst_device_index"],
        "direction": f.fields["direction"],
    }


def collective_metrics(size_key: str, size: Callable[[Fields], float]) -> Metrics:
    """bandwidth_gb_s is upstream's traffic over time, which is nccl-tests' bus bandwidth (0 for a
    group of one); the size column is one device's block (or reduce-scatter's output) in MB."""

    def metrics(f: Figures) -> dict[str, Any]:
        e = f.extras
        group = getattr(e, "group_device_count", 0) or 0
        bus = getattr(e, "message_bytes", 0) * getattr(e, "bus_factor_ratio", 0.0)
        return {
            "bandwidth_gb_s": _rate(bus, f.seconds, 1e9) if group > 1 else 0.0,
            size_key: size(f.fields) / 1e6,
        }

    return metrics


@dataclass(frozen=True)
class V2Benchmark:
    name: str
    class_name: str  # upstream's `benchmark` column
    fields: tuple[Param, ...]  # after BASE_FIELDS, in upstream's order
    op: Callable[[Fields], str]  # which of our ops runs a case
    translate: Callable[[Fields], dict[str, Any]]  # the case's fields -> our op's parameters
    run_id: Callable[[Fields], str]
    metrics: Metrics
    flags: str | None = None  # its TPU flag set (TPU_FLAGS), upstream's op_flags.yaml key
    peak_dtype: Callable[[Fields], str] = lambda f: str(f["dtype"])
    hbm_traffic: bool = True  # compared with the HBM curve (not interconnect or host traffic)
    ignores_dtype: bool = False  # upstream's op takes no dtype from the config
    notes: str = ""  # how it departs from upstream, for docs and `list`
    every_pair: bool = False  # no pair given: one case per ordered pair of devices (upstream's D2D)

    @property
    def all_fields(self) -> tuple[Param, ...]:
        """Base fields then its own, as upstream's dataclass orders them (a redeclared base field
        keeps the base position)."""
        own = {p.name: p for p in self.fields}
        base = tuple(own.get(p.name, p) for p in BASE_FIELDS)
        return (*base, *(p for p in self.fields if p.name not in {b.name for b in BASE_FIELDS}))


V2: dict[str, V2Benchmark] = {}


def register_v2(benchmark: V2Benchmark) -> V2Benchmark:
    if benchmark.name in V2:
        raise ValueError(f"jax-bench benchmark {benchmark.name!r} registered twice")
    V2[benchmark.name] = benchmark
    return benchmark


def get_v2(name: str, where: str) -> V2Benchmark:
    if name not in V2:
        raise UserError(
            f"unknown benchmark '{name}' (jax-bench names: {', '.join(V2)})",
            key=where,
            suggestion=did_you_mean(str(name), V2),
        )
    return V2[name]


def _bool(value: Any) -> str:
    return "True" if value else "False"


def _fixed(op: str) -> Callable[[Fields], str]:
    return lambda f: op


MODE = Param("mode", "choice", "fwd", ("fwd", "bwd"), "ours: bwd times the backward (cop.yaml)")

# ---- compute ----------------------------------------------------------------------------------------

register_v2(
    V2Benchmark(
        "gemm_generalized",
        "GeneralizedGemmBenchmark",
        (
            Param("m", "dim", 1024),
            Param("k", "dim", 1024),
            Param("n", "dim", 1024),
            Param("in_dtype", "dtype", "float8_e4m3fn"),
            Param("out_dtype", "dtype", "bfloat16"),
            Param("seed", "int", 0),
            Param("use_scaling_factors", "bool", False),
            Param("transpose_a", "bool", False),
            Param("transpose_b", "bool", False),
            Param("alpha", "float", 1.0),
            Param("beta", "float", 0.0),
        ),
        _fixed("gemm_generalized"),
        lambda f: {
            k: f[k]
            for k in (
                "m",
                "k",
                "n",
                "in_dtype",
                "out_dtype",
                "seed",
                "use_scaling_factors",
                "transpose_a",
                "transpose_b",
                "alpha",
                "beta",
            )
        },
        lambda f: (
            f"m_{f['m']}_k_{f['k']}_n_{f['n']}_{f['in_dtype']}_to_{f['out_dtype']}"
            f"_ta_{_bool(f['transpose_a'])}_tb_{_bool(f['transpose_b'])}_alpha_{float(f['alpha'])}"
            + (f"_beta_{float(f['beta'])}" if f["beta"] else "")
            + ("_sf" if f["use_scaling_factors"] else "")
        ),
        compute_metrics(),
        flags="gemm",
        peak_dtype=lambda f: str(f["in_dtype"]),
        notes="fp32 accumulation (upstream's product is in_dtype-typed); scaling works for fp8",
    )
)
register_v2(
    V2Benchmark(
        "quantization",
        "QuantizationBenchmark",
        (Param("m", "dim", 4096), Param("n", "dim", 4096)),
        _fixed("quantization"),
        lambda f: {"m": f["m"], "n": f["n"], "qdtype": "float8_e4m3fn"},
        lambda f: f"m_{f['m']}_n_{f['n']}",
        intensity_metrics,
        flags="gemm",
        ignores_dtype=True,
        notes="fp32 per-row scales with saturation (upstream: bf16 scales, no clamp); 2mn+m FLOPs",
    )
)


def _layer(
    name: str, class_name: str, fwd: str, bwd: str | None, n: Callable[[Fields], int]
) -> None:
    register_v2(
        V2Benchmark(
            name,
            class_name,
            (Param("batch", "dim", 1024), Param("dim", "dim", 4096), MODE),
            (lambda f: bwd if f["mode"] == "bwd" and bwd else fwd),
            lambda f: {"m": f["batch"], "n": n(f)},
            lambda f: f"batch_{f['batch']}_dim_{f['dim']}",
            intensity_metrics,
            ignores_dtype=True,
            notes="`mode: bwd` is ours (upstream's cop.yaml asks for it): the backward pass",
        )
    )


_layer("swiglu", "SwiGLUBenchmark", "swiglu_fwd", "swiglu_bwd", lambda f: 2 * f["dim"])
_layer("rmsnorm", "RMSNormBenchmark", "rmsnorm_fwd", "rmsnorm_bwd", lambda f: f["dim"])
register_v2(
    V2Benchmark(
        "sigmoid",
        "SigmoidBenchmark",
        (Param("batch", "dim", 1024), Param("dim", "dim", 4096), MODE),
        lambda f: "sigmoid_bwd" if f["mode"] == "bwd" else "inference_sigmoid",
        lambda f: {"m": f["batch"], "n": f["dim"], "dtype": f["dtype"]},
        lambda f: f"batch_{f['batch']}_dim_{f['dim']}",
        intensity_metrics,
        notes="not registered upstream (its cop.yaml names it); runs here in `dtype`",
    )
)
register_v2(
    V2Benchmark(
        "rope",
        "RoPEBenchmark",
        (
            Param("seq_len", "dim", 1024),
            Param("head_dim", "dim", 128),
            Param("batch", "dim", 32),
            Param("heads", "dim", 32),
        ),
        _fixed("rope"),
        lambda f: {k: f[k] for k in ("batch", "heads", "seq_len", "head_dim")},
        lambda f: f"b_{f['batch']}_h_{f['heads']}_s_{f['seq_len']}_d_{f['head_dim']}",
        intensity_metrics,
        ignores_dtype=True,
        notes="fp32 (re, im) pairs with distinct real and imaginary parts (upstream: equal ones)",
    )
)
register_v2(
    V2Benchmark(
        "simple_add",
        "AddBenchmark",
        (Param("size", "elements", 1048576),),
        _fixed("simple_add"),
        lambda f: {"size": f["size"], "dtype": "bfloat16"},
        lambda f: f"size_{f['size']}",
        intensity_metrics,
        ignores_dtype=True,
        notes="x and y differ (upstream draws both from one key)",
    )
)
register_v2(
    V2Benchmark(
        "attention_flashed",
        "AttentionBenchmark",
        (
            Param("mode", "choice", "fwd", ("fwd", "bwd")),
            Param("causal", "bool", True),
            Param("batch", "dim", 1),
            Param("seq_len", "dim", 8192),
            Param("num_q_heads", "dim", 56),
            Param("num_kv_heads", "dim", 56),
            Param("head_dim", "dim", 128),
        ),
        _fixed("tokamax_splash_attention"),
        lambda f: {
            "batch_size": f["batch"],
            "q_seq_len": f["seq_len"],
            "kv_seq_len": f["seq_len"],
            "q_heads": f["num_q_heads"],
            "kv_heads": f["num_kv_heads"],
            "qk_head_dim": f["head_dim"],
            "v_head_dim": f["head_dim"],
            "mode": f["mode"],
            "causal": f["causal"],
            "dtype": f["dtype"],
        },
        lambda f: (
            f"b_{f['batch']}_s_{f['seq_len']}_hq_{f['num_q_heads']}"
            f"_hkv_{f['num_kv_heads']}_d_{f['head_dim']}"
        ),
        compute_metrics(),
        notes="attends over the sequence (upstream's layout attends over heads); FLOPs with batch",
    )
)
register_v2(
    V2Benchmark(
        "transformer_layer_moe",
        "TransformerLayerMoE",
        (
            Param("model_dim", "dim", 7168),
            Param("mslen", "dim", 1024),
            Param("tp", "int", 1, doc="ours: tensor parallel over tp devices"),
            Param("etp", "int", 1, doc="ours: expert tensor parallel (the layer has no experts)"),
            Param("cp", "int", 1, doc="ours: context parallel over cp devices"),
            Param("ep", "int", 1, doc="ours: expert parallel (the layer has no experts)"),
        ),
        _fixed("transformer_layer_moe"),
        lambda f: {k: f[k] for k in ("model_dim", "mslen", "dtype", "tp", "cp", "ep", "etp")},
        lambda f: f"dim_{f['model_dim']}_len_{f['mslen']}",
        compute_metrics(total_flops=False),
        notes="20 mslen D^2 FLOPs (upstream reports 24); tp/cp shard the layer",
    )
)

# ---- memory and transfers ---------------------------------------------------------------------------

register_v2(
    V2Benchmark(
        "hbm_bandwidth",
        "HBMBandwidthBenchmark",
        (
            Param("op_type", "str", "copy", doc="copy, scale, add or triad (any case)"),
            Param("size", "elements", 134217728, doc="elements per array, not bytes"),
            Param("device_id", "int", 0),
        ),
        _fixed("hbm_bandwidth"),
        lambda f: {
            "op_type": str(f["op_type"]).lower(),
            "size": f["size"],
            "dtype": f["dtype"],
            "device": f["device_id"],
        },
        lambda f: f"{str(f['op_type']).lower()}_dim_{f['size']}_dev_{f['device_id']}",
        hbm_metrics,
        flags="hbm_bandwidth",
        notes="copy is a copy (upstream's computes x + 1, the same traffic)",
    )
)


def _host(name: str, class_name: str, direction: str) -> None:
    register_v2(
        V2Benchmark(
            name,
            class_name,
            (Param("data_size_mib", "mib", 64),),
            _fixed("host_device"),
            lambda f: {"data_size_mib": f["data_size_mib"], "direction": direction},
            lambda f: f"size_{f['data_size_mib']}mib",
            host_metrics,
            flags="host_device",
            hbm_traffic=False,
            ignores_dtype=True,
            notes="JAX: wall clock of the blocked copy (no device event); torch: CUPTI device time",
        )
    )


_host("host_to_device", "HostToDeviceBenchmark", "h2d")
_host("device_to_host", "DeviceToHostBenchmark", "d2h")
register_v2(
    V2Benchmark(
        "device_to_device",
        "DeviceToDeviceBenchmark",
        (
            Param("data_size_mib", "mib", 1024),
            Param("direction", "choice", "uni", ("uni", "bi")),
            Param("seed", "int", 0),
            # ours: one pair; left out, every ordered pair of the devices (as upstream)
            Param("src_device_index", "int", -1, doc="ours: the sender (default: every pair)"),
            Param("dst_device_index", "int", -1, doc="ours: the receiver"),
        ),
        _fixed("device_to_device"),
        lambda f: {
            "data_size_mib": f["data_size_mib"],
            "direction": f["direction"],
            "source_id": f["src_device_index"],
            "target_id": f["dst_device_index"],
            "dtype": f["dtype"],
            "seed": f["seed"],
        },
        lambda f: (
            f"d2d_{f['src_device_index']}_to_{f['dst_device_index']}_{f['direction']}"
            f"_{f['data_size_mib']}mib"
        ),
        d2d_metrics,
        flags="device_to_device",
        hbm_traffic=False,
        every_pair=True,
        notes="src/dst_device_index pick one pair (upstream: always every ordered pair)",
    )
)

# ---- collectives ------------------------------------------------------------------------------------

COLLECTIVE_FIELDS = (
    Param("mesh_shape", "str", "", doc="'AxBxC': the devices' grid (default: one axis of all)"),
    Param("sharding_strategy", "str", "", doc="'axbxc': axes with an entry > 1 form the groups"),
    Param("matrix_dim", "dim", 1024, doc="rows of 8x128 in one device's block"),
    Param("seed", "int", 0),
)


def block_bytes(f: Fields) -> float:
    return f["matrix_dim"] * collectives.TILE * dtype(f["dtype"]).nbytes


def _mesh(f: Fields) -> dict[str, Any]:
    """Our mesh parameters: ici_size is the mesh's device count (all devices when no mesh is given,
    which the dialect fills in before translating)."""
    shape = str(f["mesh_shape"] or "")
    ici = math.prod(collectives.dims(shape, "mesh_shape")) if shape else f["device_count"]
    return {
        "ici_size": ici,
        "mesh_shape": shape,
        "sharding_strategy": str(f["sharding_strategy"] or ""),
        "dtype": f["dtype"],
        "seed": f["seed"],
    }


def _collective(
    name: str,
    class_name: str,
    op: str,
    extra: tuple[Param, ...] = (),
    sized: Callable[[Fields], dict[str, Any]] = lambda f: {"matrix_dim": f["matrix_dim"]},
    size_key: str = "shard_size_mb",
    size: Callable[[Fields], float] = block_bytes,
    run_id: Callable[[Fields], str] = lambda f: f"dim_{f['matrix_dim']}",
    flags: str | None = None,
) -> None:
    register_v2(
        V2Benchmark(
            name,
            class_name,
            (*COLLECTIVE_FIELDS, *extra),
            _fixed(op),
            lambda f: {**_mesh(f), **sized(f), **{p.name: str(f[p.name]).lower() for p in extra}},
            run_id,
            collective_metrics(size_key, size),
            flags=flags or name,
            hbm_traffic=False,
            notes="a mesh the devices cannot fill is an unsupported row (upstream: a silent 1-D mesh)",
        )
    )


_collective(
    "all_reduce",
    "AllReduceBenchmark",
    "all_reduce",
    extra=(Param("reduce_op", "str", "sum", doc="sum, mean, max or min (any case)"),),
    run_id=lambda f: f"dim_{f['matrix_dim']}_op_{str(f['reduce_op']).lower()}",
)
_collective("all_gather", "AllGatherBenchmark", "all_gather")
_collective("all_to_all", "AllToAllBenchmark", "all_to_all", size_key="local_size_mb")
# upstream's (N, D, 256) input is N blocks of D*256 elements: ours as rows of 128
_collective(
    "reduce_scatter",
    "ReduceScatterBenchmark",
    "psum_scatter",
    sized=lambda f: {"num_elements": f["matrix_dim"] * 256},
    size=lambda f: f["matrix_dim"] * 256 * dtype(f["dtype"]).nbytes,
    flags="psum_scatter",
)

# ---- TPU flags (upstream's op_flags.yaml): libtpu reads them once, when its process starts ----------

DVFS = "--xla_tpu_dvfs_p_state=7"
OFFLOAD = (
    "--xla_jf_debug_level=3",
    "--xla_sc_disable_megacore_partitioning=true",
    "--xla_tpu_disable_sparse_core_collective_offload_remover=true",
    "--xla_tpu_use_tc_device_shape_on_sc=true",
)


@dataclass(frozen=True)
class FlagSet:
    flags: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def process_env(self) -> tuple[tuple[str, str], ...]:
        return (("LIBTPU_INIT_ARGS", " ".join(self.flags)), *sorted(self.env.items()))


PREMAPPED = str(64 << 30)
TPU_FLAGS: dict[str, FlagSet] = {
    "gemm": FlagSet(
        (
            "--xla_tpu_enable_async_collective_fusion=false",
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
    ),
    "all_reduce": FlagSet(
        (
            *OFFLOAD,
            "--xla_tpu_enable_all_reduce_offload_tracing=true",
            "--xla_tpu_enable_all_reduce_scatter_fusion=false",
            "--xla_tpu_enable_sparse_core_collective_offload_all_reduce=true",
            "--xla_tpu_pad_operations_input_tiles=true",
            "--xla_tpu_sparse_core_all_reduce_offload_min_size_in_bytes=0",
            DVFS,
        )
    ),
    "psum_scatter": FlagSet(
        (
            *OFFLOAD,
            "--xla_tpu_enable_reduce_scatter_offload_tracing=true",
            "--xla_tpu_enable_sparse_core_collective_offload_nd_reduce_scatter=true",
            "--xla_tpu_enable_sparse_core_collective_offload_reduce_scatter=true",
            "--xla_tpu_enable_sparse_core_reduce_scatter_v2=true",
            "--xla_tpu_enable_3d_reduce_scatter_decomposer=false",
            "--xla_tpu_use_single_sparse_core_for_reduce_scatter_offload=false",
            "--xla_tpu_enable_sparse_core_reduce_scatter_padding=true",
            DVFS,
        )
    ),
    "all_gather": FlagSet(
        (
            *OFFLOAD,
            "--xla_tpu_enable_all_gather_offload_tracing=true",
            "--xla_tpu_enable_sparse_core_collective_offload_2d_all_gather=true",
            "--xla_tpu_enable_sparse_core_collective_offload_3d_all_gather=true",
            "--xla_tpu_enable_sparse_core_collective_offload_all_gather=true",
            "--xla_tpu_use_single_sparse_core_for_all_gather_offload=true",
            "--xla_tpu_scoped_vmem_limit_kib=65536",
            DVFS,
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
            "--xla_tpu_enable_llo_profiling=true",
            DVFS,
        )
    ),
    "host_device": FlagSet(
        (DVFS,),
        {
            "TPU_PREMAPPED_BUFFER_SIZE": PREMAPPED,
            "TPU_PREMAPPED_BUFFER_TRANSFER_THRESHOLD_BYTES": PREMAPPED,
        },
    ),
}


def process_env(benchmark: V2Benchmark) -> tuple[tuple[str, str], ...]:
    """The environment a benchmark's process starts with on a TPU host (empty: the current one)."""
    return TPU_FLAGS[benchmark.flags].process_env() if benchmark.flags else ()
