"""jax-bench's memory and transfer benchmarks, each over its typed fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelbench.benchmarks.base import Benchmark, Figures, UpstreamFields, intensity, itemsize, rate
from accelbench.catalogue import param

# STREAM kernels: (arrays read + written, FLOPs per element); copy computes x + 1 upstream; the last
# two are TPUMS's (its `read` and `write` are the same kernels)
STREAM = dict(
    copy=(2, 1), scale=(2, 1), add=(3, 1), triad=(3, 2), read_only=(1, 1), write_only=(1, 0)
)
OP_TYPES = {"read": "read_only", "write": "write_only"}  # TPUMS's short names


@dataclass(frozen=True)
class HbmFields(UpstreamFields):
    op_type: str = param("str", "copy", doc="copy, scale, add or triad (any case)")
    size: int = param("elements", 134217728, doc="elements per array, not bytes")
    dtype: str = param("jnp_dtype", "bfloat16", doc="the arrays' dtype")
    device_id: int = param("int", 0, doc="the device the arrays live on")

    @property
    def kernel(self) -> str:  # any case, TPUMS's short names too
        name = str(self.op_type).lower()
        return OP_TYPES.get(name, name)

    @property
    def stream(self) -> tuple[int, int]:
        return STREAM.get(self.kernel, (0, 0))


def hbm_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "intensity": intensity(f),
        "op_type": str(f.fields.op_type).lower(),
    }


Benchmark(
    "hbm_bandwidth",
    "HBMBandwidthBenchmark",
    HbmFields,
    lambda f: {"op_type": f.kernel, "size": f.size, "dtype": f.dtype, "device": f.device_id},
    lambda f: f"{f.op_type}_dim_{f.size}_dev_{f.device_id}",
    lambda f, n: float(f.stream[1] * f.size),
    lambda f, n: float(f.size * itemsize(f.dtype) * f.stream[0]),
    metrics=hbm_metrics,
    notes="copy is a copy (upstream's computes x + 1, the same traffic)",
).register()


@dataclass(frozen=True)
class HostFields(UpstreamFields):
    data_size_mib: int = param("mib", 64, doc="MiB moved per transfer")


def host_metrics(f: Figures) -> dict[str, Any]:
    """GiB/s, as upstream (and the Ironwood harness before it) reports host transfers."""
    mib = f.fields.data_size_mib
    return {"bandwidth_gb_s": rate(mib / 1024, f.seconds, 1.0), "total_bytes_mib": float(mib)}


def _host(name: str, class_name: str, direction: str) -> None:
    Benchmark(
        name,
        class_name,
        HostFields,
        lambda f: {"data_size_mib": f.data_size_mib, "direction": direction},
        lambda f: f"size_{f.data_size_mib}mib",
        lambda f, n: 0.0,
        lambda f, n: float(f.data_size_mib * 2**20),
        metrics=host_metrics,
        runs="host_device",
        notes="JAX: wall clock of the blocked copy (no device event); torch: CUPTI device time",
    ).register()


_host("host_to_device", "HostToDeviceBenchmark", "h2d")
_host("device_to_host", "DeviceToHostBenchmark", "d2h")


@dataclass(frozen=True)
class D2dFields(UpstreamFields):
    data_size_mib: int = param("mib", 1024, doc="MiB moved per transfer")
    direction: str = param("str", "uni", doc="bi: both ways at once; anything else: one way")
    seed: int = param("int", 0, doc="PRNG seed of the data sent")
    # upstream's per-pair config adds these; here a config may give them (one pair)
    src_device_index: int = param("int", -1, doc="the sender (left out: every ordered pair)")
    dst_device_index: int = param("int", -1, doc="the receiver")

    @property
    def both_ways(self) -> bool:
        return self.direction == "bi"


def d2d_metrics(f: Figures) -> dict[str, Any]:
    return {
        "bandwidth_gb_s": rate(f.bytes, f.seconds, 1e9),
        "total_bytes_mb": f.bytes / 1e6,
        "src_device_index": f.fields.src_device_index,
        "dst_device_index": f.fields.dst_device_index,
        "direction": f.fields.direction,
    }


Benchmark(
    "device_to_device",
    "DeviceToDeviceBenchmark",
    D2dFields,
    lambda f: {
        "data_size_mib": f.data_size_mib,
        "direction": "bi" if f.both_ways else "uni",
        "source_id": f.src_device_index,
        "target_id": f.dst_device_index,
        "dtype": f.dtype,
        "seed": f.seed,
    },
    lambda f: (
        f"d2d_{f.src_device_index}_to_{f.dst_device_index}_{f.direction}_{f.data_size_mib}mib"
    ),
    lambda f, n: 0.0,
    lambda f, n: float(f.data_size_mib * 2**20 * (2 if f.both_ways else 1)),
    metrics=d2d_metrics,
    every_pair=True,
    notes="src/dst_device_index pick one pair (upstream: always every ordered pair)",
).register()
