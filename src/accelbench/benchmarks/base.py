"""The reference harness's benchmarks: each a `Benchmark` over one frozen typed dataclass of its fields
(upstream's as its Config declares them, then ours), which a file of either generation is parsed
into; a TPUMS name (`Tpums`) is declared on the benchmark it runs. Departures: docs/jax_bench.md."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

import numpy as np

from accelbench.benchmarks.flags import CONDITIONS_CHOICES
from accelbench.catalogue import (
    PARAM_KINDS,
    OpParams,
    Param,
    case_choice_params,
    param,
    run_setting_params,
)
from accelbench.errors import UserError, did_you_mean
from accelbench.platform.dtypes import dtype
from accelbench.registry import register_once
from accelbench.specs import HardwareStats


@dataclass(frozen=True)
class UpstreamFields(OpParams):
    """Every jax-bench Config starts with these (BaseBenchmarkParams), in this order."""

    warmup_tries: int = param("int", 10, doc="untimed calls before timing")
    num_runs: int = param("int", 10, doc="timed calls, at least")
    min_duration_s: float = param(
        "float", 0.0, doc="keep timing until this many seconds have passed"
    )
    xprof_timing: bool = param(
        "bool", False, doc="trace the timed loop: xprof_* columns, rates from them"
    )
    xprof_dir: str = param("str", "/tmp/tensorboard", doc="where traces go when xprof_timing is on")
    system: str = param("str", "", doc="a hardware preset for the roofline (ironwood, gfc)")
    use_trace_roofline: bool = param(
        "bool", False, doc="add the compiler's own FLOP and byte counts"
    )
    hardware_stats: dict[str, Any] | None = param(
        "mapping", None, doc="roofline peaks (what `hardware:` sets)"
    )
    dtype: str = param("jnp_dtype", "bfloat16", doc="what it sets differs per benchmark")


def ours_param(kind: str, default: Any = None, choices: tuple[Any, ...] = (), doc: str = "") -> Any:
    """A field of this project's, not upstream's: written after upstream's columns."""
    declared = Param("", kind, default, choices, doc)
    return field(default=default, metadata={"param": declared, "ours": True})


BASE_FIELDS = UpstreamFields.declared()

# This project's keys, allowed in any entry (and on a one-off command line) beside its fields: the
# conditions, the backends and implementations, and every run setting upstream has no name for
OURS_AS_PARAMS = (
    Param(
        "conditions",
        "choice",
        "upstream",
        CONDITIONS_CHOICES,
        "upstream: warm caches, all local devices as jax-bench places the work; strict: cold, one",
    ),
    *case_choice_params("jax"),
    # upstream's own fields say num_runs, warmup_tries and min_duration_s
    *run_setting_params(leave_out=("num_runs", "warmup", "min_duration_s")),
)
OURS = tuple(p.name for p in OURS_AS_PARAMS)


@dataclass(frozen=True)
class Figures:
    """What upstream's metrics are computed from (group: a collective's N)."""

    fields: Any
    flops: float
    bytes: float
    seconds: float  # upstream's avg_ms (or xprof_avg_ms), in seconds
    group: int = 1


Metrics = Callable[[Figures], dict[str, Any]]
F = TypeVar("F", bound=UpstreamFields)


def itemsize(name: str) -> int:
    """Bytes per element as jax.numpy counts them (a 4-bit type takes a byte)."""
    return int(np.dtype(dtype(name).numpy).itemsize)


def rate(amount: float, seconds: float, unit: float) -> float:
    return amount / seconds / unit if seconds > 0 else math.inf


def intensity(f: Figures) -> float:
    return f.flops / f.bytes if f.bytes else 0.0


def compute_metrics(total_flops: bool = True) -> Metrics:
    def metrics(f: Figures) -> dict[str, Any]:
        out: dict[str, Any] = {"tflops_per_sec": rate(f.flops, f.seconds, 1e12)}
        if total_flops:
            out["total_flops"] = f.flops
        out["intensity"] = intensity(f)
        return out

    return metrics


