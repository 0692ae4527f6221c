"""A row made from what a case did: its measurement (or why it has none), case, spec and environment."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import asdict, fields, replace
from typing import Any

from accelbench.catalogue import OpSpec
from accelbench.core.case import Case
from accelbench.core.samples import median_or_none
from accelbench.core.types import DeviceInfo, Measurement, Timing
from accelbench.errors import Status
from accelbench.measure.throttle import ThrottleReport
from accelbench.platform.environment import timestamp
from accelbench.platform.gpu_monitor import MonitorSummary
from accelbench.results.records import (
    SAMPLE_LISTS,
    Conditions,
    DeviceState,
    Environment,
    Identity,
    Row,
    Series,
    TimeStats,
    TimingInfo,
    recorded_setting,
    setting_columns,
)
from accelbench.results.roofline import Derived, Roofline, derive
from accelbench.specs import Peaks, lookup, with_overrides


def _environment(case: Case, device: DeviceInfo | None, env: dict[str, Any]) -> Environment:
    known = {f.name for f in fields(Environment)}
    values = {k: v for k, v in env.items() if k in known}
    if device is not None:
        values.update(device_kind=device.kind, device_count=device.count)
        values |= {k: getattr(device, k) for k in ("platform", "framework", "framework_version")}
    return Environment(**values, config_id=case.config_id)


def host_load() -> float | None:
    """The 1-minute load average per core (None where the system does not say)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return None


def _conditions(case: Case, device: DeviceInfo | None, measured: bool = True) -> Conditions:
    """`measured`: the device's thread count is what the case had; a failed case's is what it asked."""
    asked = case.run.threads
    read = device.threads if device is not None and (measured or asked is None) else None
    settings = {column: recorded_setting(case.run, f) for column, f in setting_columns().items()}
    settings["thread_count"] = read or asked
    return Conditions(**settings, host_load_ratio=host_load() if measured else None)


def _identity(
    case: Case, spec: OpSpec, status: Status, error: str, run_id: str, implementation: str | None
) -> Identity:
    return Identity(
        case_id=case.id,
        run_id=run_id,
        timestamp=timestamp(),
        status=status,
        error=error,
        suite=spec.suite,
        benchmark=case.benchmark,
        op=case.op,
        backend=case.backend,
        implementation=implementation,
        label=case.label,
        repeat_count=case.occurrence or None,
    )


def failure_row(
    case: Case,
    spec: OpSpec,
    status: Status,
    reason: str,
    run_id: str,
    env: dict[str, Any],
    device: DeviceInfo | None = None,
) -> Row:
    return Row(
        identity=_identity(case, spec, status, reason, run_id, case.implementation),
        params=case.params,
        conditions=_conditions(case, device, measured=False),
        environment=_environment(case, device, env),
    )


def check_extras(spec: OpSpec, extras: Any) -> None:
    """A suite may only report what its op declares (spec.row_extras): anything else is a bug, not a drop."""
    declared = spec.row_extras
    if declared is None and extras is None:
        return
    if declared is None or not (dataclasses.is_dataclass(extras) and isinstance(extras, declared)):
        want = declared.__name__ if declared else "no extras"
        raise TypeError(
            f"op {spec.name!r} declares {want} but its measurement returned {type(extras).__name__}"
        )


def time_stats(t: Timing) -> TimeStats:
    drift = t.drift
    named = ("median", "mean", "min", "max", "p10", "p90", "std")
    return TimeStats(
        **{f"time_{x}_s": getattr(t, f"{x}_s") for x in named},
        sample_count=t.count,
        iqr_over_median_ratio=t.iqr_ratio,
        noisy=t.noisy,
        decile_drift_ratio=drift.ratio,
        decile_sample_count=drift.per_tenth,
        throttled=drift.throttled,
        median_precision_ratio=t.precision_ratio,
        stop_reason=t.stop_reason,
    )


