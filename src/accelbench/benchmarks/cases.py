"""A reference benchmark's cases, from either generation's file: each point of its expansion, in the
file's names (`Reading`), is checked where given, made the benchmark's typed fields and planned as its
op, under upstream's conditions or strict ones. jax-bench's entries expand here too; precedence: sweep
> CSV cell > entry > model preset > global > the field's default."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from accelbench.benchmarks.base import (
    BASE_NAMES,
    OURS,
    OURS_AS_PARAMS,
    Benchmark,
    Tpums,
    Upstream,
)
from accelbench.benchmarks.collective import resolve_group
from accelbench.benchmarks.flags import CONDITIONS, HW
from accelbench.benchmarks.hardware import parse_hardware, preset
from accelbench.benchmarks.models import model_fields
from accelbench.benchmarks.tpu_flags import process_env
from accelbench.catalogue import OpSpec, Param, get_spec
from accelbench.config.cases import cases_per_implementation, lacking
from accelbench.config.expand import Given, Point, csv_cases, given, upstream_sweep
from accelbench.config.settings import (
    RUN_KEYS,
    PlanRequest,
    check_setting,
    checked_run,
    run_settings,
)
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.backends import BACKENDS
from accelbench.specs import HardwareStats

JAX_BENCH_CAP = "; the first {} are run, as jax-bench does (split the sweep to run the rest)"
STRUCTURE = ("name", "sweep", "csv_shapes", "model")  # keys of an entry that are not fields
OUR_CHECKS = {p.name: p.validate for p in OURS_AS_PARAMS if p.kind == "choice"}
# jax-bench's own names for three run settings
UPSTREAM_NAMES = dict(num_runs="num_runs", warmup="warmup_tries", min_duration_s="min_duration_s")
# Google-internal file systems upstream cannot write to from a TPU VM: it traces to /tmp instead
UNWRITABLE_ROOTS = ("/cns/", "/bigstore/")
LOCAL_TRACE_ROOT = "/tmp/microbenchmarks_tmptrace"


@dataclass(frozen=True)
class Reading:
    """How a file names a benchmark's fields: each key to its attribute (None: checked, set aside) and
    its declaration, and the other spellings it takes."""

    bench: Benchmark[Any]
    fields: dict[str, tuple[str | None, Param]]
    aliases: dict[str, str] = field(default_factory=dict)
    tpums: Tpums | None = None

    @classmethod
    def jax_bench(cls, bench: Benchmark[Any]) -> Reading:
        return cls(bench, {p.name: (p.name, p) for p in bench.all_fields})

    @classmethod
    def of_tpums(cls, entry: Tpums, flat: bool = False) -> Reading:
        """TPUMS's names and defaults: its newest form checked by TPUMS's rules, its earlier `flat` one
        as jax-bench reads it; its inert fields checked and set aside."""
        bench, back = entry.bench, {v: k for k, v in entry.renamed.items()}
        inert: dict[str, tuple[str | None, Param]] = {p.name: (None, p) for p in entry.inert}
        fields: dict[str, tuple[str | None, Param]] = {}
        if flat:
            for p in bench.all_fields:
                name = back.get(p.name, p.name)
                fields[name] = (p.name, replace(p, default=entry.defaults.get(name, p.default)))
        else:
            declared = {p.name: p for p in bench.all_fields}
            fields = dict(entry.attributes)
            fields.update({n: (n, declared[n]) for n in BASE_NAMES if n not in fields})
        return cls(bench, {**fields, **inert}, dict(entry.aliases), entry)

    @property
    def name(self) -> str:
        return self.tpums.name if self.tpums else self.bench.name

    @property
    def known(self) -> tuple[str, ...]:
        return (*self.fields, *self.aliases, *OURS)

    def check_keys(self, keys: Iterable[tuple[str, str]]) -> None:
        known = self.known
        for key, where in keys:
            if key not in known:
                raise UserError(
                    f"unknown key '{key}' for {self.name}",
                    key=where,
                    suggestion=did_you_mean(key, known),
                )

    def canonical(self, point: Point) -> Point:
        """The point under each field's own name (an alias once); an unknown key is refused."""
        out: Point = {}
        for key, value in point.items():
            self.check_keys([(key, value.where)])
            name = self.aliases.get(key, key)
            if name in out:
                raise UserError(f"'{name}' is given twice (as '{key}' too)", key=value.where)
            out[name] = value
        return out

    def values(self, point: Point, max_dim: int | None = None) -> dict[str, Any]:
        """Every field, by attribute: checked where given, else its default, --max-dim clamped."""
        out: dict[str, Any] = {}
        for key, (attribute, param) in self.fields.items():
            g = point.get(key)
            value = param.validate(g.value, g.where) if g is not None else param.default_value
            if attribute is not None:
                out[attribute] = param.clamped(value, max_dim) if max_dim else value
        return out


