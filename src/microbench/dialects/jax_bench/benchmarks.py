"""The jax-bench harness's benchmarks (its v2 dialect) as this project's ops.

Each of upstream's names is one `V2Benchmark`: its fields exactly as upstream's Config declares them
(names, defaults, order: they are summary.csv's first columns), this project's extra fields (written
after upstream's columns), which of our ops runs a case and with which parameters, where upstream puts
the work (`place`: its conditions), upstream's FLOP and byte models and metrics, its class name, run id
and TPU flag set. Our ops keep their own (float64-checked, tested) models; upstream's are here so
upstream's columns mean what they mean upstream (docs/jax_bench.md lists every departure).
Registration is one `register_v2(...)`; the dialect (config/jax_bench.py) and the summary sink read this
table only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from microbench.catalogue import Param, case_choice_params, run_setting_params
from microbench.dialects.jax_bench.flags import CONDITIONS_CHOICES
from microbench.errors import UserError, did_you_mean
from microbench.ops import collectives
from microbench.platform.dtypes import dtype
from microbench.registry import register_once

Fields = Mapping[str, Any]  # one case's fields, upstream's names, defaults filled in

# Every upstream Config starts with these (BaseBenchmarkParams), in this order.
BASE_FIELDS = (
    Param("warmup_tries", "int", 10, doc="untimed calls before timing"),
    Param("num_runs", "int", 10, doc="timed calls, at least"),
    Param("min_duration_s", "float", 0.0, doc="keep timing until this many seconds have passed"),
    Param(
        "xprof_timing", "bool", False, doc="trace the timed loop: xprof_* columns, rates from them"
    ),
    Param("xprof_dir", "str", "/tmp/tensorboard", doc="where traces go when xprof_timing is on"),
    Param("system", "str", "", doc="a hardware preset for the roofline (ironwood, gfc)"),
    Param("use_trace_roofline", "bool", False, doc="add the compiler's own FLOP and byte counts"),
    Param("hardware_stats", "mapping", None, doc="roofline peaks (what `hardware:` sets)"),
    Param("dtype", "jnp_dtype", "bfloat16", doc="what it sets differs per benchmark"),
)


# This project's keys, allowed in a v2 entry (and on a one-off command line) beside upstream's fields:
# the conditions, the backends and implementations, and every run setting upstream has no name for
OURS_AS_PARAMS = (
    Param(
        "conditions",
        "choice",
        "upstream",
        CONDITIONS_CHOICES,
        "upstream: warm caches, all local devices as jax-bench places the work; strict: cold, one",
    ),
    *case_choice_params("jax"),
    # upstream's own fields say num_runs, warmup_tries and min_duration_s
    *run_setting_params(leave_out=("num_runs", "warmup", "min_duration_s")),
)
OURS = tuple(p.name for p in OURS_AS_PARAMS)


@dataclass(frozen=True)
class Figures:
    """What upstream's metrics are computed from: the case's fields, upstream's models, a time, and
    the collective's group size (upstream's N)."""

    fields: Fields
    flops: float
    bytes: float
    seconds: float  # upstream's avg_ms (or xprof_avg_ms), in seconds
    group: int = 1


Metrics = Callable[[Figures], dict[str, Any]]
Model = Callable[[Fields, int], float]  # (fields, group size) -> FLOPs or bytes, upstream's count


def itemsize(name: str) -> int:
    """Bytes per element as jax.numpy counts them (a 4-bit type takes a byte)."""
    return int(np.dtype(dtype(name).numpy).itemsize)


def _rate(amount: float, seconds: float, unit: float) -> float:
    return amount / seconds / unit if seconds > 0 else math.inf


def intensity(f: Figures) -> float:
    return f.flops / f.bytes if f.bytes else 0.0


def compute_metrics(total_flops: bool = True) -> Metrics:
    def metrics(f: Figures) -> dict[str, Any]:
        out: dict[str, Any] = {"tflops_per_sec": _rate(f.flops, f.seconds, 1e12)}
        if total_flops:
            out["total_flops"] = f.flops
        out["intensity"] = intensity(f)
        return out

    return metrics


def intensity_metrics(f: Figures) -> dict[str, Any]:
    return {"intensity": intensity(f)}


def hbm_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": _rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "intensity": intensity(f),
        "op_type": str(f.fields["op_type"]).lower(),
    }


def host_metrics(f: Figures) -> dict[str, Any]:
    """GiB/s, as upstream (and the Ironwood harness before it) reports host transfers."""
    mib = f.fields["data_size_mib"]
    return {"bandwidth_gb_s": _rate(mib / 1024, f.seconds, 1.0), "total_bytes_mib": float(mib)}


def d2d_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": _rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "src_device_index": f.fields["src_device_index"],
        "dst_device_index": f.fields["dst_device_index"],
        "direction": f.fields["direction"],
    }


def collective_metrics(size_key: str, size: Callable[[Fields], float]) -> Metrics:
    """bandwidth_gb_s: the bytes upstream counts as transferred over time (nccl-tests' bus bandwidth),
    0 for a group of one; the size column is one device's block (reduce-scatter: its output)."""

    def metrics(f: Figures) -> dict[str, Any]:
        return {
            "bandwidth_gb_s": f.bytes / (f.seconds * 1e9) if f.group > 1 and f.seconds else 0.0,
            size_key: size(f.fields) / 1e6,
        }

    return metrics


# (fields, the local device count, asked only where needed) -> our op's placement parameters
Placement = Callable[[Fields, Callable[[], int]], dict[str, Any]]


def one_device(f: Fields, devices: Callable[[], int]) -> dict[str, Any]:
    return {}


def replicated(f: Fields, devices: Callable[[], int]) -> dict[str, Any]:
    """Upstream's compute ops: the whole op on every local device at once (a fully replicated
    PartitionSpec); rates are per device."""
    return {"sharding": "replicated"}


@dataclass(frozen=True)
class V2Benchmark:
    name: str
    class_name: str  # upstream's `benchmark` column
    fields: tuple[Param, ...]  # after BASE_FIELDS, in upstream's order: summary.csv's columns
    op: Callable[[Fields], str]  # which of our ops runs a case
    translate: Callable[[Fields], dict[str, Any]]  # the case's fields -> our op's parameters
    run_id: Callable[[Fields], str]
    flops: Model  # upstream's FLOP count (the analytic one its metrics and roofline use)
    bytes: Model  # upstream's get_total_bytes
    metrics: Metrics
    ours: tuple[Param, ...] = ()  # this project's fields (written after upstream's columns)
    place: Placement = one_device  # upstream's conditions: where the work goes
    implementation: str | None = None  # upstream's conditions: the implementation upstream runs
    flags: str | None = None  # its TPU flag set (TPU_FLAGS): upstream's op_flags.yaml key
    peak_dtype: Callable[[Fields], str] = lambda f: str(f["dtype"])
    notes: str = ""  # how it departs from upstream, for docs and `list`
    every_pair: bool = False  # no pair given: one case per ordered pair of devices (upstream's D2D)
    collective: bool = False  # a mesh and a group over the devices (upstream's N)
    tpums_only: bool = False  # TPUMS's name, not jax-bench's: planned for TPUMS files only

    @property
    def upstream_fields(self) -> tuple[Param, ...]:
        """Base fields then its own, as upstream's dataclass orders them (a redeclared base field
        keeps the base position)."""
        own = {p.name: p for p in self.fields}
        base = tuple(own.get(p.name, p) for p in BASE_FIELDS)
        return (*base, *(p for p in self.fields if p.name not in {b.name for b in BASE_FIELDS}))

    @property
    def all_fields(self) -> tuple[Param, ...]:
        return (*self.upstream_fields, *self.ours)


V2: dict[str, V2Benchmark] = {}


def register_v2(benchmark: V2Benchmark) -> V2Benchmark:
    return register_once(V2, benchmark.name, benchmark, "jax-bench benchmark")


def jax_bench_names() -> list[str]:
    return [name for name, bench in V2.items() if not bench.tpums_only]


def get_v2(name: str, where: str, tpums: bool = False) -> V2Benchmark:
    """A jax-bench name's entry (with `tpums`, TPUMS's own ones too)."""
    if name not in V2 or (V2[name].tpums_only and not tpums):
        raise UserError(
            f"unknown benchmark '{name}' (jax-bench names: {', '.join(jax_bench_names())})",
            key=where,
            suggestion=did_you_mean(str(name), jax_bench_names()),
        )
    return V2[name]


def _fixed(op: str) -> Callable[[Fields], str]:
    return lambda f: op


def _same(*names: str) -> Callable[[Fields], dict[str, Any]]:
    return lambda f: {k: f[k] for k in names}


def _per_element(
    flops: float, nbytes: float, count: Callable[[Fields], int]
) -> tuple[Model, Model]:
    """Models of an op upstream counts per element: flops and bytes each, over `count` elements."""
    return (lambda f, n: flops * count(f)), (lambda f, n: nbytes * count(f))


MODE = Param("mode", "choice", "fwd", ("fwd", "bwd"), "ours: bwd times the backward (cop.yaml)")

# ---- compute ----------------------------------------------------------------------------------------


def gemm_flops(f: Fields, n: int = 1) -> float:
    """2mnk, + 2mn for the scaling factors, + mn for alpha != 1, + mn for beta = 1 (2mn otherwise)."""
    m, k, nn = f["m"], f["k"], f["n"]
    flops = 2 * m * nn * k
    flops += 2 * m * nn if f["use_scaling_factors"] else 0
    flops += m * nn if f["alpha"] != 1.0 else 0
    if f["beta"] != 0.0:
        flops += m * nn if f["beta"] == 1.0 else 2 * m * nn
    return float(flops)


def gemm_bytes(f: Fields, n: int = 1) -> float:
    """A and B in in_dtype, the output in out_dtype, and C (when beta != 0) counted at out_dtype."""
    m, k, nn = f["m"], f["k"], f["n"]
    ins, out = itemsize(f["in_dtype"]), itemsize(f["out_dtype"])
    return float((m * k + k * nn) * ins + m * nn * out + (m * nn * out if f["beta"] != 0.0 else 0))


register_v2(
    V2Benchmark(
        "gemm_generalized",
        "GeneralizedGemmBenchmark",
        (
            Param("m", "dim", 1024),
            Param("k", "dim", 1024),
            Param("n", "dim", 1024),
            Param("in_dtype", "jnp_dtype", "float8_e4m3fn"),
            Param("out_dtype", "jnp_dtype", "bfloat16"),
            Param("seed", "int", 0),
            Param("use_scaling_factors", "bool", False),
            Param("transpose_a", "bool", False),
            Param("transpose_b", "bool", False),
            Param("alpha", "float", 1.0),
            Param("beta", "float", 0.0),
        ),
        _fixed("gemm_generalized"),
        _same(
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
        ),
        lambda f: (
            f"m_{f['m']}_k_{f['k']}_n_{f['n']}_{f['in_dtype']}_to_{f['out_dtype']}"
            f"_ta_{f['transpose_a']}_tb_{f['transpose_b']}_alpha_{f['alpha']}"
            + (f"_beta_{f['beta']}" if f["beta"] != 0.0 else "")
            + ("_sf" if f["use_scaling_factors"] else "")
        ),
        gemm_flops,
        gemm_bytes,
        compute_metrics(),
        place=replicated,
        flags="gemm_generalized",
        peak_dtype=lambda f: str(f["in_dtype"]),
        notes="fp32 accumulation (upstream's product is in_dtype-typed); scaling works for fp8",
    )
)
_quant_flops, _ = _per_element(4, 0, lambda f: f["m"] * f["n"])
register_v2(
    V2Benchmark(
        "quantization",
        "QuantizationBenchmark",
        (Param("m", "dim", 4096), Param("n", "dim", 4096)),
        _fixed("quantization"),
        lambda f: {"m": f["m"], "n": f["n"], "qdtype": "float8_e4m3fn"},
        lambda f: f"m_{f['m']}_n_{f['n']}",
        _quant_flops,  # 4 per element
        lambda f, n: float(f["m"] * f["n"] * 2 + f["m"] * f["n"] + 4 * f["m"]),  # X, Q, fp32 scales
        intensity_metrics,
        place=replicated,
        flags="quantization",
        notes="fp32 per-row scales with saturation (upstream: bf16 scales, no clamp)",
    )
)

LAYER_FIELDS = (Param("dim", "dim", 4096), Param("batch", "dim", 1024))


def _layer(
    name: str,
    class_name: str,
    fwd: str,
    bwd: str,
    width: Callable[[Fields], int],
    models: tuple[Model, Model],
) -> None:
    register_v2(
        V2Benchmark(
            name,
            class_name,
            LAYER_FIELDS,
            (lambda f: bwd if f["mode"] == "bwd" else fwd),
            lambda f: {"m": f["batch"], "n": width(f)},
            lambda f: f"batch_{f['batch']}_dim_{f['dim']}",
            *models,
            intensity_metrics,
            ours=(MODE,),
            place=replicated,
            notes="`mode: bwd` is ours (upstream's cop.yaml asks for it): the backward pass",
        )
    )


def _batch_dim(f: Fields) -> int:
    return int(f["batch"] * f["dim"])


# swiglu: 10 FLOPs per output element; X (batch, 2 dim) read and Y (batch, dim) written, bf16
_layer(
    "swiglu",
    "SwiGLUBenchmark",
    "swiglu_fwd",
    "swiglu_bwd",
    lambda f: 2 * f["dim"],
    _per_element(10, 6, _batch_dim),
)
# rmsnorm: 5 FLOPs per element; X read, Y written (bf16) and the dim weights read
_layer(
    "rmsnorm",
    "RMSNormBenchmark",
    "rmsnorm_fwd",
    "rmsnorm_bwd",
    lambda f: f["dim"],
    (lambda f, n: 5.0 * _batch_dim(f), lambda f, n: 4.0 * _batch_dim(f) + 2 * f["dim"]),
)
register_v2(
    V2Benchmark(
        "sigmoid",
        "SigmoidBenchmark",
        (Param("batch", "dim", 1024), Param("dim", "dim", 4096)),
        lambda f: "sigmoid_bwd" if f["mode"] == "bwd" else "inference_sigmoid",
        lambda f: {"m": f["batch"], "n": f["dim"], "dtype": f["dtype"]},
        lambda f: f"batch_{f['batch']}_dim_{f['dim']}",
        lambda f, n: 4.0 * _batch_dim(f),
        lambda f, n: 2.0 * _batch_dim(f) * itemsize(f["dtype"]),
        intensity_metrics,
        ours=(MODE,),
        place=replicated,
        notes="not registered upstream (its cop.yaml names it); runs here in `dtype`",
    )
)


def _rope_pairs(f: Fields) -> int:
    return int(f["batch"] * f["heads"] * f["seq_len"] * (f["head_dim"] // 2))


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
        _same("batch", "heads", "seq_len", "head_dim"),
        lambda f: f"b_{f['batch']}_h_{f['heads']}_s_{f['seq_len']}_d_{f['head_dim']}",
        # a complex multiply is 6 FLOPs; X read and Y written as complex64 (the table not counted)
        *_per_element(6, 16, _rope_pairs),
        intensity_metrics,
        place=replicated,
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
        *_per_element(1, 6, lambda f: f["size"]),  # one add; x, y read and z written, bf16
        intensity_metrics,
        place=replicated,
        notes="x and y differ (upstream draws both from one key)",
    )
)


def attention_flops(f: Fields, n: int = 1) -> float:
    """(4 S^2 - 2 S^2 causal) Hq D for the forward, twice that for `bwd`; no batch factor. An
    integer, as upstream's total_flops column holds it."""
    s, heads, d = f["seq_len"], f["num_q_heads"], f["head_dim"]
    flops = (4 * s * s - (2 * s * s if f["causal"] else 0)) * heads * d
    return flops * (2 if f["mode"] == "bwd" else 1)


def attention_bytes(f: Fields, n: int = 1) -> float:
    """Q, K, V and the output at 2 bytes each (fwd); each twice plus dOut for bwd."""
    q = f["num_q_heads"] * f["seq_len"] * f["head_dim"] * 2
    kv = f["num_kv_heads"] * f["seq_len"] * f["head_dim"] * 2
    per_batch = 2 * q + 2 * kv if f["mode"] == "fwd" else 4 * q + 4 * kv
    return float(f["batch"] * per_batch)


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
        attention_flops,
        attention_bytes,
        compute_metrics(),
        implementation="jit:xla",  # jax.nn.dot_product_attention's default
        notes="attends over the sequence (upstream's layout attends over heads); one device",
    )
)


