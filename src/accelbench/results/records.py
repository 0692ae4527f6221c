"""Typed rows: a few typed groups, the op's typed parameters and its declared extras. The CSV columns
are generated from these classes, so an undeclared value cannot reach a file."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import typing
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, ClassVar, Protocol, runtime_checkable

from accelbench.catalogue import OpParams, ReadParams
from accelbench.core.case import (
    IN_ID_NEVER,
    OWN_POLICIES,
    RunSettings,
    declared_settings,
    identifying_settings,
)
from accelbench.core.column import noted
from accelbench.core.samples import NOISE_THRESHOLD
from accelbench.core.types import Kernel
from accelbench.errors import Status
from accelbench.platform.gpu_monitor import GPU_SAMPLE_FIELDS, DeviceState
from accelbench.results.roofline import Derived, Roofline


@dataclass(slots=True)
class Identity:
    case_id: str = noted("stable hash of op, backend, params, run settings", "")
    run_id: str = noted("one per `microbench run`", "")
    timestamp: str = noted("when the row was written, UTC", "")
    status: Status = noted("`" + "`, `".join(s.value for s in Status) + "`", Status.OK)
    error: str = noted("why a row has no clean number", "")
    suite: str = ""
    benchmark: str = ""
    op: str = ""
    backend: str = ""
    implementation: str | None = None
    label: str = ""
    repeat_count: int | None = noted(
        "how many times the file asked for this case before (a jax-bench file under upstream's "
        "conditions runs each ask); blank the first time"
    )


# a run setting's rule kind -> the Python type its condition column holds (other kinds: str)
RULE_TYPES: dict[str, type] = {"count": int, "seconds": float, "duration": float, "fraction": float}


@functools.cache
def setting_columns(compared_only: bool = False) -> dict[str, Any]:
    """Each run setting that a row records, by its Conditions column: the setting's declaration."""
    return {
        f.metadata["column"]: f
        for f in declared_settings()
        if f.metadata["column"] and (f.metadata["compared"] or not compared_only)
    }


def identifying_columns() -> dict[str, Any]:
    """The setting columns of a case's id, which a resumed file's rows must share (not thread_count)."""
    return {
        column: declared
        for column, declared in setting_columns().items()
        if declared.metadata["in_id"] != IN_ID_NEVER and column != "thread_count"
    }


T = typing.TypeVar("T")


def with_setting_columns(cls: type[T]) -> type[T]:
    """The class with a column first for each run setting that declares one (no other edit needed)."""
    columns = [
        (column, RULE_TYPES.get(f.metadata["rule"].kind, str) | None, noted(f.metadata["doc"]))
        for column, f in setting_columns().items()
    ]
    own = [(f.name, f.type, f) for f in fields(cls)]  # type: ignore[arg-type]
    made = dataclasses.make_dataclass(
        cls.__name__, [*columns, *own], slots=True, namespace={"__doc__": cls.__doc__}
    )
    made.__module__ = cls.__module__
    return typing.cast(type[T], made)


# identity columns that tell apart two rows of one op, parameters and settings (a repeated ask)
DISTINCTION_COLUMNS = ("repeat_count",)


@with_setting_columns
@dataclass(slots=True)
class Conditions:
    """What the time means and what it ran under: every row, failed or not, says so."""

    host_load_ratio: float | None = noted(
        "the host's 1-minute load average over its cores as the case ended: above 1, more work "
        "wanted the CPUs than they had, and host-clock times say so"
    )

    def __getattr__(self, name: str) -> Any:  # the generated columns, for the type checker
        raise AttributeError(name)


def recorded_setting(run: RunSettings, declared: Any) -> Any:
    """A setting as its row records it: blank where it comes with another setting not in the case's id
    (max_runs without a precision target), or where it is off (a falsy default, such as no soak)."""
    value = getattr(run, declared.name)
    depends = declared.metadata["in_id"]
    if depends not in OWN_POLICIES and depends not in identifying_settings(run):
        return None
    return None if value == declared.default and not declared.default else value


