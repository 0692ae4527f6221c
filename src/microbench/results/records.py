"""Typed rows: what one case leaves in the results, from measurement to writer.

A row is a few typed groups plus the op's parameters and the op's declared extras (a dataclass named by
its spec's `row_extras`). The CSV columns are generated from these classes (`results.columns`), so a value
that no class declares cannot reach a file, and a suite that hands back undeclared extras fails loudly.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import operator
import os
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

from microbench.catalogue import OpSpec, get_spec
from microbench.core.case import (
    OWN_POLICIES,
    Case,
    RunSettings,
    declared_settings,
    identifying_settings,
)
from microbench.core.column import doc
from microbench.core.samples import NOISE_THRESHOLD, Samples, median_or_none
from microbench.core.types import DeviceInfo, Kernel, Measurement, Timing
from microbench.errors import Status, UserError
from microbench.platform.environment import timestamp
from microbench.platform.gpu_monitor import GPU_SAMPLE_FIELDS
from microbench.platform.hardware import Peaks, lookup, with_overrides
from microbench.results.roofline import Derived, Roofline, derive


@dataclass(slots=True)
class Identity:
    case_id: str = field(
        default="", metadata=doc("stable hash of op, backend, params, run settings")
    )
    run_id: str = field(default="", metadata=doc("one per `microbench run`"))
    timestamp: str = field(default="", metadata=doc("when the row was written, UTC"))
    status: Status = field(
        default=Status.OK, metadata=doc("`" + "`, `".join(s.value for s in Status) + "`")
    )
    error: str = field(default="", metadata=doc("why a row has no clean number"))
    suite: str = ""
    benchmark: str = ""
    op: str = ""
    backend: str = ""
    implementation: str | None = None
    label: str = ""
    repeat_count: int | None = field(
        default=None,
        metadata=doc(
            "how many times the file asked for this case before (a jax-bench file under upstream's "
            "conditions runs each ask); blank the first time"
        ),
    )


# a run setting's rule kind -> the Python type its condition column holds
RULE_TYPES: dict[str, type] = {
    "count": int,
    "seconds": float,
    "duration": float,
    "fraction": float,
    "choice": str,
    "check": str,
    "timer": str,
}


@functools.cache
def setting_columns(compared_only: bool = False) -> dict[str, Any]:
    """Each run setting that a row records, by its Conditions column: the setting's declaration."""
    return {
        f.metadata["column"]: f
        for f in declared_settings()
        if f.metadata["column"] and (f.metadata["compared"] or not compared_only)
    }


T = typing.TypeVar("T")


