"""`xlml_metrics_dir`: the reference's `metrics_report.jsonl` for users' dashboards: one JSON object per
finished case, appended, in the reference's metric names (`tflops_per_sec_pre_device` included) and
string dimensions; the numbers are per-iteration device times (docs/ironwood.md)."""

from __future__ import annotations

import json
import os
from typing import Any

from accelbench.core.case import Case
from accelbench.core.samples import Samples
from accelbench.results.records import Row, used_devices
from accelbench.results.sinks import RunContext, Sink, register_sink
from accelbench.results.writer import OutputFailed, check_writable

REPORT = "metrics_report.jsonl"
PERCENTILES = (10, 50, 90, 95, 99)


def statistics(name: str, values: list[float]) -> dict[str, float]:
    """`name_p10 ... name_p99, name_avg, name_max, name_min, name_num_runs`, linear percentiles."""
    s = Samples(values)
    out = {f"{name}_p{q}": s.percentile_s(q) for q in PERCENTILES}
    extremes = {"avg": s.mean_s, "max": s.max_s, "min": s.min_s, "num_runs": float(len(values))}
    return out | {f"{name}_{key}": value for key, value in extremes.items()}


def metrics_record(row: Row, started: str, ended: str) -> dict[str, Any]:
    """The reference's record for one ok row (MFU only where the peak is known)."""
    devices = used_devices(row) or 1
    step_ms = [s * 1e3 for s in row.series.samples_s]
    metrics = statistics("step_time_ms", step_ms)
    dims: dict[str, Any] = {}
    flops, nbytes = row.derived.model_flop, row.derived.model_bytes
    peak = row.roofline.peak_tflop_per_s
    if flops:
        per_device = [flops / devices / (t / 1e3) / 1e12 for t in step_ms]
        metrics |= statistics("tflops_per_sec_pre_device", per_device)
        metrics |= statistics("tflops_per_sec", [flops / (t / 1e3) / 1e12 for t in step_ms])
        median = Samples(per_device).median_s
        dims["Throughput(median,TFLOP/s/device)"] = median
        dims["TotalThroughput(median,TFLOP/s)"] = median * devices
        dims["total_flops"] = flops / devices
        if peak:
            mfu = [v / (peak / devices) for v in per_device]
            metrics |= statistics("MFU", mfu)
            dims["MFU"] = Samples(mfu).median_s
    if nbytes:
        per_device = [nbytes / devices / (t / 1e3) / 1e9 for t in step_ms]
        metrics |= statistics("Gbytes_per_sec_per_device", per_device)
        metrics |= statistics("Gbytes_per_sec", [nbytes / (t / 1e3) / 1e9 for t in step_ms])
        dims["Throughput(median,GBytes/s/device)"] = Samples(per_device).median_s
        dims["total_bytes"] = nbytes / devices
    dims["StepTime(median,ms)"] = Samples(step_ms).median_s
    dimensions = {
        **{k: v for k, v in row.params.as_dict().items() if v not in (None, "")},
        **dims,
        "backend": row.identity.backend,
        "implementation": row.identity.implementation,
        "timing_source": row.timing.timing_source,
        "case_id": row.identity.case_id,
        "testsuite": "microbenchmark",
        "test_name": row.identity.benchmark,
        "test_start_timestamp": started,
        "test_end_timestamp": ended,
    }
    return {
        "metrics": metrics,
        "dimensions": {k: "" if v is None else str(v) for k, v in dimensions.items()},
    }


def append_record(directory: str, record: dict[str, Any]) -> None:
    """Append one line and make it durable before the next case starts."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, REPORT)
    try:  # never through a link planted at its name
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as error:
        raise OutputFailed(f"cannot append to it: {error.strerror}", file=path) from None
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


class XlmlReports(Sink):
    def __init__(self, directories: set[str]) -> None:
        self.directories = directories

    def open(self) -> None:
        for directory in sorted(self.directories):
            check_writable(os.path.join(directory, REPORT), key="xlml_metrics_dir")

    def row(self, case: Case, row: Row) -> None:
        directory = case.outputs.xlml_metrics_dir
        if directory and row.ok:
            append_record(directory, metrics_record(row, row.started, row.identity.timestamp))


@register_sink("xlml", order=10)
def xlml_reports(context: RunContext) -> Sink | None:
    wanted = {c.outputs.xlml_metrics_dir for c in context.cases if c.outputs.xlml_metrics_dir}
    return XlmlReports(wanted) if wanted else None