@dataclass(frozen=True)
class Context:
    reading: Reading
    where: str
    hardware: HardwareStats | None = None


def our_value(key: str, g: Given) -> Any:
    if key in RUN_KEYS:
        return check_setting(key, g.value, "", at=g.where)
    return OUR_CHECKS[key](g.value, g.where) if key in OUR_CHECKS else g.value


def point_cases(
    point: Point,
    ctx: Context,
    request: PlanRequest,
    adjust: Callable[[dict[str, Any]], dict[str, Any]] = lambda values: values,
) -> list[tuple[str, Case]]:
    """The cases of one point (d2d: of each pair), each with what was asked before --max-dim clamped
    it (a repeat is one point asked twice); `adjust`: TPUMS's file-level xprof_timing."""
    reading = ctx.reading
    point = reading.canonical(point)
    ours = {k: our_value(k, g) for k, g in point.items() if k in OURS}
    mine = {k: g for k, g in point.items() if k not in OURS}
    values = adjust(reading.values(mine, request.max_dim))
    asked = repr(adjust(reading.values(mine))) if request.max_dim else ""
    pairs = _pairs(values, request, ctx.where) if reading.bench.every_pair else [values]
    return [
        (asked, case)
        for one in pairs
        for case in cases_of(reading.bench.typed(**one), ours, mine, ctx, request)
    ]


def _pairs(values: dict[str, Any], request: PlanRequest, where: str) -> list[dict[str, Any]]:
    """device_to_device: the pair given, or every ordered pair of the devices (upstream's)."""
    src, dst = values["src_device_index"], values["dst_device_index"]
    if (src < 0) != (dst < 0):
        raise UserError(
            "give both src_device_index and dst_device_index (one pair) or neither (every pair)",
            key=where,
        )
    if src >= 0:
        return [values]
    n = request.device_count()
    pairs = [(s, d) for s in range(n) for d in range(n) if s != d]
    return [{**values, "src_device_index": s, "dst_device_index": d} for s, d in pairs]


def _group(fields: Any, request: PlanRequest, where: str) -> tuple[dict[str, Any], int]:
    """A collective's mesh as upstream resolves it over the devices, and its group size N."""
    devices = request.device_count()
    try:
        group = resolve_group(fields, devices)
    except UserError as error:  # a mesh the fields cannot make: the case that gave them
        raise UserError(error.message, key=where) from None
    request.warnings.extend(group.warnings)
    # the mesh's own devices (a DCN mesh the devices cannot fill: an unsupported row, no fallback)
    size = math.prod(int(d) for d in group.mesh_shape.split("x")) if group.mesh_shape else devices
    mesh = {"ici_size": size, "mesh_shape": group.mesh_shape}
    return {**mesh, "sharding_strategy": group.strategy}, group.size


def _run_settings(
    fields: Any, ours: dict[str, Any], point: Point, conditions: str, where: str
) -> RunSettings:
    """Upstream's conditions (warm, host loop timed) or strict ones, under the fields and ours."""
    base = RunSettings(cache="warm", host_loop=True) if conditions == "upstream" else RunSettings()
    upstream = {setting: getattr(fields, name) for setting, name in UPSTREAM_NAMES.items()}
    for setting, name in UPSTREAM_NAMES.items():  # an error names the key that gave the value
        if name in point:
            check_setting(setting, upstream[setting], "", at=point[name].where)
    mine = {k: v for k, v in ours.items() if k not in ("backend", "implementation")}
    return run_settings(base, {**upstream, **mine}, where)


def cases_of(
    fields: Any, ours: dict[str, Any], point: Point, ctx: Context, request: PlanRequest
) -> list[Case]:
    bench, where = ctx.reading.bench, ctx.where
    translated = bench.translation(fields)
    group = 1
    if bench.collective:
        mesh, group = _group(fields, request, where)
        translated.update(mesh)
    conditions = request.flag(CONDITIONS) or ours.get("conditions") or "upstream"
    spec = get_spec(bench.op(fields))
    if conditions == "upstream":
        placement = bench.placement(fields, request.device_count)
        if missing := set(placement) - set(spec.param_names):  # a bug, not a config error
            raise ValueError(f"{bench.name}: placement {sorted(missing)} unknown to the op")
        translated.update(placement)
    params = spec.resolve(translated, where)
    spec.check_constraints(params, where)  # a field the translation read (mesh_shape): the entry
    run = _run_settings(fields, ours, point, conditions, where)
    if spec.traits.run_overrides and conditions == "strict":  # upstream: every call blocked, warm
        run = spec.traits.run_overrides(params).apply(run)
    run = checked_run(run, where)
    stats = _hardware(point, ctx.hardware, request)
    shown = replace(fields, hardware_stats=dict(stats.shown) if stats else {})
    origin = Upstream(bench, shown, stats, conditions, group, ctx.reading.tpums)
    trace_dir = _trace_dir(fields.xprof_dir, request) if fields.xprof_timing else None
    return cases_per_implementation(
        spec,
        _backends(spec, request.backend or ours.get("backend"), where, not request.backend),
        ours.get("implementation") or (bench.implementation if conditions == "upstream" else None),
        where,
        params=params,
        run=run,
        outputs=Outputs(csv_path=request.default_csv, trace_dir=trace_dir),
        benchmark=bench.name,
        config_id=request.config_id,
        origin=origin,
        process_env=process_env(bench),
    )


