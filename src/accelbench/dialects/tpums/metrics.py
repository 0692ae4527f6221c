"""TPUMS's metric names for a case a TPUMS file named: `<domain>_<metric>_<scope>` over the domains
`wall_clock` and `xprof` (docs/tpums.md). The roofline fields come from TPUMS's spec tables of tpu7x
and v6e only: on any other device they are left out, never guessed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelbench.benchmarks.base import Figures, Tpums, Upstream
from accelbench.benchmarks.collective import (
    CollectiveFields,
    block_bytes,
    dcn_axis,
    dcn_participants,
    dcn_slices,
    scatter_chunk_bytes,
)
from accelbench.platform.gpu_monitor import GPU_SAMPLE_FIELDS
from accelbench.specs import tpums_spec

MIB_PER_MB = 1e6 / 2**20
# jax-bench's size columns (MB) as TPUMS names them (MiB)
SIZES = {f"{size}_mb": f"{size}_mib" for size in ("total_bytes", "shard_size", "local_size")}
LATENCY = ("p50_ms", "p90_ms", "avg_ms", "std_ms")


def _rates(domain: str, metrics: dict[str, Any], entry: Tpums, per_chip: int) -> dict[str, Any]:
    """One domain's rates; per chip is per device times a chip's devices (derive_chip_metrics)."""
    out: dict[str, Any] = {}
    if "tflops_per_sec" in metrics:
        out[f"{domain}_tflops_per_device"] = metrics["tflops_per_sec"]
        out[f"{domain}_tflops_per_chip"] = metrics["tflops_per_sec"] * per_chip
    if metrics.get("bandwidth_gb_s") is not None and not entry.bench.collective:
        out[f"{domain}_bandwidth_per_device_gb_s"] = metrics["bandwidth_gb_s"]
        if entry.chip_bandwidth:
            out[f"{domain}_bandwidth_per_chip_gb_s"] = metrics["bandwidth_gb_s"] * per_chip
    return out


def unmeasured_device(metrics: dict[str, Any]) -> dict[str, Any]:
    """With xprof timing and no device time: the xprof latencies and rates present and empty (None)."""
    out: dict[str, Any] = {f"xprof_{key}": None for key in LATENCY}
    for key in metrics:
        if key.startswith("wall_clock_") and ("_tflops_per_" in key or "_bandwidth_per_" in key):
            out[key.replace("wall_clock_", "xprof_", 1)] = None
    return out


def _plain(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics that are no domain's: sizes in MiB, FLOP counts, intensity, the case's labels."""
    return {
        SIZES.get(key, key): value * MIB_PER_MB if key in SIZES else value
        for key, value in metrics.items()
        if key not in ("tflops_per_sec", "bandwidth_gb_s")
    }


def _roofline(
    entry: Tpums, fig: Figures, peak_dtype: str, device_kind: str | None, rates: dict[str, Any]
) -> dict[str, Any]:
    spec, mode = tpums_spec(device_kind), entry.roofline
    if spec is None or mode == "none":
        return {}
    hbm = spec.hbm_gb_s_per_device
    out: dict[str, Any] = {"peak_hbm_bw_per_device_gb_s": hbm}
    rate, efficiency, limit = "_bandwidth_per_device_gb_s", "_memory_roofline_efficiency_pct", hbm
    if mode == "compute":
        peak = spec.peak_tflops(peak_dtype)
        if peak is None:
            return out
        intensity = fig.flops / fig.bytes if fig.bytes else 0.0
        limit = min(peak, intensity * hbm / 1000) if intensity else peak
        out["roofline_tflops_limit_per_device"] = limit
        rate, efficiency = "_tflops_per_device", "_compute_roofline_efficiency_pct"
    for key, value in rates.items():  # each domain's rate against the limit
        if key.endswith(rate) and value and limit:
            out[key.removesuffix(rate) + efficiency] = 100 * value / limit
    return out


# TPUMS's per-chip bytes of one step, of S (one device's block), the group's rank R, the devices that
# cross chip links P and the chip factor C (its benchmarks/collectives.py, UPSTREAM_TPUMS.md 3.6)
CHIP_BYTES = {
    "all_reduce": lambda s, r, p, c: 2 * s * p / r * c,
    "all_gather": lambda s, r, p, c: s * p * c,
    "all_to_all": lambda s, r, p, c: s * p / r * c,
    "reduce_scatter": lambda s, r, p, c: s * p / r * c,
}


def replica_groups(group: list[int], per_chip: int) -> tuple[str, int, int]:
    """(type, P, C) as TPUMS classifies a group by the devices a chip holds (D): every id a multiple
    of D is `parallel` (P = R - 1, C = D), else `non-parallel` (P = R - D, C = 1)."""
    rank = len(group)
    if per_chip > 1 and group and all(d % per_chip == 0 for d in group):
        return "parallel", max(rank - 1, 1), per_chip
    return "non-parallel", max(rank - per_chip, 1), 1