def intensity_metrics(f: Figures) -> dict[str, Any]:
    return {"intensity": intensity(f)}


def replicated(f: Any, devices: Callable[[], int]) -> dict[str, Any]:
    """Upstream's compute ops: the whole op on every local device at once; rates per device."""
    return {"sharding": "replicated"}


@dataclass(frozen=True)
class Benchmark(Generic[F]):
    """One jax-bench name over its typed fields: every model reads an instance of `typed`."""

    name: str
    class_name: str  # upstream's `benchmark` column
    typed: type[F]  # its fields: upstream's in upstream's order, then ours (`ours_param`)
    translation: Callable[[F], dict[str, Any]]  # the case's fields -> our op's parameters
    run_id: Callable[[F], str]  # upstream's run id
    flops: Callable[[F, int], float]  # upstream's FLOP count (fields, group size)
    bytes: Callable[[F, int], float]  # upstream's get_total_bytes
    metrics: Metrics = intensity_metrics
    runs: str | Callable[[F], str] = ""  # which of our ops runs a case (none given: its name's)
    # upstream's conditions
    placement: Callable[[F, Callable[[], int]], dict[str, Any]] = lambda f, devices: {}
    implementation: str | None = None  # upstream's conditions: the implementation upstream runs
    flags: str = ""  # its TPU flag set: upstream's op_flags.yaml key (none given: its name)
    peak_dtype: Callable[[F], str] = lambda f: str(f.dtype)  # the dtype whose peak it reads
    notes: str = ""  # how it departs from upstream, for docs and `list`
    every_pair: bool = False  # no pair given: one case per ordered pair of devices (upstream's D2D)
    collective: bool = False  # a mesh and a group over the devices (upstream's N)
    tpums_only: bool = False  # TPUMS's name, not jax-bench's: planned for TPUMS files only

    @functools.cached_property
    def _ours(self) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(self.typed) if f.metadata.get("ours"))

    @property
    def upstream_fields(self) -> tuple[Param, ...]:
        return tuple(p for p in self.typed.declared() if p.name not in self._ours)

    @property
    def ours(self) -> tuple[Param, ...]:
        """This project's fields (written after upstream's columns)."""
        return tuple(p for p in self.typed.declared() if p.name in self._ours)

    @property
    def all_fields(self) -> tuple[Param, ...]:
        return (*self.upstream_fields, *self.ours)

    def __reduce__(self) -> tuple[Any, ...]:
        return (registered, ("v2", self.name))  # its models are lambdas: a worker looks it up

    def op(self, fields: F) -> str:
        return self.runs(fields) if callable(self.runs) else self.runs or self.name

    def register(self) -> Benchmark[F]:
        register_once(V2, self.name, self, "jax-bench benchmark")
        return self

    def figures(self, fields: F, seconds: float, group: int = 1) -> Figures:
        return Figures(fields, self.flops(fields, group), self.bytes(fields, group), seconds, group)


V2: dict[str, Benchmark[Any]] = {}


def jax_bench_names() -> list[str]:
    return [name for name, bench in V2.items() if not bench.tpums_only]


def get_v2(name: str, where: str) -> Benchmark[Any]:
    if name not in V2 or V2[name].tpums_only:
        raise UserError(
            f"unknown benchmark '{name}' (jax-bench names: {', '.join(jax_bench_names())})",
            key=where,
            suggestion=did_you_mean(str(name), jax_bench_names()),
        )
    return V2[name]


def shared_with(
    params: type[OpParams], but: tuple[str, ...] = ()
) -> Callable[[Any], dict[str, Any]]:
    """The translation where our op's parameters are the benchmark's fields by name."""
    names = [n for n in params.names() if n not in but]
    return lambda f: {name: getattr(f, name) for name in names if name in type(f).names()}


def per_element(
    flops: float, nbytes: float, count: Callable[[F], int]
) -> tuple[Callable[[F, int], float], Callable[[F, int], float]]:
    """Upstream's models of an op it counts per element: flops and bytes each."""
    return (lambda f, n: flops * count(f)), (lambda f, n: nbytes * count(f))


