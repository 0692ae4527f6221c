"""jax-bench's `summary.csv` and `detailed.json` for a v2 config's cases (benchmarks/files.py writes
them): upstream's columns first, this project's after them (docs/jax_bench.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from accelbench.benchmarks.base import Figures, Upstream
from accelbench.benchmarks.files import Generation, UpstreamStats, device_span_ms, upstream_files
from accelbench.core.case import Case
from accelbench.results.records import Row
from accelbench.results.sinks import RunContext, Sink, register_sink
from accelbench.specs import HardwareStats


def roofline(
    stats: HardwareStats, metrics: dict[str, Any], fig: Figures, peak_dtype: str
) -> dict[str, Any]:
    """Upstream's roofline fields; efficiencies where both sides are positive (bandwidth against the
    HBM curve whatever the traffic, as upstream compares it)."""
    peak = stats.peak_tflops(peak_dtype)
    bw = stats.bandwidth_at(fig.bytes)
    intensity = fig.flops / fig.bytes if fig.bytes else 0.0
    limit = min(peak, intensity * bw / 1000)
    out: dict[str, Any] = {"roofline_tflops_limit": limit, "peak_bw_at_size_gb_s": bw}
    tflops = metrics.get("tflops_per_sec") or 0.0
    if tflops > 0 and limit > 0:
        out["roofline_efficiency"] = 100 * tflops / limit
    gbps = metrics.get("bandwidth_gb_s") or 0.0
    if gbps > 0 and bw > 0:
        out["bw_efficiency"] = 100 * gbps / bw
    return out


def upstream_metrics(
    case: Case, origin: Upstream, fields: Any, host_ms: list[float], row: Row
) -> dict[str, Any]:
    """The metrics upstream's run() leaves, in its order (before total_duration_s and actual_runs)."""
    bench = origin.benchmark
    up = UpstreamStats.of(host_ms)
    fig = bench.figures(fields, up.avg_ms / 1e3, origin.group_size)
    metrics: dict[str, Any] = {
        "p50_ms": up.p50_ms,
        "p90_ms": up.p90_ms,
        "avg_ms": up.avg_ms,
        "std_ms": up.std_ms,
        "throughput": 0.0,
        **bench.metrics(fig),
    }
    if fields.xprof_timing:
        if device := device_span_ms(row):
            avg = float(np.mean(device))
            p50, p90 = np.percentile(device, [50, 90])
            metrics.update(xprof_avg_ms=avg, xprof_p50_ms=float(p50), xprof_p90_ms=float(p90))
            fig = bench.figures(fields, avg / 1e3, origin.group_size)
            metrics.update(bench.metrics(fig))  # upstream's rates from the device mean
        else:  # as upstream when its trace holds no marked op
            metrics.update(xprof_avg_ms=None, xprof_p50_ms=None, xprof_p90_ms=None)
            metrics["bandwidth_gb_s"] = None
    if fields.use_trace_roofline and row.derived.compiler_flop is not None:
        metrics["trace_flops"] = row.derived.compiler_flop
        metrics["trace_hbm_bytes"] = row.derived.compiler_bytes or 0
        if metrics["trace_hbm_bytes"] > 0:
            metrics["intensity"] = metrics["trace_flops"] / metrics["trace_hbm_bytes"]
    if origin.hardware is not None:
        metrics.update(roofline(origin.hardware, metrics, fig, bench.peak_dtype(fields)))
    return metrics


def params(case: Case, origin: Upstream, fields: Any) -> dict[str, Any]:
    """Upstream's fields as the case ran, and the peaks it was given (`hardware_stats`)."""
    out = {p.name: getattr(fields, p.name) for p in origin.benchmark.upstream_fields}
    return {**out, "hardware_stats": fields.hardware_stats or {}}


def given_fields(case: Case) -> tuple[str, dict[str, Any]]:
    """The case's benchmark and fields, upstream's then ours (`validate --json`'s view of a file)."""
    origin: Upstream = case.origin
    fields = {p.name: getattr(origin.fields, p.name) for p in origin.benchmark.all_fields}
    return origin.benchmark.name, {k: v for k, v in fields.items() if k != "hardware_stats"}


JAX_BENCH = Generation(params, upstream_metrics)


@register_sink("jax_bench", order=30)
def jax_bench_files(context: RunContext) -> Sink | None:
    return upstream_files(context, JAX_BENCH, lambda origin: origin.tpums is None)