def collective(
    name: str, block_bytes: float, group: list[int], seconds: dict[str, float], per_chip: int
) -> dict[str, Any]:
    """A collective's group class, bytes a chip moves a step, GB/s per chip (0 for a group of one)."""
    kind, links, factor = replica_groups(group, per_chip)
    rank = len(group)
    moved = CHIP_BYTES[name](block_bytes, rank, links, factor)
    out: dict[str, Any] = {
        "replica_group_rank": rank,
        "replica_group_type": kind,
        "data_transferred_bytes": moved,
    }
    for domain, s in seconds.items():
        out[f"{domain}_bandwidth_per_chip_gb_s"] = moved / (s * 1e9) if rank > 1 and s else 0.0
    return out


def tpums_metrics(
    origin: Upstream,
    fields: Any,
    domains: dict[str, tuple[float, float, float, float]],
    figures: dict[str, Figures],
    device_kind: str | None,
    group: list[int] | None = None,
    soak: dict[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """`domains`: (p50, p90, avg, std) ms each; `group`: a collective's first replica group; `soak`:
    initial and sustained ms per domain. Rates are at each domain's p50, as TPUMS computes them."""
    bench, entry = origin.benchmark, origin.tpums
    assert entry is not None
    spec = tpums_spec(device_kind)
    per_chip = spec.devices_per_chip if spec else 1
    out: dict[str, Any] = {}
    for domain, stats in domains.items():
        out.update({f"{domain}_{key}": value for key, value in zip(LATENCY, stats, strict=True)})
    rates: dict[str, Any] = {}
    for domain, fig in figures.items():
        rates.update(_rates(domain, bench.metrics(fig), entry, per_chip))
    first = next(iter(figures.values()))
    seconds = {d: stats[0] / 1e3 for d, stats in domains.items()}
    if bench.collective and group is not None and bench.name in CHIP_BYTES:
        block = BLOCKS.get(bench.name, block_bytes)(fields)
        rates.update(collective(bench.name, block, group, seconds, per_chip))
    if bench.collective and dcn_axis(fields) is not None:
        rates.update(dcn(bench.name, fields, seconds))
    out.update(rates)
    out.update(soaked(soak or {}))
    out.update(_plain(bench.metrics(first)))
    out.update(_roofline(entry, first, bench.peak_dtype(fields), device_kind, rates))
    return out


DUPLEX_GBPS = 800.0  # TPUMS's DCN line rate: two 400 Gb/s NICs


# a DCN collective's ring factor where the config gives none, by its name (fields, slices) -> factor
RING_FACTORS: dict[str, Callable[[Any, int], float]] = {
    "all_reduce": lambda f, n: 2 * (n - 1) / n,
    "ppermute": lambda f, n: 2.0 if f.both_ways else 1.0,
}
# S, one device's block, where it is not its whole input: reduce-scatter's output chunk
BLOCKS: dict[str, Callable[[Any], float]] = {"reduce_scatter": scatter_chunk_bytes}


def dcn(name: str, fields: CollectiveFields, seconds: dict[str, float]) -> dict[str, Any]:
    """A DCN collective's Gbit/s: a device's shard over the time, times a slice's devices (host_algo),
    times the ring factor (host_bus), and that over the 800 Gb/s line."""
    slices, participants = dcn_slices(fields), dcn_participants(fields)
    default = RING_FACTORS.get(name, lambda f, n: 1.0)(fields, slices)
    ring = float(fields.ring_factor or default)
    shard = block_bytes(fields)
    out: dict[str, Any] = {
        "algorithm_bytes": shard * ring * participants,
        "ring_factor": ring,
        "participants_per_slice": participants,
    }
    for domain, s in seconds.items():
        per_device = shard * 8 / (s * 1e9) if s else 0.0
        out[f"{domain}_per_device_algo_gbps"] = per_device
        out[f"{domain}_host_algo_gbps"] = per_device * participants
        bus = per_device * participants * ring
        out[f"{domain}_host_bus_gbps"] = bus
        out[f"{domain}_duplex_utilization_pct"] = bus / DUPLEX_GBPS * 100
    return out


def soaked(phases: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """A soak's initial and sustained p50 per domain and their ratio (1.0 where initial is 0)."""
    out: dict[str, Any] = {}
    for domain, (initial, sustained) in phases.items():
        out[f"{domain}_initial_p50_ms"] = initial
        out[f"{domain}_sustained_p50_ms"] = sustained
        out[f"{domain}_slowdown_ratio"] = sustained / initial if initial > 0 else 1.0
    return out


def nvml_telemetry(samples: list[list[float]]) -> dict[str, Any]:
    """TPUMS's telemetry columns a GPU has an equivalent for, from the case's NVML samples: peak die
    temperature (the first sample's as the pre-soak one) and mean power."""
    if not samples:
        return {}
    fields = dict(zip(GPU_SAMPLE_FIELDS, zip(*samples, strict=True), strict=True))
    temperatures, power = fields["temperature_c"], fields["power_w"]
    return {
        "peak_temp_c": max(temperatures),
        "peak_temp_source": "gpu_die",
        "total_power_mean_w": sum(power) / len(power),
        "peak_temp_c_pre_soaking": temperatures[0],
    }
