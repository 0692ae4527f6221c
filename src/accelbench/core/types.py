"""What a backend prepares for one case, and what measuring it yields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelbench.core.samples import SampleStats
from accelbench.platform.gpu_monitor import DeviceState


@dataclass(frozen=True)
class DeviceInfo:
    kind: str
    count: int
    platform: str
    framework: str
    framework_version: str
    threads: int | None = None  # host threads the framework uses for CPU work


@dataclass
class Kernel:
    name: str
    per_iter: float  # launches per iteration
    mean_s: float  # mean duration of one launch
    share: float  # fraction of the iteration's device time


@dataclass(frozen=True)
class Finding:
    """One finding of a timed loop's audit (measure/audit.py): its check, the figure, in words too."""

    name: str
    figure: float
    detail: str


@dataclass(frozen=True)
class SoakPhases:
    """TPUMS's soak beside its worst window (the timing's samples): the traced baseline window's
    samples after warm-up, and each untraced chunk's wall per iteration."""

    baseline_s: list[float]
    chunks_s: list[float]
    baseline_telemetry: dict[str, Any] | None = None  # the device's firmware, before the soak


# Timing's series with one value per sample (a device's own: `device_samples_s`)
PER_SAMPLE = ("samples_s", "wall_samples_s", "span_samples_s", "launch_samples_s", "thermal_levels")


@dataclass
class Timing(SampleStats):
    """A timer's result; its statistics are those of `samples_s`, the headline series."""

    samples_s: list[float]  # one per iteration: the row's headline time
    source: str  # the timer that produced them, e.g. xprof_gpu, cupti, wall_clock
    wall_samples_s: list[float] = field(default_factory=list)  # host wall per blocked iteration
    # first kernel start to last kernel end; launch-inclusive (events or host wall)
    span_samples_s: list[float] = field(default_factory=list)
    launch_samples_s: list[float] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    trace_path: str | None = None
    # a many-device op's (a collective's) per-device times; samples_s is then the slowest's
    device_samples_s: dict[str, list[float]] = field(default_factory=dict)
    stop_reason: str = "num_runs"  # why timing stopped (the stop_reason column says which values)
    # the timed loop's start (epoch s) and length: no warm-up or check, the trace's stop and parse in
    loop_started_at: float | None = None
    loop_s: float | None = None
    loop_wait_s: float | None = None  # its threads' time waiting for a CPU over the same loop
    # host wall on cache flushes (outside the samples) and on profiler sessions, both inside loop_s
    flush_s: float = 0.0
    session_s: float = 0.0
    soak: SoakPhases | None = None  # a soak in phases (soak_chunk): its baseline and chunks
    # a TPU's firmware telemetry over the traced window (jax_backend/telemetry.py); None elsewhere
    telemetry: dict[str, Any] | None = None
    # per sample, the highest thermal throttle level a TPU reported (what `throttle` judges it by)
    thermal_levels: list[float] = field(default_factory=list)
    audit: tuple[Finding, ...] = ()  # what the trace says the timed windows held (measure/audit.py)

    def _values(self) -> list[float]:
        return self.samples_s

    def extend(self, later: Timing) -> None:
        """Append a later round of the same timer: every series grows; kernels and trace: the latest."""
        for name in PER_SAMPLE:
            getattr(self, name).extend(getattr(later, name))
        for device, samples in later.device_samples_s.items():
            self.device_samples_s.setdefault(device, []).extend(samples)
        self.flush_s += later.flush_s
        self.session_s += later.session_s
        self.kernels = later.kernels or self.kernels
        self.trace_path = later.trace_path or self.trace_path
        self.telemetry = merged_telemetry(self.telemetry, later.telemetry)
        worst: dict[str, Finding] = {}  # each check's finding: the round where it was largest
        for found in (*self.audit, *later.audit):
            if found.name not in worst or found.figure > worst[found.name].figure:
                worst[found.name] = found
        self.audit = tuple(worst.values())


# upstream's four TPU telemetry keys (core/throttle_profiler.py @286dfeb9): maxima over every trace
TELEMETRY_MAXIMA = ("hbm_peak_temp_c", "peak_temp_c", "hbm_throttle_pct", "thermal_throttle_level")


def merged_telemetry(
    earlier: dict[str, Any] | None, later: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Two traces of one case: upstream's four keys the highest of both (upstream reads every trace),
    the rest the later trace's."""
    if not (earlier and later):
        return later or earlier
    highest = (
        max((v for v in (earlier.get(k), later.get(k)) if v is not None), default=None)
        for k in TELEMETRY_MAXIMA
    )
    return {**later, **dict(zip(TELEMETRY_MAXIMA, highest, strict=True))}


def slowest_per_iteration(per_device: dict[str, list[float]]) -> list[float]:
    """Per iteration, the slowest device's time (a collective is done when its last member is)."""
    runs = [s for s in per_device.values() if s]
    return [max(column) for column in zip(*runs, strict=False)]  # as far as the shortest goes


@dataclass(frozen=True)
class CompilerCounts:
    """The compiler's own count of one call's work (XLA's cost analysis), beside the op's models."""

    flops: float | None = None
    bytes: float | None = None


@dataclass
class Prepared:
    """A ready-to-call op with its inputs in place, and how to check it. `companions` are timed right
    after it by the same timer (a suite's other side); `finish` makes the suite's declared extras."""

    call: Callable[[], Any]  # one iteration; returns its outputs (maybe not yet computed)
    sync: Callable[[Any], None]  # block until those outputs are computed
    # error against the reference (None: not computed); raises wrong_result
    check: Callable[[Any], float | None] | None = None
    # a few output rows, for cross-backend pairing
    digest: Callable[[Any], dict[str, np.ndarray]] = lambda out: {}
    compile_s: float | None = None
    compiler: CompilerCounts | None = None
    implementation: str = "default"
    device: Any = None  # the framework's device object, for device timers
    companions: dict[str, Prepared] = field(default_factory=dict)
    known_timings: dict[str, Timing] = field(default_factory=dict)  # measured by an earlier case
    finish: Callable[[Timing, dict[str, Timing]], Any] | None = None
    input_sets: int = 1  # input sets cycled through the iterations (inputs: rotate), each checked
    # a value's largest over the processes timed together (a collective's members): rounds agreed,
    # so none waits forever in a collective the others left; alone, the value itself
    agree: Callable[[float], float] = lambda value: value


@dataclass(frozen=True)
class CheckResult:
    mode: str  # strict | flag | off (the case's setting)
    outcome: str  # passed | flagged | off | skipped
    reason: str = ""
    max_rel_error_ratio: float | None = None

    @property
    def text(self) -> str:  # the `check` column
        return f"{self.outcome}: {self.reason}" if self.reason else self.outcome

    @property
    def flagged(self) -> bool:
        return self.outcome == "flagged"


@dataclass
class Measurement:
    timing: Timing
    device: DeviceInfo
    check: CheckResult
    compile_s: float | None = None
    compiler: CompilerCounts | None = None
    implementation: str = "default"
    extras: Any = None  # an instance of the suite's declared extras class (results.records)
    outputs_digest: dict[str, np.ndarray] = field(default_factory=dict)
    input_sets: int = 1
    device_state: DeviceState | None = None  # a GPU's settings as the case ran (NVML)