@dataclass(frozen=True)
class Upstream:
    """A case as the reference harness whose file named it knows it (`tpums`: the TPUMS name a TPUMS
    file gave it, whose outputs take TPUMS's columns)."""

    benchmark: Benchmark[Any]
    fields: Any
    hardware: HardwareStats | None = None
    conditions: str = "upstream"
    group_size: int = 1
    tpums: Tpums | None = None

    @property
    def name(self) -> str:
        return self.tpums.name if self.tpums else self.benchmark.name


# ---- TPUMS names ------------------------------------------------------------------------------------

Tier = Literal["production", "experimental", "alias"]
Roofline = Literal["none", "compute", "memory_hbm"]
Rate = Literal["tflops", "bandwidth"]  # what a row's console table reports per domain

# TPUMS's enum fields: canonical lowercase values only, in files and on the command line (any other
# spelling is refused with its "Invalid <field> '<value>'" text); an entry adds its own (d2d's direction)
ENUMS: dict[str, tuple[str, ...]] = {
    "reduce_op": ("sum", "mean", "max", "min"),
    "op_type": ("copy", "scale", "add", "triad", "read", "write", "read_only", "write_only"),
    "mode": ("fwd", "bwd"),
}
# TPUMS's stated least values where they are not a problem size's 1 (its field metadata `min`)
MINIMUMS: dict[str, float] = dict(
    warmup_tries=0, num_runs=0, min_duration_s=0.0, seed=0, samples_per_run=1
)
# fields a console table leaves out: how the case is run, not what it measures
UNSHOWN = ("warmup_tries", "num_runs", "min_duration_s", "seed", "samples_per_run")
DOMAINS = ("wall_clock", "xprof")  # TPUMS's timing domains, in its column order
SAMPLES_PER_RUN = Param(
    "samples_per_run", "int", 25, doc="iterations per traced window and per untraced soak chunk"
)
# jax-bench fields that are run-level in TPUMS (`xprof_timing` in the file, the rest gone)
RUN_LEVEL = ("xprof_timing", "xprof_dir", "system", "use_trace_roofline", "hardware_stats")
BASE_NAMES = tuple(p.name for p in BASE_FIELDS if p.name not in RUN_LEVEL)


def tpums_field(param: Param, enums: dict[str, tuple[str, ...]]) -> Param:
    """A field with TPUMS's rules: its enum values, and its least value (a size's is 1)."""
    if param.name in enums:
        param = replace(param, kind="enum", choices=enums[param.name])
    sized = PARAM_KINDS[param.kind].sizes_problem
    return replace(param, minimum=MINIMUMS.get(param.name, 1 if sized else None))


