"""The jax-bench harness's outputs for the cases a v2 config named: `summary.csv` and `detailed.json`
in the output directory, with upstream's columns, order and units (docs/jax_bench.md).

Unlike upstream's, both files are rewritten whole (atomically) after every case, so a crash loses no
finished case; they are never replaced by a later run (that run writes `summary.2.csv` and
`detailed.2.json`, as the run store numbers results files), and `--resume` continues the latest pair.
Process 0 writes them for the whole job (its rows hold every device's samples). The statistics under
upstream's names (p50_ms ... std_ms, KET_ms) are upstream's IQR-filtered ones, over this project's
per-iteration times (device time where the platform gives it: `timing_source` says); `raw_times_ms`
keeps every sample.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from microbench.core.case import Case, Origin
from microbench.errors import UserError
from microbench.ops.jax_bench import V2, Figures
from microbench.platform import processes
from microbench.platform.environment import installed
from microbench.platform.system_presets import HardwareStats
from microbench.results.records import Row
from microbench.results.run_store import numbered
from microbench.results.sinks import RunContext, Sink, register_sink
from microbench.results.writer import check_new_file, write_atomically

SUMMARY, DETAILED = "summary.csv", "detailed.json"
OURS = ["timing_source", "backend", "case_id"]  # this project's columns, last
DEVICE_TIMERS_PREFIX = ("xprof", "cupti", "cuda_event")  # timing sources that read a device clock


@dataclass(frozen=True)
class UpstreamStats:
    """calculate_metrics: above 3 samples, those outside 1.5 IQR of the quartiles are left out."""

    p50_ms: float
    p90_ms: float
    avg_ms: float
    std_ms: float

    @classmethod
    def of(cls, samples_ms: list[float]) -> UpstreamStats:
        x = np.asarray(samples_ms, dtype=np.float64)
        if x.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        if x.size > 3:
            q1, q3 = np.percentile(x, [25, 75])
            low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
            kept = x[(x >= low) & (x <= high)]
            x = kept if kept.size else x
        return cls(
            float(np.percentile(x, 50)),
            float(np.percentile(x, 90)),
            float(x.mean()),
            float(x.std()),
        )


def _roofline(
    stats: HardwareStats, metrics: dict[str, Any], fig: Figures, peak_dtype: str, hbm: bool
) -> dict[str, Any]:
    """Upstream's roofline fields, from the preset's peaks and the HBM curve at the case's bytes.
    bw_efficiency only where the traffic is HBM traffic (upstream also compares interconnect and host
    transfers with the HBM curve)."""
    peak = stats.peak_tflops(peak_dtype)
    bw = stats.bandwidth_at(fig.bytes)
    intensity = fig.flops / fig.bytes if fig.bytes and fig.flops else 0.0
    limit = min(peak, intensity * bw / 1000)
    out: dict[str, Any] = {"roofline_tflops_limit": limit, "peak_bw_at_size_gb_s": bw}
    tflops = metrics.get("tflops_per_sec") or 0.0
    if tflops > 0 and limit > 0:
        out["roofline_efficiency"] = 100 * tflops / limit
    gbps = metrics.get("bandwidth_gb_s") or 0.0
    if hbm and gbps > 0 and bw > 0:
        out["bw_efficiency"] = 100 * gbps / bw
    return out


def _device_info(row: Row) -> dict[str, Any]:
    env = row.environment
    versions = installed()
    info: dict[str, Any] = {
        "platform": env.platform,
        "device_count": env.device_count,
        "local_device_count": (env.device_count or 0) // max(1, processes.count()),
        "jax_version": versions.get("jax"),
    }
    libtpu = versions.get("libtpu") or versions.get("libtpu-nightly")
    if libtpu:
        info["libtpu_version"] = libtpu
    info["chip_version"] = env.device_kind
    return info


def _iso(text: str) -> _dt.datetime | None:
    try:
        return _dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None


def detailed_entry(case: Case, origin: Origin, row: Row) -> dict[str, Any]:
    """One case as upstream's detailed.json holds it, plus this project's case id and timing source."""
    bench = V2[origin.benchmark]
    fields = dict(origin.fields)
    samples_ms = [s * 1e3 for s in row.series.samples_s]
    up = UpstreamStats.of(samples_ms)
    fig = Figures(
        fields,
        row.derived.model_flop or 0.0,
        row.derived.model_bytes or 0.0,
        up.avg_ms / 1e3,
        row.extras,
    )
    own = bench.metrics(fig)
    throughput = own.get("tflops_per_sec", own.get("bandwidth_gb_s", 0.0))
    metrics: dict[str, Any] = {
        "p50_ms": up.p50_ms,
        "p90_ms": up.p90_ms,
        "avg_ms": up.avg_ms,
        "std_ms": up.std_ms,
        "throughput": throughput,
        **own,
    }
    source = row.timing.timing_source or ""
    if fields.get("xprof_timing") and source.startswith(DEVICE_TIMERS_PREFIX) and samples_ms:
        metrics["xprof_avg_ms"] = float(np.mean(samples_ms))
        metrics["xprof_p50_ms"] = float(np.percentile(samples_ms, 50))
        metrics["xprof_p90_ms"] = float(np.percentile(samples_ms, 90))
    if fields.get("use_trace_roofline") and row.derived.compiler_flop is not None:
        metrics["trace_flops"] = row.derived.compiler_flop
        metrics["trace_hbm_bytes"] = row.derived.compiler_bytes
        if row.derived.compiler_bytes:
            metrics["intensity"] = row.derived.compiler_flop / row.derived.compiler_bytes
    if origin.hardware is not None and not origin.hardware.empty:
        metrics.update(
            _roofline(origin.hardware, metrics, fig, bench.peak_dtype(fields), bench.hbm_traffic)
        )
    start, end = _iso(row.started), _iso(row.identity.timestamp)
    metrics["total_duration_s"] = (end - start).total_seconds() if start and end else None
    metrics["actual_runs"] = len(samples_ms)
    seconds = int(start.timestamp()) if start else 0
    return {
        "metadata": {
            "benchmark_name": bench.class_name,
            "test_name": f"{bench.class_name}_{seconds}",
            "start_time": row.started,
            "end_time": row.identity.timestamp,
            "params": fields,
            "device_info": _device_info(row),
            "run_id": bench.run_id(fields),
            "case_id": row.identity.case_id,
            "backend": f"{case.backend}:{row.identity.implementation}",
            "timing_source": source,
        },
        "metrics": metrics,
        "raw_times_ms": samples_ms,
    }


def summary_row(entry: dict[str, Any]) -> dict[str, Any]:
    """A detailed entry as a summary.csv row: params (a metric named like one overwrites it),
    metrics, device info, then identity and time, then this project's three columns."""
    meta, metrics = entry["metadata"], entry["metrics"]
    params = {k: (repr(v) if isinstance(v, dict) else v) for k, v in meta["params"].items()}
    row = {**params, **metrics, **meta["device_info"]}
    row.update(
        benchmark=meta["benchmark_name"],
        test_name=meta["test_name"],
        KET_ms=metrics["avg_ms"],
        start=meta["start_time"],
        timing_source=meta["timing_source"],
        backend=meta["backend"],
        case_id=meta["case_id"],
    )
    return row


