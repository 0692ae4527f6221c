"""TPUMS's metric names for a case a TPUMS file named: `<domain>_<metric>_<scope>` (docs/tpums.md).

The domains are `wall_clock` (the host clock around each blocked call, always) and `xprof` (the device
span per iteration, with xprof timing); each has p50/p90/avg/std in ms after TPUMS's 1.5 IQR filter,
and its rates from its avg: TFLOP/s per device and per chip (gemm), GB/s per device (memory and
transfers) or per chip (collectives). The roofline fields come from TPUMS's spec tables of tpu7x and
v6e only: on any other device they are left out, never guessed. The models are the jax-bench ones the
case's benchmark runs on (ops/jax_bench.py).
"""

from __future__ import annotations

from typing import Any

from microbench.core.case import Origin
from microbench.ops.jax_bench import Figures, V2Benchmark
from microbench.ops.tpums import TPUMS, chip_spec

MIB_PER_MB = 1e6 / 2**20
# jax-bench's size columns (MB) as TPUMS names them (MiB)
SIZES = {
    "total_bytes_mb": "total_bytes_mib",
    "shard_size_mb": "shard_size_mib",
    "local_size_mb": "local_size_mib",
}
LATENCY = ("p50_ms", "p90_ms", "avg_ms", "std_ms")


def _rates(domain: str, metrics: dict[str, Any], collective: bool, per_chip: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "tflops_per_sec" in metrics:
        out[f"{domain}_tflops_per_device"] = metrics["tflops_per_sec"]
        out[f"{domain}_tflops_per_chip"] = metrics["tflops_per_sec"] * per_chip
    if metrics.get("bandwidth_gb_s") is not None:
        scope = "chip" if collective else "device"
        out[f"{domain}_bandwidth_per_{scope}_gb_s"] = metrics["bandwidth_gb_s"]
    return out


def _plain(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics that are no domain's: sizes in MiB, FLOP counts, intensity, the case's labels."""
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        if key in ("tflops_per_sec", "bandwidth_gb_s"):
            continue
        if key in SIZES:
            out[SIZES[key]] = value * MIB_PER_MB
        else:
            out[key] = value
    return out


def _roofline(
    name: str, fig: Figures, peak_dtype: str, device_kind: str | None, rates: dict[str, Any]
) -> dict[str, Any]:
    spec, mode = chip_spec(device_kind), TPUMS[name].roofline
    if spec is None or mode == "none":
        return {}
    hbm = spec.hbm_gb_s_per_device
    out: dict[str, Any] = {"peak_hbm_bw_per_device_gb_s": hbm}
    if mode == "compute":
        peak = spec.peak_tflops(peak_dtype)
        if peak is None:
            return out
        intensity = fig.flops / fig.bytes if fig.bytes else 0.0
        limit = min(peak, intensity * hbm / 1000) if intensity else peak
        out["roofline_tflops_limit_per_device"] = limit
        for key, value in rates.items():
            if key.endswith("_tflops_per_device") and value and limit:
                out[key.replace("tflops_per_device", "compute_roofline_efficiency_pct")] = (
                    100 * value / limit
                )
    else:
        for key, value in rates.items():
            if key.endswith("_bandwidth_per_device_gb_s") and value:
                domain = key.removesuffix("_bandwidth_per_device_gb_s")
                out[f"{domain}_memory_roofline_efficiency_pct"] = 100 * value / hbm
    return out


def tpums_metrics(
    bench: V2Benchmark,
    origin: Origin,
    fields: dict[str, Any],
    domains: dict[str, tuple[float, float, float, float]],
    figures: dict[str, Figures],
    device_kind: str | None,
) -> dict[str, Any]:
    """`domains`: each timing domain's (p50, p90, avg, std) in ms; `figures`: its models at its avg."""
    name = origin.generation_name or bench.name
    spec = chip_spec(device_kind)
    per_chip = spec.devices_per_chip if spec else 1
    out: dict[str, Any] = {}
    for domain, stats in domains.items():
        out.update({f"{domain}_{key}": value for key, value in zip(LATENCY, stats, strict=True)})
    rates: dict[str, Any] = {}
    for domain, fig in figures.items():
        rates.update(_rates(domain, bench.metrics(fig), bench.collective, per_chip))
    out.update(rates)
    first = next(iter(figures.values()))
    out.update(_plain(bench.metrics(first)))
    out.update(_roofline(name, first, bench.peak_dtype(fields), device_kind, rates))
    return out
