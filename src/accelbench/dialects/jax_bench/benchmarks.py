"""The jax-bench harness's benchmarks (its v2 dialect) as this project's ops: what a benchmark is.

Each of upstream's names is one `V2Benchmark` over one frozen typed dataclass of its fields: upstream's
exactly as its Config declares them (names, defaults, order: they are summary.csv's first columns;
`UpstreamFields` holds the fields every Config starts with), then this project's own (`ours_param`,
written after upstream's columns). The benchmark says which of our ops runs a case and with which
parameters, where upstream puts the work (`place`: its conditions), upstream's FLOP and byte models
and metrics, its class name, run id and TPU flag set; each of these reads the typed fields (`f.m`).
Our ops keep their own (float64-checked, tested) models; upstream's are here so upstream's columns
mean what they mean upstream (docs/jax_bench.md lists every departure). The benchmarks themselves are
registered by family in `compute`, `memory` and `collective`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from accelbench.catalogue import OpParams, Param, case_choice_params, param, run_setting_params
from accelbench.dialects.jax_bench.flags import CONDITIONS_CHOICES
from accelbench.errors import UserError, did_you_mean
from accelbench.platform.dtypes import dtype
from accelbench.registry import register_once

Fields = Mapping[str, Any]  # one case's fields by name (upstream's names, defaults filled in)


@dataclass(frozen=True)
class UpstreamFields(OpParams):
    """Every upstream Config starts with these (BaseBenchmarkParams), in this order; a benchmark's
    class adds its own after them (one it declares again keeps its place here)."""

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


@functools.cache
def _ours(cls: type[Any]) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls) if f.metadata.get("ours"))


BASE_FIELDS = UpstreamFields.declared()

# This project's keys, allowed in any v2 entry (and on a one-off command line) beside its fields: the
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
    """What upstream's metrics are computed from: the case's fields, upstream's models, a time, and
    the collective's group size (upstream's N)."""

    fields: Fields
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


def one_device(f: UpstreamFields, devices: Callable[[], int]) -> dict[str, Any]:
    return {}


def replicated(f: UpstreamFields, devices: Callable[[], int]) -> dict[str, Any]:
    """Upstream's compute ops: the whole op on every local device at once (a fully replicated
    PartitionSpec); rates are per device."""
    return {"sharding": "replicated"}


@dataclass(frozen=True)
class V2Benchmark(Generic[F]):
    """One upstream name over its typed fields: every model reads an instance of `typed`, made from
    the case's fields by name (`of`)."""

    name: str
    class_name: str  # upstream's `benchmark` column
    typed: type[F]  # its fields: upstream's in upstream's order, then ours (`ours_param`)
    pick_op: Callable[[F], str]  # which of our ops runs a case
    translation: Callable[[F], dict[str, Any]]  # the case's fields -> our op's parameters
    run_name: Callable[[F], str]  # upstream's run id
    flop_model: Callable[[F, int], float]  # upstream's FLOP count (fields, group size)
    byte_model: Callable[[F, int], float]  # upstream's get_total_bytes
    metrics: Metrics
    placement: Callable[[F, Callable[[], int]], dict[str, Any]] = (
        one_device  # upstream's conditions
    )
    implementation: str | None = None  # upstream's conditions: the implementation upstream runs
    flags: str | None = None  # its TPU flag set (TPU_FLAGS): upstream's op_flags.yaml key
    peak: Callable[[F], str] = lambda f: str(f.dtype)  # the dtype whose peak its roofline uses
    notes: str = ""  # how it departs from upstream, for docs and `list`
    every_pair: bool = False  # no pair given: one case per ordered pair of devices (upstream's D2D)
    collective: bool = False  # a mesh and a group over the devices (upstream's N)
    tpums_only: bool = False  # TPUMS's name, not jax-bench's: planned for TPUMS files only

    def of(self, values: Fields) -> F:
        """The typed fields of a case's fields by name (others, such as our run settings, left)."""
        return self.typed(**{name: values[name] for name in self.typed.names() if name in values})

    @property
    def upstream_fields(self) -> tuple[Param, ...]:
        """Base fields then its own, as upstream's dataclass orders them."""
        ours = _ours(self.typed)
        return tuple(p for p in self.typed.declared() if p.name not in ours)

    @property
    def own_fields(self) -> tuple[Param, ...]:
        """Upstream's fields of this benchmark beyond the ones every Config starts with."""
        base = {p.name for p in BASE_FIELDS}
        return tuple(p for p in self.upstream_fields if p.name not in base)

    @property
    def ours(self) -> tuple[Param, ...]:
        """This project's fields of this benchmark (written after upstream's columns)."""
        ours = _ours(self.typed)
        return tuple(p for p in self.typed.declared() if p.name in ours)

    @property
    def all_fields(self) -> tuple[Param, ...]:
        return (*self.upstream_fields, *self.ours)

    def op(self, values: Fields) -> str:
        return self.pick_op(self.of(values))

    def translate(self, values: Fields) -> dict[str, Any]:
        return self.translation(self.of(values))

    def run_id(self, values: Fields) -> str:
        return self.run_name(self.of(values))

    def flops(self, values: Fields, group: int = 1) -> float:
        return self.flop_model(self.of(values), group)

    def bytes(self, values: Fields, group: int = 1) -> float:
        return self.byte_model(self.of(values), group)

    def place(self, values: Fields, devices: Callable[[], int]) -> dict[str, Any]:
        return self.placement(self.of(values), devices)

    def peak_dtype(self, values: Fields) -> str:
        return self.peak(self.of(values))


V2: dict[str, V2Benchmark[Any]] = {}


def register_v2(benchmark: V2Benchmark[F]) -> V2Benchmark[F]:
    register_once(V2, benchmark.name, benchmark, "jax-bench benchmark")
    return benchmark


def jax_bench_names() -> list[str]:
    return [name for name, bench in V2.items() if not bench.tpums_only]


def get_v2(name: str, where: str, tpums: bool = False) -> V2Benchmark[Any]:
    """A jax-bench name's entry (with `tpums`, TPUMS's own ones too)."""
    if name not in V2 or (V2[name].tpums_only and not tpums):
        raise UserError(
            f"unknown benchmark '{name}' (jax-bench names: {', '.join(jax_bench_names())})",
            key=where,
            suggestion=did_you_mean(str(name), jax_bench_names()),
        )
    return V2[name]


def fixed(op: str) -> Callable[[Any], str]:
    return lambda f: op


def shared_with(params: type[OpParams]) -> Callable[[OpParams], dict[str, Any]]:
    """The translation of a benchmark whose fields our op declares under the same names: each of
    the op's parameters that the benchmark has."""
    return lambda f: {name: f[name] for name in params.names() if name in f}


def per_element(
    flops: float, nbytes: float, count: Callable[[F], int]
) -> tuple[Callable[[F, int], float], Callable[[F, int], float]]:
    """Models of an op upstream counts per element: flops and bytes each, over `count` elements."""
    return (lambda f, n: flops * count(f)), (lambda f, n: nbytes * count(f))