def write_summary(f: IO[str], entries: list[dict[str, Any]]) -> None:
    rows = [summary_row(e) for e in entries]
    columns = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in OURS]
    columns += OURS  # after upstream's columns, whichever benchmarks the file mixes
    writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _earlier_entries(path: str) -> list[dict[str, Any]]:
    """The cases a resumed run's detailed.json already holds."""
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as error:
        raise UserError(f"cannot resume from it: {error}", key=f"detailed.json '{path}'") from None
    if not isinstance(entries, list):
        raise UserError("cannot resume from it: not a JSON list", key=f"detailed.json '{path}'")
    return entries


class JaxBenchFiles(Sink):
    def __init__(self, directory: str, resume: bool, overwrite: bool) -> None:
        self.directory = directory
        self.resume, self.overwrite = resume, overwrite
        self.entries: list[dict[str, Any]] = []
        self.number = 1
        self.foreign_presets: set[str] = set()  # presets already said to be another chip's

    def _pair(self, n: int) -> tuple[str, str]:
        return (
            numbered(os.path.join(self.directory, SUMMARY), n),
            numbered(os.path.join(self.directory, DETAILED), n),
        )

    def open(self) -> None:
        n = 1
        while any(os.path.lexists(p) for p in self._pair(n)):
            n += 1
        if self.overwrite:
            n = 1
        elif self.resume and n > 1:
            n -= 1
            self.entries = _earlier_entries(self._pair(n)[1])
        self.number = n
        for path, key in zip(self._pair(n), ("summary.csv", "detailed.json"), strict=True):
            check_new_file(path, key, overwrite=self.overwrite or self.resume)

    def row(self, case: Case, row: Row) -> None:
        if case.origin is None or not row.ok:
            return
        self._check_preset(case.origin.hardware, row.environment.device_kind)
        self.entries.append(detailed_entry(case, case.origin, row))
        summary, detailed = self._pair(self.number)
        write_atomically(detailed, lambda f: json.dump(self.entries, f, indent=2, default=str))
        write_atomically(summary, lambda f: write_summary(f, self.entries))

    def _check_preset(self, stats: HardwareStats | None, device_kind: str | None) -> None:
        """Say once per preset when its peaks are another chip's: the roofline fields then compare
        this device with that chip, which the summary cannot show."""
        if stats is None or stats.describes(device_kind) or stats.name in self.foreign_presets:
            return
        self.foreign_presets.add(stats.name)
        print(
            f"warning: system '{stats.name}' gives {', '.join(stats.chips)} peaks; this run is on "
            f"{device_kind}: summary.csv's roofline fields compare it with that chip, not its own peaks"
        )

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if self.entries:
            print(f"jax-bench summary: {', '.join(self._pair(self.number))}")


@register_sink("jax_bench", order=30)
def jax_bench_files(context: RunContext) -> Sink | None:
    """For runs with cases a v2 config (or a one-off --run of a v2 name) asked for."""
    if not any(c.origin is not None for c in context.cases):
        return None
    options = context.options
    directory = os.path.dirname(options.output) if options.output else options.output_dir
    return JaxBenchFiles(directory or ".", options.resume, options.overwrite)