def _hardware(
    point: Point, top: HardwareStats | None, request: PlanRequest
) -> HardwareStats | None:
    """Upstream's order: the entry's `hardware_stats`, `hardware:`, `global`'s `hardware_stats`, the
    `system` named (even an empty one), --hw."""
    stats = point.get("hardware_stats")
    if stats is not None and (top is None or not stats.where.startswith("global")):
        parsed = parse_hardware(stats.value, stats.where, request.warnings)
        return parsed if parsed.shown else None  # `hardware_stats: {}`: none
    if top is not None:
        return top
    system = point.get("system")
    name = system.value if system is not None else request.flag(HW)
    if not name:
        return None
    return preset(str(name), system.where if system is not None else "--hw", request.warnings)


def _trace_dir(path: str, request: PlanRequest) -> str:
    """`xprof_dir`, but /cns/ and /bigstore/ under LOCAL_TRACE_ROOT, as upstream redirects them."""
    if not path.startswith(UNWRITABLE_ROOTS):
        return path
    local = os.path.join(LOCAL_TRACE_ROOT, path.lstrip("/"))
    request.warnings.append(f"xprof_dir {path}: traces go to {local} (as jax-bench redirects it)")
    return local


def _backends(spec: OpSpec, value: Any, where: str, given: bool) -> list[str]:
    """The entry's backends; `--backend`'s (not `given` here) are checked once --only/--skip chose."""
    names = [value] if isinstance(value, str) else list(value or ["jax"])
    for name in names:
        if given and name not in spec.backends:
            raise UserError(
                lacking(spec, name),
                key=key_path(where, "backend"),
                suggestion=did_you_mean(str(name), [b for b in BACKENDS if b in spec.backends]),
            )
    return names


# ---- jax-bench's entries ----------------------------------------------------------------------------


def _layers(
    entry: dict[str, Any], where: str, reading: Reading, request: PlanRequest
) -> tuple[Point, ...]:
    """The entry's values before `global` and the sweep: its keys over its preset's, per CSV row."""
    own = given({k: v for k, v in entry.items() if k not in STRUCTURE}, where)
    reading.check_keys((k, g.where) for k, g in own.items())
    if "model" in entry:
        at = key_path(where, "model")
        found, note = model_fields(entry["model"], tuple(reading.fields), entry, at)
        request.warnings.append(note)
        own = {**{k: Given(v, at) for k, v in found.items()}, **own}
    if "csv_shapes" not in entry:
        return (own,)
    at = key_path(where, "csv_shapes")
    rows = csv_cases(entry["csv_shapes"], request.config_dir, at)
    reading.check_keys((k, f"{at} column {k}") for k in rows[0])
    return tuple({**own, **row} for row in rows)


def entry_points(
    entry: dict[str, Any],
    where: str,
    shared: Point,
    sweep_of: tuple[Any, str],
    reading: Reading,
    request: PlanRequest,
) -> Iterator[Point]:
    """A jax-bench entry's points: its layers over the shared (global) values, over its sweep."""
    reading.check_keys((k, g.where) for k, g in shared.items())
    sweep_value, sweep_where = sweep_of
    sweep = upstream_sweep(sweep_value, sweep_where, JAX_BENCH_CAP, request.warnings)
    reading.check_keys((a.name, a.where) for a in sweep.axes)
    layers = _layers(entry, where, reading, request)
    return replace(sweep, cases=tuple({**shared, **layer} for layer in layers)).points()


def numbered_repeats(cases: list[tuple[str, Case]]) -> list[Case]:
    """Under upstream's conditions a case asked for twice runs twice, as jax-bench's: each repeat a
    numbered case of its own; points only --max-dim made equal stay one case."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for asked, case in cases:
        if isinstance(case.origin, Upstream) and case.origin.conditions == "upstream":
            n = seen.get((case.id, asked), 0)
            seen[case.id, asked] = n + 1
            case = replace(case, occurrence=n) if n else case
        out.append(case)
    return out
