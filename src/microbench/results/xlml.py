"""`xlml_metrics_dir`: the reference harness's `metrics_report.jsonl`, which users feed to their dashboards.

One JSON object per finished case, `{"metrics": {...}, "dimensions": {...}}`, appended as the reference
does. Metric names are the reference's, its `tflops_per_sec_pre_device` spelling included, so existing
dashboards read these files unchanged; the numbers are per-iteration device times (the reference summed
its iterations, docs/ironwood.md). Every dimension value is a string, as in the reference.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

REPORT = "metrics_report.jsonl"
PERCENTILES = (10, 50, 90, 95, 99)


def statistics(name: str, values: list[float]) -> dict[str, float]:
    """`name_p10 ... name_p99, name_avg, name_max, name_min, name_num_runs`, linear percentiles."""
    a = np.asarray(values, dtype=np.float64)
    out = {f"{name}_p{q}": float(np.percentile(a, q)) for q in PERCENTILES}
    out.update(
        {
            f"{name}_avg": float(a.mean()),
            f"{name}_max": float(a.max()),
            f"{name}_min": float(a.min()),
            f"{name}_num_runs": float(a.size),
        }
    )
    return out


def metrics_record(
    row: dict[str, Any],
    params: dict[str, Any],
    samples_s: list[float],
    started: str,
    ended: str,
) -> dict[str, Any]:
    """The reference's record for one ok row: FLOP metrics where the op has FLOPs, byte metrics where
    it moves bytes, MFU only where the peak is known."""
    devices = int(row.get("used_device_count") or 1)
    step_ms = [s * 1e3 for s in samples_s]
    metrics = statistics("step_time_ms", step_ms)
    dims: dict[str, Any] = {}
    flops, nbytes, peak = row.get("model_flop"), row.get("model_bytes"), row.get("peak_tflop_per_s")
    if flops:
        per_device = [flops / devices / (t / 1e3) / 1e12 for t in step_ms]
        metrics |= statistics("tflops_per_sec_pre_device", per_device)
        metrics |= statistics("tflops_per_sec", [flops / (t / 1e3) / 1e12 for t in step_ms])
        dims["Throughput(median,TFLOP/s/device)"] = float(np.median(per_device))
        dims["TotalThroughput(median,TFLOP/s)"] = float(np.median(per_device)) * devices
        dims["total_flops"] = flops / devices
        if peak:
            mfu = [v / (peak / devices) for v in per_device]
            metrics |= statistics("MFU", mfu)
            dims["MFU"] = float(np.median(mfu))
    if nbytes:
        per_device = [nbytes / devices / (t / 1e3) / 1e9 for t in step_ms]
        metrics |= statistics("Gbytes_per_sec_per_device", per_device)
        metrics |= statistics("Gbytes_per_sec", [nbytes / (t / 1e3) / 1e9 for t in step_ms])
        dims["Throughput(median,GBytes/s/device)"] = float(np.median(per_device))
        dims["total_bytes"] = nbytes / devices
    dims["StepTime(median,ms)"] = float(np.median(step_ms))
    dimensions = {
        **{k: v for k, v in params.items() if v not in (None, "")},
        **dims,
        "backend": row["backend"],
        "implementation": row.get("implementation"),
        "timing_source": row.get("timing_source"),
        "case_id": row["case_id"],
        "testsuite": "microbenchmark",
        "test_name": row["benchmark"],
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
    with open(os.path.join(directory, REPORT), "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