def _timing_info(
    m: Measurement, clocks: ThrottleReport | None, monitor: MonitorSummary | None
) -> TimingInfo:
    t = m.timing
    top = t.kernels[0] if t.kernels else None
    # the clocks' columns, the charted monitor's after them (its lowest clock is the whole case's)
    watched = {**(asdict(clocks) if clocks else {}), **(asdict(monitor) if monitor else {})}
    watched.pop("series", None)
    return TimingInfo(
        **watched,
        timing_source=t.source,
        device_span_median_s=median_or_none(t.span_samples_s),
        launch_median_s=median_or_none(t.launch_samples_s),
        wall_median_s=median_or_none(t.wall_samples_s),
        compile_s=m.compile_s,
        timed_loop_s=t.loop_s,
        cpu_wait_ratio=t.loop_wait_s / t.loop_s if t.loop_wait_s is not None and t.loop_s else None,
        soak_baseline_median_s=median_or_none(t.soak.baseline_s) if t.soak else None,
        soak_first_chunk_s=t.soak.chunks_s[0] if t.soak else None,
        soak_last_chunk_s=t.soak.chunks_s[-1] if t.soak else None,
        flush_s=t.flush_s or None,
        profiler_session_s=t.session_s or None,
        input_set_count=m.input_sets,
        dominant_kernel=top.name if top else None,
        dominant_kernel_pct=100 * top.share if top else None,
        dominant_kernel_s=top.mean_s * top.per_iter if top else None,
        kernels_per_iter=sum(k.per_iter for k in t.kernels) if t.kernels else None,
        # the largest three in one cell, so a slow row says where its time went
        top_kernels="; ".join(f"{k.name[:60]} x{k.per_iter:g} {k.share:.0%}" for k in t.kernels[:3])
        or None,
        max_rel_error_ratio=m.check.max_rel_error_ratio,
        check=m.check.text,
        check_mode=m.check.mode,
        trace_path=t.trace_path,
        audit=" ".join(f"{f.name}={f.figure:.3g}" for f in t.audit) or None,
        audit_detail="; ".join(f"{f.name}: {f.detail}" for f in t.audit) or None,
    )


def _series(t: Timing, monitor: MonitorSummary | None) -> Series:
    return Series(
        gpu_monitor=list(monitor.series) if monitor else [],
        **{name: list(getattr(t, name)) for name in SAMPLE_LISTS},
        kernels=list(t.kernels),
        device_samples_s=dict(t.device_samples_s),
        telemetry=_telemetry(t),
    )


def _telemetry(t: Timing) -> dict[str, Any]:
    """The telemetry of the timed window, and a soak's peak temperatures before it (as TPUMS)."""
    out = dict(t.telemetry or {})
    before = t.soak.baseline_telemetry if t.soak else None
    if out and before:
        for key in ("hbm_peak_temp_c", "peak_temp_c"):
            out[f"{key}_pre_soaking"] = before.get(key)
    return out


def _models_and_roofline(
    case: Case, spec: OpSpec, m: Measurement, peak_overrides: dict[str, Any] | None
) -> tuple[Derived, Roofline]:
    """Throughput from the op's models and the roofline, for the devices the op ran on."""
    used_device_count = int(getattr(m.extras, "used_device_count", 1) or 1)
    flops, nbytes = spec.flops(case.params), spec.bytes(case.params)
    if getattr(m.extras, "sharding", None) == "replicated":  # every device does the whole op
        flops, nbytes = flops * used_device_count, nbytes * used_device_count
    peaks = with_overrides(lookup(m.device.kind), peak_overrides)
    if not spec.traits.roofline:  # interconnect traffic: HBM and FLOP peaks do not bound it
        peaks = Peaks(chip=peaks.chip)
    if used_device_count > 1:  # the table is per chip
        numbers: dict[str, Any] = {
            k: v for k, v in asdict(peaks).items() if isinstance(v, (int, float))
        }
        peaks = replace(peaks, **{k: v * used_device_count for k, v in numbers.items()})
    derived, roofline = derive(
        flops, nbytes, m.timing.median_s, peaks, spec.peak_dtype(case.params)
    )
    tflops = derived.tflop_per_s
    derived.per_device_tflop_per_s = tflops / used_device_count if tflops else None
    if m.compiler is not None:
        derived.compiler_flop, derived.compiler_bytes = m.compiler.flops, m.compiler.bytes
    return derived, roofline


def success_row(
    case: Case,
    spec: OpSpec,
    m: Measurement,
    run_id: str,
    env: dict[str, Any],
    peak_overrides: dict[str, Any] | None,
    clocks: ThrottleReport | None = None,
    monitor: MonitorSummary | None = None,
) -> Row:
    """The row of a timed case (`clocks`: the throttle policy's, `monitor`: the clocks charted)."""
    check_extras(spec, m.extras)
    derived, roofline = _models_and_roofline(case, spec, m, peak_overrides)
    status = Status.WRONG_RESULT if m.check.flagged else Status.OK
    error = m.check.text if m.check.flagged else ""
    return Row(
        identity=_identity(case, spec, status, error, run_id, m.implementation),
        params=case.params,
        stats=time_stats(m.timing),
        conditions=_conditions(case, m.device),
        device_state=m.device_state or DeviceState(),
        timing=_timing_info(m, clocks, monitor),
        derived=derived,
        roofline=roofline,
        extras=m.extras,
        environment=_environment(case, m.device, env),
        series=_series(m.timing, monitor),
        loop_started=m.timing.loop_started_at,
    )