def _moe_place(f: Fields, devices: Callable[[], int]) -> dict[str, Any]:
    """Upstream splits the tokens over every device (the weights' first rows too): context parallel."""
    n = devices()
    return {"cp": n} if n > 1 and f["mslen"] % n == 0 and f["cp"] == 1 else {}


register_v2(
    V2Benchmark(
        "transformer_layer_moe",
        "TransformerLayerMoE",
        (Param("model_dim", "dim", 7168), Param("mslen", "dim", 1024)),
        _fixed("transformer_layer_moe"),
        _same("model_dim", "mslen", "dtype", "tp", "cp", "ep", "etp"),
        lambda f: f"dim_{f['model_dim']}_len_{f['mslen']}",
        lambda f, n: 24.0 * f["mslen"] * f["model_dim"] ** 2,
        lambda f, n: 10.0 * f["mslen"] * f["model_dim"] * 2 + 10.0 * f["model_dim"] ** 2 * 2,
        compute_metrics(total_flops=False),
        ours=(
            Param("tp", "int", 1, doc="ours: tensor parallel over tp devices"),
            Param("etp", "int", 1, doc="ours: expert tensor parallel (the layer has no experts)"),
            Param("cp", "int", 1, doc="ours: context parallel over cp devices"),
            Param("ep", "int", 1, doc="ours: expert parallel (the layer has no experts)"),
        ),
        place=_moe_place,
        notes="tp/cp shard the layer (ours); the four matmuls are 20 mslen D^2 (model_flops)",
    )
)