def with_setting_columns(cls: type[T]) -> type[T]:
    """The class with a column first for each run setting that declares one (core/case.py), in the
    settings' order, typed by its rule and documented by its declaration: a new setting is a new
    column with no other edit."""
    columns = [
        (
            column,
            RULE_TYPES[declared.metadata["rule"].kind] | None,
            field(default=None, metadata=doc(declared.metadata["doc"])),
        )
        for column, declared in setting_columns().items()
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
    """What the time means and what it ran under: every row, failed or not, says so. Each run setting
    that declares a `column` is a field here (`with_setting_columns`), read as an attribute."""

    host_load_ratio: float | None = field(
        default=None,
        metadata=doc(
            "the host's 1-minute load average over its cores as the case ended: above 1, more work "
            "wanted the CPUs than they had, and host-clock times say so"
        ),
    )

    def __getattr__(self, name: str) -> Any:  # the generated columns, for the type checker
        raise AttributeError(name)


def recorded_setting(run: RunSettings, declared: Any) -> Any:
    """A setting as its row records it: blank where its declaration says it comes with another that
    is not in the case's id (max_runs without a precision target), or where it is off (a falsy
    default, such as no soak)."""
    value = getattr(run, declared.name)
    depends = declared.metadata["in_id"]
    if depends not in OWN_POLICIES and depends not in identifying_settings(run):
        return None
    return None if value == declared.default and not declared.default else value


def condition_values(row: Row) -> tuple[tuple[str, Any], ...]:
    """What `compare` pairs rows on besides the op and its parameters: the compared settings, a value
    at its default read as blank (a file written before a column existed agrees with the default)."""
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
    noisy: bool | None = field(
        default=None, metadata=doc(f"IQR over median above {NOISE_THRESHOLD:.0%}")
    )
    decile_drift_ratio: float | None = field(
        default=None, metadata=doc("median of the last tenth of the samples over the first tenth's")
    )
    decile_sample_count: int | None = field(default=None, metadata=doc("samples in each tenth"))
    throttled: bool | None = field(
        default=None, metadata=doc("drift above 1.05; no verdict under 5 samples a tenth")
    )
    median_precision_ratio: float | None = field(
        default=None,
        metadata=doc(
            "half the median's 95% confidence interval over the median (order statistics)"
        ),
    )
    stop_reason: str | None = field(
        default=None,
        metadata=doc(
            "why timing stopped: `num_runs`, `min_duration`, `precision` (target reached), "
            "`max_runs` or `max_time` (a ceiling came first), `sample_cap`"
        ),
    )


@dataclass(slots=True)
class TimingInfo:
    timing_source: str | None = field(
        default=None,
        metadata=doc(
            "the timer that produced the samples: `xprof_gpu`, `cupti`, `wall_clock`, ..."
        ),
    )
    device_span_median_s: float | None = field(
        default=None, metadata=doc("first kernel start to last kernel end")
    )
    launch_median_s: float | None = field(
        default=None, metadata=doc("launch-inclusive: CUDA events or the host's clock")
    )
    wall_median_s: float | None = field(
        default=None, metadata=doc("host time per blocked iteration")
    )
    compile_s: float | None = None
    timed_loop_s: float | None = field(
        default=None,
        metadata=doc(
            "wall seconds of the timed iterations with their post-processing (a trace's stop and "
            "parse); warm-up and the check excluded"
        ),
    )
    soak_baseline_median_s: float | None = field(
        default=None,
        metadata=doc("a soak in phases (`soak_chunk`): the traced window right after warm-up"),
    )
    soak_first_chunk_s: float | None = field(
        default=None, metadata=doc("its first untraced chunk's wall per iteration")
    )
    soak_last_chunk_s: float | None = field(
        default=None,
        metadata=doc(
            "its last untraced chunk's (the row's samples are the worst window's, after it)"
        ),
    )
    flush_s: float | None = field(
        default=None,
        metadata=doc(
            "wall seconds of the cache flushes between blocked iterations (`cache: cold`), inside "
            "`timed_loop_s` and outside every sample"
        ),
    )
    profiler_session_s: float | None = field(
        default=None,
        metadata=doc(
            "wall seconds of the profiler's sessions (start, stop, parse), inside `timed_loop_s`"
        ),
    )
    input_set_count: int | None = field(
        default=None,
        metadata=doc("input sets cycled through the iterations (`inputs: rotate`), each checked"),
    )
    dominant_kernel: str | None = None
    dominant_kernel_pct: float | None = None
    dominant_kernel_s: float | None = None
    kernels_per_iter: float | None = None
    top_kernels: str | None = field(
        default=None,
        metadata=doc(
            "the three largest kernels (ATen ops on a CPU), launches per iteration and share"
        ),
    )
    max_rel_error_ratio: float | None = None
    check: str | None = field(
        default=None, metadata=doc("`passed`, `flagged: <why>`, `off`, `skipped: <why>`")
    )
    check_mode: str | None = None
    trace_path: str | None = None
    # sampled along the case by nvidia-ml-py where the op asks for it (gemm_throttling)
    sm_clock_first_mhz: float | None = field(
        default=None,
        metadata=doc(
            "this and the next four: sampled along a `gemm_throttling` case by nvidia-ml-py"
        ),
    )
    sm_clock_last_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    temperature_max_c: float | None = None
    power_max_w: float | None = None


@dataclass(slots=True)
class Pairing:
    cross_backend_rel_error_ratio: float | None = None
    paired_with: str | None = field(
        default=None, metadata=doc("the other backend's case id for the same op and inputs")
    )
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
    git_dirty: bool | None = field(
        default=None, metadata=doc("uncommitted changes to tracked files when the run started")
    )
    packages: str | None = field(
        default=None,
        metadata=doc(
            "jax, jaxlib, libtpu, jax CUDA plugin, torch, torchao, triton, numpy versions"
        ),
    )
    gpu_driver: str | None = None
    gpu_clocks_mhz_at_start: str | None = field(
        default=None, metadata=doc("each GPU's SM and memory clock as the run started")
    )
    env_flags: str | None = field(
        default=None,
        metadata=doc(
            "`XLA_FLAGS`, `LIBTPU_INIT_ARGS`, `TPU_PREMAPPED_*`, `CUDA_VISIBLE_DEVICES` as set"
        ),
    )
    config_id: str | None = None


# Column blocks in file order; the op's parameters follow Identity, its extras precede Environment.
HEAD_GROUPS: tuple[type, ...] = (Identity,)
BODY_GROUPS: tuple[type, ...] = (TimeStats, Conditions, TimingInfo, Derived, Roofline, Pairing)
TAIL_GROUPS: tuple[type, ...] = (Environment,)
ALL_GROUPS = (*HEAD_GROUPS, *BODY_GROUPS, *TAIL_GROUPS)
GROUP_ATTRIBUTES = {
    Identity: "identity",
    TimeStats: "stats",
    Conditions: "conditions",
    TimingInfo: "timing",
    Derived: "derived",
    Roofline: "roofline",
    Pairing: "pairing",
    Environment: "environment",
}


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

    @property
    def samples(self) -> Samples | None:
        return Samples(self.samples_s) if self.samples_s else None

    def as_json(self) -> dict[str, Any]:
        """The series a row has (an empty one is left out, as a failed case has none)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}
        if self.kernels:
            out["kernels"] = [k.as_dict() for k in self.kernels]
        return out

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Series:
        """The series of one JSON line; a foreign or cut value is no series (never a traceback)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            value = record.get(f.name)
            if isinstance(value, (list, dict)):
                values[f.name] = value
        values["kernels"] = _kernels(values.get("kernels", []))
        series = cls(**values)
        for name in SAMPLE_LISTS:
            try:
                setattr(series, name, [float(x) for x in getattr(series, name)])
            except (TypeError, ValueError):
                setattr(series, name, [])
        return series.checked()

    def checked(self) -> Series:
        """The series less what a hand-edited or foreign line left malformed, so that readers index
        it without checks: monitor samples short of the monitor's fields or holding no numbers,
        devices without number lists (kernels that are not records with numbers: `_kernels`)."""
        if self.gpu_monitor:
            self.gpu_monitor = [
                s
                for s in self.gpu_monitor
                if isinstance(s, list) and len(s) >= MONITOR_FIELDS and all(map(_is_number, s))
            ]
        if self.device_samples_s:
            self.device_samples_s = {
                str(d): v
                for d, v in self.device_samples_s.items()
                if isinstance(v, list) and all(map(_is_number, v))
            }
        return self


def _kernels(records: Any) -> list[Kernel]:
    """A JSON line's kernel records, typed; one that is not a record of a name and numbers is left out."""
    kernels = []
    for k in records if isinstance(records, list) else []:
        numbers = (
            [k.get(n, 0) for n in ("per_iter", "mean_s", "share")] if isinstance(k, dict) else []
        )
        if numbers and all(map(_is_number, numbers)):
            kernels.append(Kernel(str(k.get("name", "")), *map(float, numbers)))
    return kernels


SAMPLE_LISTS = ("samples_s", "wall_samples_s", "span_samples_s", "launch_samples_s")
MONITOR_FIELDS = len(GPU_SAMPLE_FIELDS)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


LOADED = 1.0  # host load per core above which a host-clock time measures the load as much as the op


class Extras(Protocol):
    """A suite's columns beyond the core ones: an instance of the dataclass its op declares
    (`OpSpec.row_extras`). What a reader may ask of any of them is one of the protocols below."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


@runtime_checkable
class Compared(Protocol):
    """Extras of a suite that times a version against a reference (a recipe, a fused pattern)."""

    @property
    def speedup(self) -> float | None: ...


@runtime_checkable
class Graded(Protocol):
    """Extras that say how far a version's numbers moved from the reference's (SQNR)."""

    @property
    def quality_db(self) -> float | None: ...


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


@runtime_checkable
class Spread(Protocol):
    """Extras of an op run on several devices at once."""

    used_device_count: int


def speedup(row: Row) -> float | None:
    return row.extras.speedup if isinstance(row.extras, Compared) else None


def quality_db(row: Row) -> float | None:
    return row.extras.quality_db if isinstance(row.extras, Graded) else None


def used_devices(row: Row) -> int | None:
    return row.extras.used_device_count if isinstance(row.extras, Spread) else None


@dataclass(slots=True)
class Row:
    identity: Identity
    params: dict[str, Any]
    stats: TimeStats = field(default_factory=TimeStats)
    conditions: Conditions = field(default_factory=Conditions)
    timing: TimingInfo = field(default_factory=TimingInfo)
    derived: Derived = field(default_factory=Derived)
    roofline: Roofline = field(default_factory=Roofline)
    pairing: Pairing = field(default_factory=Pairing)
    extras: Extras | None = None
    environment: Environment = field(default_factory=Environment)
    series: Series = field(default_factory=Series)
    started: str = ""  # when the case began (the row's timestamp is when it ended); not a column
    loop_started: float | None = None  # when its timed loop began (epoch seconds); not a column

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
        """Why this row's time cannot carry a verdict: its samples spread too widely, or it is a
        host-clock time taken while the host was busier than its cores."""
        if self.stats.noisy:
            return "noisy"
        load = self.conditions.host_load_ratio
        if load is not None and load > LOADED and self.timing.timing_source == "wall_clock":
            return "loaded host"
        return None

    def get(self, name: str) -> Any:
        """A parameter, an extras field or a run setting's condition column by name, None where the
        row has none of them (a sweep's axis)."""
        if name in self.params:
            return self.params[name]
        if name in setting_columns():
            return getattr(self.conditions, name)
        return getattr(self.extras, name, None)

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


# ---- reading rows back: cells to typed values ------------------------------------------------------


_BOOLS = {"true": True, "false": False, "True": True, "False": False}
_STATUSES = {s.value: s for s in Status}  # a dict: Enum() costs 20 µs a cell


def _number(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = float(text)
        except ValueError:
            return None  # a hand-edited or foreign cell is no number, never a traceback
        if kind is int:
            return int(value) if math.isfinite(value) and value.is_integer() else None
        return value

    return parse


def _status(text: str) -> Status:
    return _STATUSES.get(text, Status.ERROR)  # one this version does not know gave no clean number


class CellType(NamedTuple):
    """How a cell of one field type reads back (the writer's `_cell` in reverse). `fast` takes every
    cell this writer writes and raises ValueError or KeyError on anything else; `careful` takes any
    text, a foreign or hand-edited cell reading as None; `blank` is what an empty cell means where
    the field's default would not do."""

    fast: Callable[[str], Any]
    careful: Callable[[str], Any]
    blank: Any = None


TEXT = CellType(str, str)
CELL_TYPES: dict[type, CellType] = {
    Status: CellType(_STATUSES.__getitem__, _status, Status.ERROR),  # no status is no clean number
    bool: CellType(_BOOLS.__getitem__, _BOOLS.get),
    int: CellType(int, _number(int)),
    float: CellType(float, _number(float)),
}


def _cell_type(annotation: Any) -> CellType:
    kinds = set(typing.get_args(annotation)) or {annotation}
    return next((CELL_TYPES[k] for k in CELL_TYPES if k in kinds), TEXT)  # bool before int


@functools.cache
def parsers(cls: type) -> tuple[tuple[str, CellType], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _cell_type(hints[f.name])) for f in fields(cls))


def _param_types(op: str) -> dict[str, CellType]:
    """How each parameter of an op reads back, from its declaration (catalogue.Param.python_type)."""
    try:
        return {p.name: CELL_TYPES.get(p.python_type, TEXT) for p in get_spec(op).params}
    except UserError:
        return {}


def _typed(cells: Sequence[str], kind: CellType, blank: Any) -> Sequence[Any]:
    """One column typed: the fast way for a whole column this writer wrote, the careful way cell by
    cell where one is foreign (a cell no type takes is None); an empty cell is `blank`."""
    if not any(cells):
        return [blank] * len(cells)
    fast = kind.fast
    try:
        if all(cells):  # no blanks: map runs at C speed, and text is already text
            return list(cells) if fast is str else list(map(fast, cells))
        return [fast(c) if c else blank for c in cells]
    except (ValueError, KeyError):
        careful = kind.careful
        return [careful(c) if c else blank for c in cells]


def _build(cls: type, columns: list[Sequence[str] | None], n: int) -> list[Any]:
    """n instances of a row group from its fields' columns (None: a column the file lacks, read as
    empty cells: the field's default, or None)."""
    values: list[Iterable[Any]] = []
    for f, (_, kind), cells in zip(fields(cls), parsers(cls), columns, strict=True):
        default = None if f.default is dataclasses.MISSING else f.default
        blank = default if kind.blank is None else kind.blank
        values.append(itertools.repeat(blank, n) if cells is None else _typed(cells, kind, blank))
    return (
        [cls(*args) for args in zip(*values, strict=True)] if values else [cls() for _ in range(n)]
    )


class RowReader:
    """How the rows of one file become typed rows, a column at a time: each column is typed in one
    pass and each group built from its columns, so 100k rows read in seconds, not minutes. The op's
    parameters (typed as its spec types them; text where the op or the kind is unknown) and extras
    are read per op."""

    def __init__(self, header: list[str], param_names: list[str]) -> None:
        self.width = len(header)
        self._names = header
        self._index = {name: i for i, name in enumerate(header)}
        self._param_names = [n for n in param_names if n in self._index]

    def _column(self, columns: list[tuple[str, ...]], name: str) -> Sequence[str] | None:
        at = self._index.get(name)
        return None if at is None else columns[at]

    def _params(self, op: str, columns: list[tuple[str, ...]], n: int) -> list[dict[str, Any]]:
        """The op's parameters typed as its spec types them; a value its kind does not take, or a
        parameter or op this version does not know, keeps its text; an empty cell is no entry."""
        types = _param_types(op)
        names = self._param_names
        texts = [columns[self._index[name]] for name in names]
        typed = [
            _typed(column, types.get(name, TEXT), None)
            for name, column in zip(names, texts, strict=True)
        ]
        out = [dict(zip(names, values, strict=True)) for values in zip(*typed, strict=True)]
        out = out or [{} for _ in range(n)]
        for name, column, values in zip(names, texts, typed, strict=True):
            if None not in values:
                continue
            for params, text, value in zip(out, column, values, strict=True):
                if value is None:  # empty: no entry; a value its kind does not take: its text
                    if text:
                        params[name] = text
                    else:
                        del params[name]
        return out

    def _extras(self, op: str, columns: list[tuple[str, ...]], n: int) -> list[Any]:
        """The op's extras (its spec's `row_extras`), None where a row has no extras cell (a failed
        case) or the op is not one this version knows."""
        try:
            cls = get_spec(op).row_extras
        except UserError:
            cls = None
        if cls is None:
            return [None] * n
        own = [self._column(columns, name) for name, _ in parsers(cls)]
        present = [c for c in own if c is not None]
        if not present:
            return [None] * n
        built = _build(cls, own, n)
        return [
            e if any(row) else None
            for e, row in zip(built, zip(*present, strict=True), strict=True)
        ]

    def _columns(self, table: list[list[str]], groups: tuple[type, ...]) -> list[tuple[str, ...]]:
        """The table's columns, in one pass in memory order (not one pass per column); those of the
        groups left out are not extracted (empty)."""
        skipped = {n for cls in ALL_GROUPS if cls not in groups for n, _ in parsers(cls)}
        skipped -= {n for n, _ in parsers(Identity)}
        keep = [i for i in range(self.width) if self._names[i] not in skipped]
        if len(keep) == self.width:
            return list(zip(*table, strict=False))
        columns: list[tuple[str, ...]] = [()] * self.width
        picked = zip(*map(operator.itemgetter(*keep), table), strict=True) if keep else ()
        for i, column in zip(keep, picked, strict=True):
            columns[i] = column
        return columns

    def rows(
        self,
        table: list[list[str]],
        series: dict[str, Series] | None = None,
        groups: tuple[type, ...] = ALL_GROUPS,
    ) -> list[Row]:
        """Every row of cells (a short row reads as empty cells at its end), typed again, with its
        case's raw series where `series` has them. A reader that needs only some groups names them:
        the others are left at their defaults, their columns never typed (compare reads 39 of a
        hundred columns)."""
        n, width = len(table), self.width
        if not n:
            return []
        padded = [r if len(r) >= width else r + [""] * (width - len(r)) for r in table]
        columns = self._columns(padded, groups)
        built = {
            cls: _build(cls, [self._column(columns, name) for name, _ in parsers(cls)], n)
            if cls in groups or cls is Identity
            else [cls() for _ in range(n)]
            for cls in ALL_GROUPS
        }
        params: list[dict[str, Any]] = [{} for _ in range(n)]
        extras: list[Any] = [None] * n
        by_op: dict[str, list[int]] = {}
        for k, identity in enumerate(built[Identity]):
            by_op.setdefault(identity.op, []).append(k)
        for op, at in by_op.items():
            own = columns if len(by_op) == 1 else list(zip(*(padded[k] for k in at), strict=False))
            typed = zip(
                at, self._params(op, own, len(at)), self._extras(op, own, len(at)), strict=True
            )
            for k, p, e in typed:
                params[k], extras[k] = p, e
        series = series or {}
        return [
            Row(
                identity=identity,
                params=params[k],
                stats=built[TimeStats][k],
                conditions=built[Conditions][k],
                timing=built[TimingInfo][k],
                derived=built[Derived][k],
                roofline=built[Roofline][k],
                pairing=built[Pairing][k],
                extras=extras[k],
                environment=built[Environment][k],
                series=series.get(identity.case_id) or Series(),
            )
            for k, identity in enumerate(built[Identity])
        ]


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


def host_load() -> float | None:
    """The 1-minute load average per core (None where the system does not say)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return None


def _conditions(case: Case, device: DeviceInfo | None, measured: bool = True) -> Conditions:
    """`measured`: the device info was read while the case ran, so its thread count is what it had;
    a failed case's row says what it asked for, or the framework's default."""
    if measured or case.run.threads is None:
        threads = device.threads if device is not None and device.threads else case.run.threads
    else:
        threads = case.run.threads
    settings = {
        column: recorded_setting(case.run, declared)
        for column, declared in setting_columns().items()
    }
    settings["thread_count"] = threads
    return Conditions(**settings, host_load_ratio=host_load() if measured else None)


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


def _time_stats(t: Timing) -> TimeStats:
    drift = t.drift
    return TimeStats(
        time_median_s=t.median_s,
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
        median_precision_ratio=t.precision_ratio,
        stop_reason=t.stop_reason,
    )


def _timing_info(m: Measurement) -> TimingInfo:
    t = m.timing
    top = t.kernels[0] if t.kernels else None
    return TimingInfo(
        timing_source=t.source,
        device_span_median_s=median_or_none(t.span_samples_s),
        launch_median_s=median_or_none(t.launch_samples_s),
        wall_median_s=median_or_none(t.wall_samples_s),
        compile_s=m.compile_s,
        timed_loop_s=t.loop_s,
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
        top_kernels=top_kernels(t.kernels),
        max_rel_error_ratio=m.check.max_rel_error_ratio,
        check=m.check.text,
        check_mode=m.check.mode,
        trace_path=t.trace_path,
    )


def _series(t: Timing) -> Series:
    return Series(
        samples_s=list(t.samples_s),
        wall_samples_s=list(t.wall_samples_s),
        span_samples_s=list(t.span_samples_s),
        launch_samples_s=list(t.launch_samples_s),
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
        peaks = replace(
            peaks,
            **{
                f.name: getattr(peaks, f.name) * used_device_count
                for f in fields(peaks)
                if isinstance(getattr(peaks, f.name), (int, float))
            },
        )
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
) -> Row:
    """The row of a timed case, its raw samples and kernel breakdown attached for the JSON lines."""
    check_extras(spec, m.extras)
    derived, roofline = _models_and_roofline(case, spec, m, peak_overrides)
    status = Status.WRONG_RESULT if m.check.flagged else Status.OK
    error = m.check.text if m.check.flagged else ""
    return Row(
        identity=_identity(case, spec, status, error, run_id, m.implementation),
        params=dict(case.params),
        stats=_time_stats(m.timing),
        conditions=_conditions(case, m.device),
        timing=_timing_info(m),
        derived=derived,
        roofline=roofline,
        extras=m.extras,
        environment=_environment(case, m.device, env),
        series=_series(m.timing),
        loop_started=m.timing.loop_started_at,
    )