def condition_values(row: Row) -> tuple[tuple[str, Any], ...]:
    """The settings `compare` pairs rows on, a default read as blank (as a file older than the column)."""
    out = []
    for column, declared in setting_columns(compared_only=True).items():
        value = getattr(row.conditions, column)
        out.append((column, None if value in (None, "", declared.default) else value))
    return tuple(out)


@dataclass(slots=True)
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
    noisy: bool | None = noted(f"IQR over median above {NOISE_THRESHOLD:.0%}")
    decile_drift_ratio: float | None = noted(
        "median of the last tenth of the samples over the first tenth's"
    )
    decile_sample_count: int | None = noted("samples in each tenth")
    throttled: bool | None = noted("drift above 1.05; no verdict under 5 samples a tenth")
    median_precision_ratio: float | None = noted(
        "half the median's 95% confidence interval over the median (order statistics)"
    )
    stop_reason: str | None = noted(
        "why timing stopped: `num_runs`, `min_duration`, `precision` (target reached), "
        "`max_runs` or `max_time` (a ceiling came first), `sample_cap`"
    )


@dataclass(slots=True)
class TimingInfo:
    timing_source: str | None = noted(
        "the timer that produced the samples: `xprof_gpu`, `cupti`, `wall_clock`, ..."
    )
    device_span_median_s: float | None = noted("first kernel start to last kernel end")
    launch_median_s: float | None = noted("launch-inclusive: CUDA events or the host's clock")
    wall_median_s: float | None = noted("host time per blocked iteration")
    compile_s: float | None = None
    timed_loop_s: float | None = noted(
        "wall seconds of the timed iterations with their post-processing (a trace's stop and "
        "parse); warm-up and the check excluded"
    )
    # how far other processes stretched a host-clock time
    cpu_wait_ratio: float | None = noted(
        "its threads' wait for a CPU (schedstat) over the loop's wall"
    )
    soak_baseline_median_s: float | None = noted(
        "a soak in phases (`soak_chunk`): the traced window right after warm-up"
    )
    soak_first_chunk_s: float | None = noted("its first untraced chunk's wall per iteration")
    soak_last_chunk_s: float | None = noted(
        "its last untraced chunk's (the row's samples are the worst window's, after it)"
    )
    flush_s: float | None = noted(
        "wall seconds of the cache flushes between blocked iterations (`cache: cold`), inside "
        "`timed_loop_s` and outside every sample"
    )
    profiler_session_s: float | None = noted(
        "wall seconds of the profiler's sessions (start, stop, parse), inside `timed_loop_s`"
    )
    input_set_count: int | None = noted(
        "input sets cycled through the iterations (`inputs: rotate`), each checked"
    )
    dominant_kernel: str | None = None
    dominant_kernel_pct: float | None = None
    dominant_kernel_s: float | None = None
    kernels_per_iter: float | None = None
    top_kernels: str | None = noted(
        "the three largest kernels (ATen ops on a CPU), launches per iteration and share"
    )
    max_rel_error_ratio: float | None = None
    check: str | None = noted("`passed`, `flagged: <why>`, `off`, `skipped: <why>`")
    check_mode: str | None = None
    trace_path: str | None = None
    sm_clock_first_mhz: float | None = noted(
        "this and the next four: sampled along a `gemm_throttling` case by nvidia-ml-py"
    )
    sm_clock_last_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    temperature_max_c: float | None = None
    power_max_w: float | None = None
    # the clocks beside the timed samples (measure/throttle.py; the run setting `throttle`)
    clock_source: str | None = noted("where the clocks came from (nvml), or why there are none")
    sm_clock_median_mhz: float | None = noted("the SM clock over the timed loop: its median (NVML)")
    throttled_share_ratio: float | None = noted(
        "share of the timed loop's wall below throttle_threshold of the best clock"
    )
    discarded_sample_count: int | None = noted("samples dropped as throttled (throttle: discard)")
    throttle_reasons: str | None = noted(
        "NVML's slowing reasons seen during the loop (power, thermal)"
    )
    audit: str | None = noted(
        "the audit of the timed windows (GPU device timers): each finding as name=figure; "
        "blank: clean, or not audited (docs/method.md)"
    )
    audit_detail: str | None = noted("each finding in words, with the figures it is made of")