# ---- memory and transfers ---------------------------------------------------------------------------

# STREAM kernels: (arrays read + written, FLOPs per element); copy computes x + 1 upstream
STREAM = {
    "copy": (2, 1),
    "scale": (2, 1),
    "add": (3, 1),
    "triad": (3, 2),
    "read_only": (1, 1),  # TPUMS's two (its `read` and `write` are the same kernels)
    "write_only": (1, 0),
}
OP_TYPES = {"read": "read_only", "write": "write_only"}  # TPUMS's short names


def _stream(f: Fields) -> tuple[int, int]:
    return STREAM.get(_op_type(f), (0, 0))


def _op_type(f: Fields) -> str:
    name = str(f["op_type"]).lower()
    return OP_TYPES.get(name, name)


register_v2(
    V2Benchmark(
        "hbm_bandwidth",
        "HBMBandwidthBenchmark",
        (
            Param("op_type", "str", "copy", doc="copy, scale, add or triad (any case)"),
            Param("size", "elements", 134217728, doc="elements per array, not bytes"),
            Param("dtype", "jnp_dtype", "bfloat16"),
            Param("device_id", "int", 0),
        ),
        _fixed("hbm_bandwidth"),
        lambda f: {
            "op_type": _op_type(f),
            "size": f["size"],
            "dtype": f["dtype"],
            "device": f["device_id"],
        },
        lambda f: f"{f['op_type']}_dim_{f['size']}_dev_{f['device_id']}",
        lambda f, n: float(_stream(f)[1] * f["size"]),
        lambda f, n: float(f["size"] * itemsize(f["dtype"]) * _stream(f)[0]),
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
            lambda f, n: 0.0,
            lambda f, n: float(f["data_size_mib"] * 2**20),
            host_metrics,
            flags=name,
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
            Param("direction", "str", "uni", doc="bi: both ways at once; anything else: one way"),
            Param("seed", "int", 0),
            # upstream's per-pair config adds these; here a config may give them (one pair)
            Param("src_device_index", "int", -1, doc="the sender (left out: every ordered pair)"),
            Param("dst_device_index", "int", -1, doc="the receiver"),
        ),
        _fixed("device_to_device"),
        lambda f: {
            "data_size_mib": f["data_size_mib"],
            "direction": "bi" if f["direction"] == "bi" else "uni",
            "source_id": f["src_device_index"],
            "target_id": f["dst_device_index"],
            "dtype": f["dtype"],
            "seed": f["seed"],
        },
        lambda f: (
            f"d2d_{f['src_device_index']}_to_{f['dst_device_index']}_{f['direction']}"
            f"_{f['data_size_mib']}mib"
        ),
        lambda f, n: 0.0,
        lambda f, n: float(f["data_size_mib"] * 2**20 * (2 if f["direction"] == "bi" else 1)),
        d2d_metrics,
        flags="device_to_device",
        every_pair=True,
        notes="src/dst_device_index pick one pair (upstream: always every ordered pair)",
    )
)

