"""Typed rows: what one case leaves in the results, from measurement to writer.

A row is a few typed groups plus the op's parameters and the op's declared extras (a dataclass named by
its spec's `row_extras`). The CSV columns are generated from these classes (`results.columns`), so a value
that no class declares cannot reach a file, and a suite that hands back undeclared extras fails loudly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from microbench.catalogue import OpSpec
from microbench.core.case import Case
from microbench.core.samples import median_or_none
from microbench.core.types import DeviceInfo, Measurement
from microbench.errors import Status
from microbench.platform.environment import timestamp
from microbench.platform.hardware import Peaks, lookup, with_overrides
from microbench.results.roofline import derive


@dataclass
class Identity:
    case_id: str
    run_id: str
    timestamp: str
    status: Status
    error: str
    suite: str
    benchmark: str
    op: str
    backend: str
    implementation: str | None
    label: str


@dataclass
class Conditions:
    """What the time means and what it ran under: every row, failed or not, says so."""

    timer: str | None = None  # requested (auto or a name); timing_source says what ran
    cache: str | None = None  # cold: caches flushed before every iteration; warm: not
    cadence: str | None = (
        None  # blocked: each iteration waits for its outputs; sustained: back to back
    )
    thread_count: int | None = None  # host threads of the framework (CPU ops)


@dataclass
class TimeStats:
    time_median_s: float | None = None
    time_mean_s: float | None = None
    time_min_s: float | None = None
    time_max_s: float | None = None
    time_p10_s: float | None = None
    time_p90_s: float | None = None
    time_std_s: float | None = None
    sample_count: int | None = None
    iqr_over_median_ratio: float | None = None
    noisy: bool | None = None
    decile_drift_ratio: float | None = (
        None  # median of the last tenth of the samples over the first's
    )
    decile_sample_count: int | None = None  # samples in each tenth
    throttled: bool | None = None  # decile_drift_ratio > 1.05 (no verdict under 5 samples a tenth)


@dataclass
class TimingInfo:
    timing_source: str | None = None
    device_span_median_s: float | None = None
    launch_median_s: float | None = None
    wall_median_s: float | None = None
    compile_s: float | None = None
    dominant_kernel: str | None = None
    dominant_kernel_pct: float | None = None
    dominant_kernel_s: float | None = None
    kernels_per_iter: float | None = None
    top_kernels: str | None = None  # the three largest: "name xlaunches share%; ..."
    max_rel_error_ratio: float | None = None
    check: str | None = None
    check_mode: str | None = None
    trace_path: str | None = None
    # sampled along the case by nvidia-ml-py where the op asks for it (gemm_throttling)
    sm_clock_first_mhz: float | None = None
    sm_clock_last_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    temperature_max_c: float | None = None
    power_max_w: float | None = None


@dataclass
class Derived:
    model_flop: float | None = None  # the op's FLOP model for one call
    model_bytes: float | None = None  # the op's byte model for one call
    tflop_per_s: float | None = None
    gb_per_s: float | None = None  # 1e9 bytes per second
    intensity_flop_per_byte: float | None = None
    per_device_tflop_per_s: float | None = None


@dataclass
class Roofline:
    peak_chip: str | None = None
    peak_family: str | None = None
    peak_tflop_per_s: float | None = None
    peak_gb_per_s: float | None = None
    compute_of_peak_pct: float | None = None
    bandwidth_of_peak_pct: float | None = None
    roofline_bound_s: float | None = None
    roofline_bound_by: str | None = None
    roofline_attained_pct: float | None = None


@dataclass
class Pairing:
    cross_backend_rel_error_ratio: float | None = None
    paired_with: str | None = None
    paired_implementation: str | None = (
        None  # the other backend's implementation (both rows: device time)
    )


@dataclass
class Environment:
    device_kind: str | None = None
    device_count: int | None = None
    platform: str | None = None
    framework: str | None = None
    framework_version: str | None = None
    host: str | None = None
    host_cpu_count: int | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None  # uncommitted changes to tracked files when the run started
    packages: str | None = (
        None  # installed versions: jax, jaxlib, libtpu, torch, torchao, triton, ...
    )
    gpu_driver: str | None = None
    gpu_clocks_mhz_at_start: str | None = None  # "index:sm=MHz,mem=MHz" per GPU as the run started
    env_flags: str | None = None  # XLA_FLAGS, LIBTPU_INIT_ARGS, CUDA_VISIBLE_DEVICES as set
    config_id: str | None = None


# Column blocks in file order; the op's parameters follow Identity, its extras precede Environment.
HEAD_GROUPS: tuple[type, ...] = (Identity,)
BODY_GROUPS: tuple[type, ...] = (TimeStats, Conditions, TimingInfo, Derived, Roofline, Pairing)
TAIL_GROUPS: tuple[type, ...] = (Environment,)


def group_columns(groups: tuple[type, ...]) -> tuple[str, ...]:
    return tuple(f.name for g in groups for f in fields(g))


@dataclass
class Row:
    identity: Identity
    params: dict[str, Any]
    stats: TimeStats = field(default_factory=TimeStats)
    conditions: Conditions = field(default_factory=Conditions)
    timing: TimingInfo = field(default_factory=TimingInfo)
    derived: Derived = field(default_factory=Derived)
    roofline: Roofline = field(default_factory=Roofline)
    pairing: Pairing = field(default_factory=Pairing)
    extras: Any = None
    environment: Environment = field(default_factory=Environment)
    raw: dict[str, Any] = field(
        default_factory=dict
    )  # samples and kernel breakdown: JSON lines only

    def as_dict(self) -> dict[str, Any]:
        """The flat row: every declared column (and nothing else), in file order."""
        flat: dict[str, Any] = {}
        for part in (
            self.identity,
            self.params,
            self.stats,
            self.conditions,
            self.timing,
            self.derived,
            self.roofline,
            self.pairing,
            self.extras,
            self.environment,
        ):
            if part is None:
                continue
            values = (
                part
                if isinstance(part, dict)
                else {f.name: getattr(part, f.name) for f in fields(part)}
            )
            for key, value in values.items():
                flat.setdefault(key, value.value if isinstance(value, Enum) else value)
        return flat


def _environment(case: Case, device: DeviceInfo | None, env: dict[str, Any]) -> Environment:
    known = {f.name for f in fields(Environment)}
    values = {k: v for k, v in env.items() if k in known}
    if device is not None:
        values.update(
            device_kind=device.kind,
            device_count=device.count,
            platform=device.platform,
            framework=device.framework,
            framework_version=device.framework_version,
        )
    return Environment(**values, config_id=case.config_id)


def _conditions(case: Case, device: DeviceInfo | None, measured: bool = True) -> Conditions:
    """`measured`: the device info was read while the case ran, so its thread count is what it had;
    a failed case's row says what it asked for, or the framework's default."""
    if measured or case.run.threads is None:
        threads = device.threads if device is not None and device.threads else case.run.threads
    else:
        threads = case.run.threads
    return Conditions(
        timer=case.run.timer, cache=case.run.cache, cadence=case.run.cadence, thread_count=threads
    )


TOP_KERNELS = 3
KERNEL_NAME_CHARS = 60


def top_kernels(kernels: list[Any]) -> str | None:
    """The largest kernels in one cell, so a slow row says where its time went."""
    if not kernels:
        return None
    return "; ".join(
        f"{k.name[:KERNEL_NAME_CHARS]} x{k.per_iter:g} {k.share:.0%}" for k in kernels[:TOP_KERNELS]
    )


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
        params=dict(case.params),
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


def success_row(
    case: Case,
    spec: OpSpec,
    m: Measurement,
    run_id: str,
    env: dict[str, Any],
    peak_overrides: dict[str, Any] | None,
) -> Row:
    """The row of a timed case, its raw samples and kernel breakdown attached for the JSON lines."""
    check_extras(spec, m.extras)
    t = m.timing
    median = t.median_s
    used_device_count = int(getattr(m.extras, "used_device_count", 1) or 1)
    flops, nbytes = spec.flops(case.params), spec.bytes(case.params)
    if getattr(m.extras, "sharding", None) == "replicated":  # every device does the whole op
        flops, nbytes = flops * used_device_count, nbytes * used_device_count
    peaks = with_overrides(lookup(m.device.kind), peak_overrides)
    if not spec.traits.roofline:  # interconnect traffic: HBM and FLOP peaks do not bound it
        peaks = Peaks(chip=peaks.chip)
    if used_device_count > 1:  # the table is per chip
        peaks = replace(
            peaks,
            **{
                f.name: getattr(peaks, f.name) * used_device_count
                for f in fields(peaks)
                if isinstance(getattr(peaks, f.name), (int, float))
            },
        )
    derived: dict[str, Any] = derive(flops, nbytes, median, peaks, spec.peak_dtype(case.params))
    top = t.kernels[0] if t.kernels else None
    roofline = Roofline(**{f.name: derived.pop(f.name) for f in fields(Roofline)})
    status = Status.WRONG_RESULT if m.check.flagged else Status.OK
    tflops = derived.pop("tflop_per_s")
    drift = t.drift
    return Row(
        identity=_identity(
            case, spec, status, m.check.text if m.check.flagged else "", run_id, m.implementation
        ),
        params=dict(case.params),
        stats=TimeStats(
            time_median_s=median,
            time_mean_s=t.mean_s,
            time_min_s=t.min_s,
            time_max_s=t.max_s,
            time_p10_s=t.p10_s,
            time_p90_s=t.p90_s,
            time_std_s=t.std_s,
            sample_count=t.count,
            iqr_over_median_ratio=t.iqr_ratio,
            noisy=t.noisy,
            decile_drift_ratio=drift.ratio,
            decile_sample_count=drift.per_tenth,
            throttled=drift.throttled,
        ),
        conditions=_conditions(case, m.device),
        timing=TimingInfo(
            timing_source=t.source,
            device_span_median_s=median_or_none(t.span_samples_s),
            launch_median_s=median_or_none(t.launch_samples_s),
            wall_median_s=median_or_none(t.wall_samples_s),
            compile_s=m.compile_s,
            dominant_kernel=top.name if top else None,
            dominant_kernel_pct=100 * top.share if top else None,
            dominant_kernel_s=top.mean_s * top.per_iter if top else None,
            kernels_per_iter=sum(k.per_iter for k in t.kernels) if t.kernels else None,
            top_kernels=top_kernels(t.kernels),
            max_rel_error_ratio=m.check.max_rel_error_ratio,
            check=m.check.text,
            check_mode=m.check.mode,
            trace_path=t.trace_path,
        ),
        derived=Derived(
            model_flop=derived.pop("model_flop"),
            model_bytes=derived.pop("model_bytes"),
            tflop_per_s=tflops,
            gb_per_s=derived.pop("gb_per_s"),
            intensity_flop_per_byte=derived.pop("intensity_flop_per_byte"),
            per_device_tflop_per_s=tflops / used_device_count if tflops else None,
        ),
        roofline=roofline,
        extras=m.extras,
        environment=_environment(case, m.device, env),
        raw={
            "samples_s": t.samples_s,
            "wall_samples_s": t.wall_samples_s,
            "span_samples_s": t.span_samples_s,
            "launch_samples_s": t.launch_samples_s,
            "kernels": [k.as_dict() for k in t.kernels],
            **({"device_samples_s": t.device_samples_s} if t.device_samples_s else {}),
        },
    )