@dataclass(frozen=True)
class Tpums:
    """A TPUMS name: the jax-bench benchmark it runs, how its fields differ, how TPUMS reports it."""

    name: str
    v2: str  # the jax-bench benchmark it runs on
    tier: Tier = "production"
    roofline: Roofline = "none"  # which roofline fields its rows carry
    soak: bool = False  # timed as TPUMS's soak in phases (samples_per_run: the run's soak_chunk)
    renamed: dict[str, str] = field(default_factory=dict)  # TPUMS field -> the benchmark's field
    # TPUMS spellings accepted for one of its fields (hbm's `size`, the older name of num_elements)
    aliases: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)  # TPUMS's default where it moved
    # TPUMS fields accepted and checked, with no effect here yet (and why)
    inert: tuple[Param, ...] = ()
    dropped: tuple[str, ...] = ()  # the benchmark's fields TPUMS's config does not have
    # per-chip bandwidth derived from per-device (TPUMS's derive_chip_bandwidth; transfers opt out)
    chip_bandwidth: bool = True

    def __reduce__(self) -> tuple[Any, ...]:
        return (registered, ("tpums", self.name))

    config: str = ""  # TPUMS's Config class (its help group's title); else from the class name
    rate: Rate = "bandwidth"
    size_column: str | None = None  # the console table's size or work column, after the fields
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    device_matrix: bool = False  # its console report adds the source-by-destination GB/s matrix

    @property
    def config_name(self) -> str:
        return self.config or self.bench.class_name.removesuffix("Benchmark") + "Params"

    @property
    def report_columns(self) -> tuple[tuple[str, str], ...]:
        """The console table's columns (TPUMS's REPORT_SCHEMA)."""
        inert = {p.name for p in self.inert}
        shown = [(p.name, "str") for p in self.fields if p.name not in (*UNSHOWN, *inert)]
        size = [(self.size_column, "2f")] if self.size_column else []
        # upstream's name for the quantity: per device, a collective's per chip (what its
        # consolidated report and the README's console columns say)
        scope = "per_chip" if self.bench.collective else "per_device"
        rate = f"tflops_{scope}" if self.rate == "tflops" else f"bandwidth_{scope}_gb_s"
        timed = [(f"{d}_{c}", f) for d in DOMAINS for c, f in (("p50_ms", "4f"), (rate, "2f"))]
        return (*shown, *size, *timed)

    @property
    def is_experimental(self) -> bool:
        return self.tier == "experimental"

    # an earlier name: listed with --aliases, refused by `benchmark run`
    @property
    def is_alias(self) -> bool:
        return self.tier == "alias"

    @property
    def bench(self) -> Benchmark[Any]:
        return V2[self.v2]

    @property
    def fields(self) -> tuple[Param, ...]:
        """In TPUMS's names and defaults: the benchmark's but the run-level ones, then its own."""
        back = {v: k for k, v in self.renamed.items()}
        out = []
        for p in self.bench.all_fields:
            if p.name in RUN_LEVEL or p.name in self.dropped:
                continue
            name = back.get(p.name, p.name)
            aliases = tuple(a for a, target in self.aliases.items() if target == name)
            default = self.defaults.get(name, p.default)
            out.append(replace(p, name=name, default=default, aliases=p.aliases + aliases))
        enums = {**ENUMS, **self.enums}
        every = (*out, *((SAMPLES_PER_RUN,) if self.soak else ()), *self.inert)
        return tuple(tpums_field(p, enums) for p in every)

    @property
    def attributes(self) -> dict[str, tuple[str, Param]]:
        """Each TPUMS field that sets one of the benchmark's, with that field's name."""
        skip = {p.name for p in self.inert} | {SAMPLES_PER_RUN.name}
        return {
            p.name: (self.renamed.get(p.name, p.name), p) for p in self.fields if p.name not in skip
        }

    def written(self, fields: Any, ours: bool = False) -> dict[str, Any]:
        """A case's typed fields as TPUMS's files hold them (`ours`: this project's too)."""
        mine = {p.name for p in self.bench.ours}
        return {
            k: getattr(fields, a) for k, (a, _) in self.attributes.items() if ours or a not in mine
        }


TPUMS: dict[str, Tpums] = {}


def registries() -> tuple[dict[str, Any], ...]:  # a test's scope saves and restores them
    return (V2, TPUMS)


def registered(table: str, name: str) -> Any:  # how an entry crosses into a worker process
    return dict(zip(("v2", "tpums"), registries(), strict=True))[table][name]


def register_tpums(entry: Tpums) -> Tpums:
    if entry.v2 not in V2:
        raise ValueError(f"TPUMS {entry.name}: no jax-bench benchmark {entry.v2}")
    return register_once(TPUMS, entry.name, entry, "TPUMS benchmark")


def listed(tiers: tuple[Tier, ...] = ("production",)) -> list[str]:
    return [name for name, entry in TPUMS.items() if entry.tier in tiers]


def get_tpums(name: object, where: str) -> Tpums:
    if not isinstance(name, str) or name not in TPUMS:
        raise UserError(
            f"unknown benchmark {name!r} (TPUMS names: {', '.join(listed())})",
            key=where,
            suggestion=did_you_mean(str(name), TPUMS),
        )
    return TPUMS[name]


# the families register their names as they are imported, in upstream's order
for _family in ("compute", "memory", "collective", "tpums"):
    importlib.import_module(f"accelbench.benchmarks.{_family}")