# ---- collectives ------------------------------------------------------------------------------------

COLLECTIVE_FIELDS = (
    Param("mesh_shape", "str", None, doc="'AxBxC': the devices' grid (default: one axis of all)"),
    Param("sharding_strategy", "str", None, doc="'axbxc': axes with an entry > 1 form the groups"),
    Param("matrix_dim", "dim", 1024, doc="rows of 8x128 in one device's block"),
    Param("dtype", "jnp_dtype", "bfloat16"),
    Param("seed", "int", 0),
    Param("reduce_op", "str", "sum", doc="all_reduce: sum, mean, max or min (any case)"),
)


# this project's collective fields (TPUMS's DCN layout: a mesh axis named dcn spans slices, hosts)
COLLECTIVE_OURS = (
    Param("mesh_axes", "str", None, doc="the mesh axes' names, e.g. dcn,ici: dcn spans slices"),
    Param(
        "input_layout",
        "str",
        "default",
        doc="dcn_1d: a (matrix_dim, matrix_dim) input split over dcn",
    ),
    Param("ring_factor", "float", None, doc="DCN bus factor (default: the collective's own)"),
    Param("batch_size", "int", None, doc="DCN: recorded; each timed step is one collective here"),
    Param("sync_between_runs", "bool", None, doc="DCN: recorded"),
)