@dataclass(slots=True)
class Pairing:
    cross_backend_rel_error_ratio: float | None = None
    paired_with: str | None = noted("the other backend's case id for the same op and inputs")
    paired_implementation: str | None = None  # the other backend's implementation


@dataclass(slots=True)
class Environment:
    device_kind: str | None = None
    device_count: int | None = None
    platform: str | None = None
    framework: str | None = None
    framework_version: str | None = None
    host: str | None = None
    host_cpu_count: int | None = None
    cpu_model: str | None = None
    python_version: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = noted("uncommitted changes to tracked files when the run started")
    packages: str | None = noted(
        "jax, jaxlib, libtpu, jax CUDA plugin, torch, torchao, triton, numpy versions"
    )
    gpu_driver: str | None = None
    gpu_clocks_mhz_at_start: str | None = noted("each GPU's SM and memory clock as the run started")
    env_flags: str | None = noted(
        "`XLA_FLAGS`, `LIBTPU_INIT_ARGS`, `TPU_PREMAPPED_*`, `CUDA_VISIBLE_DEVICES` as set"
    )
    config_id: str | None = None


# Column blocks in file order; the op's parameters follow Identity, its extras precede Environment.
HEAD_GROUPS: tuple[type, ...] = (Identity,)
BODY_GROUPS: tuple[type, ...] = (
    TimeStats,
    Conditions,
    DeviceState,
    TimingInfo,
    Derived,
    Roofline,
    Pairing,
)
TAIL_GROUPS: tuple[type, ...] = (Environment,)
ALL_GROUPS = (*HEAD_GROUPS, *BODY_GROUPS, *TAIL_GROUPS)


def group_columns(groups: tuple[type, ...]) -> tuple[str, ...]:
    return tuple(f.name for g in groups for f in fields(g))


@dataclass(slots=True)
class Series:
    """A row's raw per-iteration series and kernel breakdown: in the JSON lines, not the CSV."""

    samples_s: list[float] = field(default_factory=list)
    wall_samples_s: list[float] = field(default_factory=list)
    span_samples_s: list[float] = field(default_factory=list)
    launch_samples_s: list[float] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    device_samples_s: dict[str, list[float]] = field(default_factory=dict)
    gpu_monitor: list[list[float]] = field(default_factory=list)
    # a TPU's firmware figures over the traced window (TPUMS's names; `_pre_soaking`: before a soak)
    telemetry: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The series a row has (an empty one is left out, as a failed case has none)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}
        if self.kernels:
            out["kernels"] = [dataclasses.asdict(k) for k in self.kernels]
        return out

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Series:
        """The series of one JSON line; a foreign or cut value is no series (never a traceback)."""
        series = cls()
        for name in SAMPLE_LISTS:
            with contextlib.suppress(TypeError, ValueError):
                if isinstance(values := record.get(name), (list, dict)):
                    setattr(series, name, [float(x) for x in values])
        for k in record["kernels"] if isinstance(record.get("kernels"), list) else []:
            if isinstance(k, dict) and _numbers(numbers := [k.get(n, 0) for n in KERNEL_NUMBERS]):
                series.kernels.append(Kernel(str(k.get("name", "")), *map(float, numbers)))
        for name in ("device_samples_s", "gpu_monitor", "telemetry"):
            if isinstance(value := record.get(name), type(getattr(series, name))):
                setattr(series, name, value)
        return series.checked()

    def checked(self) -> Series:
        """The series less monitor samples short of the monitor's fields and devices without number
        lists (what a hand-edited or foreign line left malformed), so readers index it unchecked."""
        monitor = self.gpu_monitor
        self.gpu_monitor = [s for s in monitor if _numbers(s) and len(s) >= MONITOR_FIELDS]
        devices = self.device_samples_s.items()
        self.device_samples_s = {str(d): v for d, v in devices if _numbers(v)}
        return self


SAMPLE_LISTS = ("samples_s", "wall_samples_s", "span_samples_s", "launch_samples_s")
KERNEL_NUMBERS = ("per_iter", "mean_s", "share")
MONITOR_FIELDS = len(GPU_SAMPLE_FIELDS)


