"""Turning a measurement (or a failure) into the flat row the writer stores."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from microbench.environment import timestamp
from microbench.hardware import lookup, with_overrides
from microbench.measurement import DeviceInfo, Measurement
from microbench.plan import Case
from microbench.registry import OpSpec
from microbench.roofline import derive
from microbench.stats import summarize

NOISE_THRESHOLD = 0.10  # IQR / median above this marks a row as noisy


def _identity(case: Case, spec: OpSpec, status: str, error: str, run_id: str) -> dict[str, Any]:
    return {"case_id": case.id, "run_id": run_id, "timestamp": timestamp(), "status": status, "error": error,
            "suite": spec.suite, "benchmark": case.benchmark, "op": case.op, "backend": case.backend,
            "label": case.label, **case.params, "config_id": case.config_id}


def _device(device: DeviceInfo | None) -> dict[str, Any]:
    if device is None:
        return {}
    return {"device_kind": device.kind, "device_count": device.count, "platform": device.platform,
            "framework": device.framework, "framework_version": device.framework_version}


def failure_record(case: Case, spec: OpSpec, status: str, reason: str, run_id: str,
                   env: dict[str, Any], device: DeviceInfo | None = None) -> dict[str, Any]:
    return {**_identity(case, spec, status, reason, run_id), **_device(device), **env}


def success_record(case: Case, spec: OpSpec, m: Measurement, run_id: str, env: dict[str, Any],
                   peak_overrides: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The row and the raw data (samples, kernel breakdown) of a timed case."""
    t = m.timing
    stats = summarize(t.samples_s)
    flagged = m.check.startswith("flagged")
    devices_used = int(m.extra.get("devices_used", 1) or 1)
    flops, nbytes = spec.flops(case.params), spec.bytes(case.params)
    if m.extra.get("sharding") == "replicated":  # every device does the whole op
        flops, nbytes = flops * devices_used, nbytes * devices_used
    peaks = with_overrides(lookup(m.device.kind), peak_overrides)
    if devices_used > 1:  # the table is per chip
        peaks = replace(peaks, **{f.name: getattr(peaks, f.name) * devices_used for f in fields(peaks)
                                  if isinstance(getattr(peaks, f.name), (int, float))})
    derived = derive(flops, nbytes, stats["median"], peaks, spec.peak_dtype(case.params))
    top = t.kernels[0] if t.kernels else None
    record = {
        **_identity(case, spec, "wrong_result" if flagged else "ok", m.check if flagged else "", run_id),
        "implementation": m.implementation,
        **{f"time_{k}_s": stats[k] for k in ("median", "mean", "min", "max", "p10", "p90", "std")},
        "samples": stats["count"], "iqr_over_median": stats["iqr_over_median"],
        "noisy": stats["iqr_over_median"] > NOISE_THRESHOLD,
        "timing_source": t.source, "timing_fallback": t.fallback or "",
        "wall_median_s": summarize(t.wall_samples_s)["median"] if t.wall_samples_s else None,
        "compile_s": m.compile_s, "max_rel_error": m.max_rel_error, "check": m.check,
        "dominant_kernel": top.name if top else None, "dominant_kernel_share": top.share if top else None,
        "dominant_kernel_s": top.mean_s * top.per_iter if top else None,
        "kernels_per_iter": sum(k.per_iter for k in t.kernels) if t.kernels else None,
        "trace_path": t.trace_path, **derived,
        "per_device_tflops": (derived["tflops"] / devices_used) if derived["tflops"] else None,
        **m.extra, **_device(m.device), **env,
    }
    if spec.suite == "elementwise":  # the seed's name for achieved bandwidth over the device's peak
        record["gpu_efficiency"] = derived["pct_peak_gbps"]
    raw = {"samples_s": t.samples_s, "wall_samples_s": t.wall_samples_s,
           "kernels": [k.as_dict() for k in t.kernels]}
    return record, raw