def dcn_axis(f: Fields) -> int | None:
    """The mesh axis named dcn (TPUMS's mesh_axes), or None for an ICI-only mesh."""
    axes = [a.strip() for a in str(f.get("mesh_axes") or "").split(",")]
    return axes.index("dcn") if "dcn" in axes else None


def dcn_slices(f: Fields) -> int:
    """Slices along the dcn axis (1 without one)."""
    axis, shape = dcn_axis(f), _ints(f.get("mesh_shape"))
    return shape[axis] if axis is not None and shape and axis < len(shape) else 1


def dcn_participants(f: Fields) -> int:
    """Devices of one slice: the mesh's devices over its dcn slices."""
    shape = _ints(f.get("mesh_shape")) or [1]
    return math.prod(shape) // dcn_slices(f)


def block_elements(f: Fields) -> int:
    """One device's block: matrix_dim tiles of 8x128, or (dcn_1d) matrix_dim^2 over the slices."""
    if f.get("input_layout") == "dcn_1d":
        return int(f["matrix_dim"]) ** 2 // dcn_slices(f)
    return int(f["matrix_dim"]) * collectives.TILE


def block_bytes(f: Fields) -> float:
    return float(block_elements(f) * itemsize(f["dtype"]))


def _sized(f: Fields) -> dict[str, Any]:
    if f.get("input_layout") == "dcn_1d":
        return {"num_elements": block_elements(f)}
    return {"matrix_dim": f["matrix_dim"]}