def _numbers(values: Any) -> bool:
    return isinstance(values, list) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in values
    )


LOADED = 1.0  # host load per core above which a host-clock time measures the load as much as the op
# share of a timed loop run below the clock threshold from which its median is the throttled device's
# (a few throttled samples move no median); throttle: discard leaves none to doubt
THROTTLED = 0.05


class Extras(Protocol):
    """A suite's columns beyond the core ones (`OpSpec.row_extras`), read by the code below."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


@runtime_checkable
class Variants(Protocol):
    """Extras of rows that are variants of one case (torchao recipes): which, and the reference."""

    @property
    def variant(self) -> str: ...

    @property
    def is_reference(self) -> bool: ...


@runtime_checkable
class Labelled(Protocol):
    """Extras whose fields name a row first in a chart's labels (in this order)."""

    LABEL_ORDER: ClassVar[tuple[str, ...]]


# what a suite's extras may declare: a version timed against a reference (a recipe, a fused pattern),
# how far its numbers moved from the reference's (SQNR), an op run on several devices at once
def speedup(row: Row) -> float | None:
    return getattr(row.extras, "speedup", None)


def quality_db(row: Row) -> float | None:
    return getattr(row.extras, "quality_db", None)


def used_devices(row: Row) -> int | None:
    return getattr(row.extras, "used_device_count", None)


@dataclass(slots=True)
class Row:
    identity: Identity
    params: OpParams  # the op's; ReadParams for an op or value this version does not know
    stats: TimeStats = field(default_factory=TimeStats)
    conditions: Conditions = field(default_factory=Conditions)
    device_state: DeviceState = field(default_factory=DeviceState)
    timing: TimingInfo = field(default_factory=TimingInfo)
    derived: Derived = field(default_factory=Derived)
    roofline: Roofline = field(default_factory=Roofline)
    pairing: Pairing = field(default_factory=Pairing)
    extras: Extras | None = None
    environment: Environment = field(default_factory=Environment)
    series: Series = field(default_factory=Series)
    started: str = ""  # when the case began (the row's timestamp is when it ended); not a column
    loop_started: float | None = None  # when its timed loop began (epoch seconds); not a column
    source: str = ""  # a report over several runs or files: which it came from; not a column

    def __post_init__(self) -> None:
        if not isinstance(self.params, OpParams):  # values by name, as a test or a reader has them
            self.params = ReadParams(self.params)

    @property
    def status(self) -> Status:
        return self.identity.status

    @property
    def ok(self) -> bool:
        return self.identity.status is Status.OK

    @property
    def median_s(self) -> float | None:
        return self.stats.time_median_s

    @property
    def doubt(self) -> str | None:
        """Why this row's time cannot carry a verdict (throttled, noisy, or a host clock on a busy host)."""
        share = self.timing.throttled_share_ratio
        if share is not None and share >= THROTTLED and not self.timing.discarded_sample_count:
            return "throttled"  # first: it says why such a row is noisy too
        if self.stats.noisy:
            return "noisy"
        load = self.conditions.host_load_ratio
        if load is not None and load > LOADED and self.timing.timing_source == "wall_clock":
            return "loaded host"
        return None

    def get(self, name: str) -> Any:
        """A parameter, an extras field or a setting's condition column by name (a sweep's axis)."""
        if name in self.params.as_dict():
            return self.params.value(name)
        if name in setting_columns():
            return getattr(self.conditions, name)
        return getattr(self.extras, name, None)

    def group(self, cls: type) -> Any:
        return getattr(self, GROUP_ATTRIBUTES[cls])

    def as_dict(self) -> dict[str, Any]:
        """The flat row: every declared column (and nothing else), in file order."""
        flat: dict[str, Any] = {}
        group = self.group
        for part in (
            *map(group, HEAD_GROUPS),
            self.params.as_dict(),  # the typed parameters by name
            *map(group, BODY_GROUPS),
            self.extras,
            *map(group, TAIL_GROUPS),
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


# each group's attribute on a row, as Row declares it
GROUP_ATTRIBUTES = {
    hint: name for name, hint in typing.get_type_hints(Row).items() if hint in ALL_GROUPS
}