def scatter_chunk_bytes(f: Fields) -> float:
    return float(f["matrix_dim"] * 256 * itemsize(f["dtype"]))


def _collective(
    name: str,
    class_name: str,
    op: str | Callable[[Fields], str],
    moved: Model,
    sized: Callable[[Fields], dict[str, Any]] = _sized,
    size_key: str = "shard_size_mb",
    size: Callable[[Fields], float] = block_bytes,
    run_id: Callable[[Fields], str] = lambda f: f"dim_{f['matrix_dim']}",
    flags: str | None = None,
    extra: Callable[[Fields], dict[str, Any]] = lambda f: {},
    fields: tuple[Param, ...] = (),
    notes: str = "the group is upstream's (a mesh the devices cannot fill: one axis of all)",
    tpums_only: bool = False,
) -> None:
    register_v2(
        V2Benchmark(
            name,
            class_name,
            (*COLLECTIVE_FIELDS, *fields),
            op if callable(op) else _fixed(op),
            lambda f: {"dtype": f["dtype"], "seed": f["seed"], **sized(f), **extra(f)},
            run_id,
            lambda f, n: 0.0,
            moved,
            collective_metrics(size_key, size),
            ours=COLLECTIVE_OURS,
            flags=flags or name,
            collective=True,
            notes=notes,
            tpums_only=tpums_only,
        )
    )


_collective(
    "all_reduce",
    "AllReduceBenchmark",
    "all_reduce",
    lambda f, n: block_bytes(f) * 2 * (n - 1) / n,
    run_id=lambda f: f"dim_{f['matrix_dim']}_op_{str(f['reduce_op']).lower()}",
    extra=lambda f: {"reduce_op": str(f["reduce_op"]).lower()},
)
_collective("all_gather", "AllGatherBenchmark", "all_gather", lambda f, n: block_bytes(f) * (n - 1))
_collective(
    "all_to_all",
    "AllToAllBenchmark",
    "all_to_all",
    lambda f, n: block_bytes(f) / n * (n - 1),
    size_key="local_size_mb",
)
# upstream's (N, D, 256) input is N blocks of D*256 elements: ours as rows of 128
_collective(
    "reduce_scatter",
    "ReduceScatterBenchmark",
    "psum_scatter",
    lambda f, n: scatter_chunk_bytes(f) * (n - 1),
    sized=lambda f: {"num_elements": f["matrix_dim"] * 256},
    size=scatter_chunk_bytes,
    flags="psum_scatter",
)


# TPUMS's permute (jax-bench has none): uni, member 0 to member 1 of each group; bidi, both ways
_collective(
    "ppermute",
    "PPermuteBenchmark",
    lambda f: "ppermute_bidi" if f["direction"] == "bidi" else "ppermute_uni",
    lambda f, n: block_bytes(f) * (2 if f["direction"] == "bidi" else 1),
    run_id=lambda f: f"dim_{f['matrix_dim']}_dir_{f['direction']}",
    flags="all_to_all",
    fields=(Param("direction", "choice", "uni", ("uni", "bidi"), "bidi: both ways at once"),),
    notes="TPUMS's, not jax-bench's; with mesh_axes dcn,ici it permutes across the slices",
    tpums_only=True,
)


@dataclass(frozen=True)
class Group:
    """A collective's mesh and group as upstream resolves them: the mesh_shape's grid when it fills
    exactly the devices, else one axis of all of them; the axes whose sharding_strategy entry is above
    1 (all axes when the strategy is absent, unreadable or of another rank)."""

    mesh_shape: str  # our op's mesh ('' = one axis)
    strategy: str
    size: int  # upstream's N
    warnings: tuple[str, ...] = ()


def _ints(text: Any) -> list[int] | None:
    try:
        return [int(part) for part in str(text).split("x")]
    except ValueError:
        return None


def resolve_group(f: Fields, devices: int) -> Group:
    shape_text, strategy_text = f["mesh_shape"], f["sharding_strategy"]
    shape = _ints(shape_text) if shape_text is not None else None
    axis = dcn_axis(f)
    if axis is not None:  # DCN: the mesh as given, the group along dcn, never a fallback
        if shape is None or axis >= len(shape):
            raise UserError(
                f"mesh_axes names {axis + 1} axes or more; mesh_shape is {shape_text!r}"
            )
        along = "x".join(str(d) if i == axis else "1" for i, d in enumerate(shape))
        return Group("x".join(map(str, shape)), along, shape[axis])
    warnings: list[str] = []
    if shape_text is not None and (shape is None or math.prod(shape) != devices or min(shape) < 1):
        warnings.append(
            f"mesh_shape {shape_text} does not fill the {devices} devices: one axis of all of them "
            "(as jax-bench falls back), sharding_strategy ignored"
        )
        shape = None
    if shape is None:
        return Group("", "", devices, tuple(warnings))
    strategy = _ints(strategy_text) if strategy_text is not None else None
    if strategy_text is not None and (strategy is None or len(strategy) != len(shape)):
        warnings.append(
            f"sharding_strategy {strategy_text} does not match mesh_shape {shape_text}: every axis "
            "(as jax-bench falls back)"
        )
        strategy = None
    axes = range(len(shape)) if strategy is None else [i for i, v in enumerate(strategy) if v > 1]
    size = math.prod(shape[a] for a in axes)
    chosen = "x".join(str(v) for v in strategy) if strategy is not None else ""
    return Group("x".join(map(str, shape)), chosen, size, tuple(warnings))


# ---- TPU flags (upstream's op_flags.yaml): libtpu reads them once, when its process starts ----------

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


def process_env(benchmark: V2Benchmark) -> tuple[tuple[str, str], ...]:
    """The environment a benchmark's process starts with on a TPU host (empty: the current one)."""
    return TPU_FLAGS[benchmark.flags].process_env() if benchmark.flags else ()
