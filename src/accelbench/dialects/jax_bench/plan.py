"""The jax-bench (v2) dialect: `global:` defaults, a `hardware:` block and `benchmarks: - name:` entries
with `sweep:`, `csv_shapes:` and `model:`; and its one-off form (`run --run NAME --field value`).

Each entry expands as upstream's does (docs/jax_bench.md): model preset, then CSV rows, then laid over
`global`, then the sweep; precedence sweep > CSV cell > entry > preset > global > the field's default.
Each resulting set of fields becomes one case of the op the benchmark table (benchmarks.py and its families) names,
carrying the fields as its `Origin` so the summary sink writes upstream's columns. Unlike upstream, a
file may name several benchmarks, bad keys and values are one-line errors, and nothing is dropped
silently.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelbench.catalogue import get_spec
from accelbench.config.cases import cases_per_implementation
from accelbench.config.schema import CaseCap
from accelbench.config.settings import (
    RUN_KEYS,
    PlanRequest,
    check_setting,
    checked_run,
    run_settings,
)
from accelbench.core.case import Case, Origin, Outputs, RunSettings
from accelbench.dialects.jax_bench.benchmarks import OURS, OURS_AS_PARAMS, V2Benchmark, get_v2
from accelbench.dialects.jax_bench.flags import CONDITIONS, HW, XPROF_DIR
from accelbench.dialects.jax_bench.hardware import parse_hardware, preset
from accelbench.dialects.jax_bench.inputs import (
    MAX_COMBINATIONS,
    model_fields,
    read_csv_shapes,
    read_sweep,
)
from accelbench.dialects.jax_bench.tpu_flags import process_env
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.backends import BACKENDS
from accelbench.specs import HardwareStats

# keys of an entry that are not fields: how it expands
STRUCTURE = ("name", "sweep", "csv_shapes", "model")
# this project's keys checked here (the run settings among them are checked as run settings)
OUR_CHECKS = {p.name: p.validate for p in OURS_AS_PARAMS if p.kind == "choice"}


class JaxBenchConfig(BaseModel):
    """The top level; entries are checked key by key by the planner (their keys depend on `name`).
    Top-level keys upstream does not read are ignored, as upstream, with a warning."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    global_: dict[str, Any] | None = Field(default=None, alias="global")
    hardware: dict[str, Any] | None = None
    benchmarks: list[dict[str, Any]] = Field(min_length=1)
    max_cases: CaseCap | None = None


def recognise(data: dict[str, Any]) -> bool:
    """A v2 file has `global:` or `hardware:`, or entries named by `name:` (Ironwood's say
    `benchmark_name:`)."""
    if "global" in data or "hardware" in data:
        return True
    entries = data.get("benchmarks")
    return isinstance(entries, list) and any(
        isinstance(e, dict) and "name" in e and "benchmark_name" not in e for e in entries
    )


@dataclass(frozen=True)
class Sourced:
    """A value and where the config gave it (for errors that name the right key)."""

    value: Any
    where: str


def _ours(key: str, given: Sourced) -> Any:
    """One of this project's keys, checked where it was given (a run setting by its rule)."""
    if key in RUN_KEYS:
        return check_setting(key, given.value, "", at=given.where)
    return OUR_CHECKS[key](given.value, given.where) if key in OUR_CHECKS else given.value


def _known(bench: V2Benchmark) -> tuple[str, ...]:
    return (*(p.name for p in bench.all_fields), *OURS)


def _check_keys(keys: Iterator[tuple[str, str]], bench: V2Benchmark) -> None:
    known = _known(bench)
    for key, where in keys:
        if key not in known:
            raise UserError(
                f"unknown key '{key}' for {bench.name}",
                key=where,
                suggestion=did_you_mean(key, known),
            )


def _layers(
    entry: dict[str, Any], index: int, bench: V2Benchmark, request: PlanRequest
) -> list[dict[str, Sourced]]:
    """The entry's values before `global` and the sweep: entry keys, the preset under them and one
    clone per CSV row over them."""
    where = key_path("benchmarks", index)
    own = {k: Sourced(v, key_path(where, k)) for k, v in entry.items() if k not in STRUCTURE}
    _check_keys(((k, s.where) for k, s in own.items()), bench)
    if "model" in entry:
        fields, note = model_fields(
            entry["model"], tuple(p.name for p in bench.all_fields), entry, key_path(where, "model")
        )
        request.warnings.append(note)
        own = {**{k: Sourced(v, key_path(where, "model")) for k, v in fields.items()}, **own}
    if "csv_shapes" not in entry:
        return [own]
    csv_where = key_path(where, "csv_shapes")
    rows = read_csv_shapes(entry["csv_shapes"], request.config_dir, csv_where)
    _check_keys(((k, f"{csv_where} column {k}") for k in rows[0]), bench)
    return [
        {**own, **{k: Sourced(v, f"{csv_where} row {i + 1} column {k}") for k, v in row.items()}}
        for i, row in enumerate(rows)
    ]


def _field_values(
    bench: V2Benchmark, given: dict[str, Sourced], max_dim: int | None
) -> dict[str, Any]:
    """Every field (upstream's order, then ours), validated, defaulted and --max-dim clamped."""
    out: dict[str, Any] = {}
    for param in bench.all_fields:
        if param.name in given:
            value = param.validate(given[param.name].value, given[param.name].where)
        else:
            value = param.default_value
        out[param.name] = param.clamped(value, max_dim) if max_dim else value
    return out


def _hardware(
    given: dict[str, Sourced], top: HardwareStats | None, request: PlanRequest, where: str
) -> HardwareStats | None:
    """Upstream's order: an entry's own `hardware_stats`, else the `hardware:` block, else a
    `hardware_stats` in `global`; else the `system` the entry or `global` names (even an empty one),
    else --hw."""
    stats = given.get("hardware_stats")
    if stats is not None and (top is None or not stats.where.startswith("global")):
        parsed, warnings = parse_hardware(stats.value, stats.where)
        request.warnings.extend(warnings)
        return None if parsed.empty and not parsed.shown else parsed
    if top is not None:
        return top
    system = given.get("system")
    name = system.value if system is not None else request.flag(HW)
    if not name:
        return None
    found, warning = preset(str(name), system.where if system is not None else "--hw")
    if warning:
        request.warnings.append(warning)
    return found


def _pairs(fields: dict[str, Any], request: PlanRequest, where: str) -> list[dict[str, Any]]:
    """device_to_device: the pair given, or every ordered pair of the devices (upstream's expansion)."""
    src, dst = fields["src_device_index"], fields["dst_device_index"]
    if (src < 0) != (dst < 0):
        raise UserError(
            "give both src_device_index and dst_device_index (one pair) or neither (every pair)",
            key=where,
        )
    if src >= 0:
        return [fields]
    n = request.device_count()
    return [
        {**fields, "src_device_index": s, "dst_device_index": d}
        for s in range(n)
        for d in range(n)
        if s != d
    ]


@dataclass(frozen=True)
class EntryContext:
    index: int
    bench: V2Benchmark
    hardware: HardwareStats | None


def _conditions(ours: dict[str, Any], request: PlanRequest) -> str:
    """Whose conditions a case is measured under: --conditions, else the file's, else upstream's."""
    return request.flag(CONDITIONS) or ours.get("conditions") or "upstream"


def _group(fields: dict[str, Any], request: PlanRequest) -> tuple[dict[str, Any], int]:
    """A collective's mesh as upstream resolves it over the devices, and its group size N."""
    from accelbench.dialects.jax_bench.collective import resolve_group  # registered after compute

    devices = request.device_count()
    group = resolve_group(fields, devices)
    request.warnings.extend(group.warnings)
    # the mesh's own device count (a DCN mesh the devices cannot fill: an unsupported row, not a
    # fallback; any other mesh fills them or is one axis of all)
    size = math.prod(int(d) for d in group.mesh_shape.split("x")) if group.mesh_shape else devices
    mesh = {"ici_size": size, "mesh_shape": group.mesh_shape}
    return {**mesh, "sharding_strategy": group.strategy}, group.size


def _placed(spec_params: tuple[str, ...], placement: dict[str, Any], where: str) -> dict[str, Any]:
    """Only the placement parameters the op has (a bug, not a config error, otherwise)."""
    missing = set(placement) - set(spec_params)
    if missing:
        raise ValueError(f"{where}: placement {sorted(missing)} unknown to the op")
    return placement


# jax-bench's own names for three run settings
UPSTREAM_SETTINGS = {
    "num_runs": "num_runs",
    "warmup": "warmup_tries",
    "min_duration_s": "min_duration_s",
}


def _run_settings(
    fields: dict[str, Any],
    ours: dict[str, Any],
    given: dict[str, Sourced],
    conditions: str,
    where: str,
) -> RunSettings:
    """The case's run settings: upstream's conditions (warm, the host loop timed too) or strict ones,
    upstream's three fields and ours, each checked where it was given."""
    base = RunSettings(cache="warm", host_loop=True) if conditions == "upstream" else RunSettings()
    for setting, name in UPSTREAM_SETTINGS.items():  # an error names the key that gave the value
        if name in given:
            check_setting(setting, fields[name], "", at=given[name].where)
    return run_settings(
        base,
        {
            **{setting: fields[name] for setting, name in UPSTREAM_SETTINGS.items()},
            **{k: v for k, v in ours.items() if k not in ("backend", "implementation")},
        },
        where,
    )


def _cases_for(
    fields: dict[str, Any],
    ours: dict[str, Any],
    given: dict[str, Sourced],
    ctx: EntryContext,
    request: PlanRequest,
) -> list[Case]:
    """The case(s) of one set of fields (one per backend and implementation)."""
    bench, where = ctx.bench, key_path("benchmarks", ctx.index)
    translated = bench.translate(fields)
    group = 1
    if bench.collective:
        mesh, group = _group(fields, request)
        translated.update(mesh)
    conditions = _conditions(ours, request)
    spec = get_spec(bench.op(fields))
    if conditions == "upstream":
        placement = bench.place(fields, request.device_count)
        translated.update(_placed(spec.param_names, placement, bench.name))
    params = spec.resolve(translated, where)
    try:
        spec.check_constraints(params, where)
    except UserError as error:  # a field the translation read (mesh_shape): name the entry
        raise UserError(error.message, key=where, suggestion=error.suggestion) from None
    run = _run_settings(fields, ours, given, conditions, where)
    if spec.traits.run_overrides and conditions == "strict":  # upstream: every call blocked, warm
        run = spec.traits.run_overrides(params).apply(run)
    run = checked_run(run, where)
    stats = _hardware(given, ctx.hardware, request, where)
    shown = {**fields, "hardware_stats": stats.as_config() if stats else {}}
    origin = Origin(bench.name, tuple(shown.items()), stats, conditions, group)
    outputs = Outputs(
        csv_path=request.default_csv,
        trace_dir=_trace_dir(fields["xprof_dir"], request) if fields["xprof_timing"] else None,
    )
    return cases_per_implementation(
        spec,
        _backends(request.backend or ours.get("backend"), spec.name, key_path(where, "backend")),
        ours.get("implementation") or (bench.implementation if conditions == "upstream" else None),
        where,
        params=params,
        run=run,
        outputs=outputs,
        benchmark=bench.name,
        config_id=request.config_id,
        origin=origin,
        process_env=process_env(bench),
    )


# Google-internal file systems upstream cannot write to from a TPU VM: it traces to /tmp instead
UNWRITABLE_ROOTS = ("/cns/", "/bigstore/")
LOCAL_TRACE_ROOT = "/tmp/microbenchmarks_tmptrace"


def _trace_dir(path: str, request: PlanRequest) -> str:
    """Where a case's trace goes: `xprof_dir`, except that /cns/ and /bigstore/ paths go under
    /tmp/microbenchmarks_tmptrace, as upstream redirects them (said once)."""
    if not path.startswith(UNWRITABLE_ROOTS):
        return path
    local = os.path.join(LOCAL_TRACE_ROOT, path.lstrip("/"))
    request.warnings.append(f"xprof_dir {path}: traces go to {local} (as jax-bench redirects it)")
    return local


def _backends(value: Any, op: str, where: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value or ["jax"])
    spec = get_spec(op)
    for name in names:
        if name not in spec.backends:
            raise UserError(
                f"op '{op}' has no {name} implementation (implemented in: {', '.join(spec.backends)})",
                key=where,
                suggestion=did_you_mean(str(name), [b for b in BACKENDS if b in spec.backends]),
            )
    return names


def _expand_entry(
    entry: Any,
    index: int,
    globals_: dict[str, Any],
    top: HardwareStats | None,
    request: PlanRequest,
    hidden: bool,
) -> list[tuple[str, Case]]:
    """The entry's cases, each with what was asked for before --max-dim clamped it (a repeat is
    a point asked for twice, not two points that clamping made equal)."""
    where = key_path("benchmarks", index)
    if not isinstance(entry, dict):
        raise UserError(f"an entry must be a mapping, got {type(entry).__name__}", key=where)
    if "name" not in entry:
        raise UserError("required key is missing", key=key_path(where, "name"))
    bench = get_v2(entry["name"], key_path(where, "name"), hidden)
    shared = {k: Sourced(v, key_path("global", k)) for k, v in globals_.items() if k != "sweep"}
    if request.flag(XPROF_DIR):  # --xprof_dir: where neither the entry nor global says
        shared.setdefault("xprof_dir", Sourced(request.flag(XPROF_DIR), "--xprof_dir"))
    _check_keys(((k, s.where) for k, s in shared.items()), bench)
    sweep_where = key_path(where, "sweep") if "sweep" in entry else "global.sweep"
    sweep = read_sweep(entry.get("sweep", globals_.get("sweep")), sweep_where)
    request.warnings.extend(sweep.warnings)
    _check_keys(((name, key_path(sweep_where, name)) for name, _ in sweep.axes), bench)
    if sweep.total > MAX_COMBINATIONS:
        request.warnings.append(
            f"{sweep_where}: {sweep.total:,} combinations; the first {MAX_COMBINATIONS} are run, "
            "as jax-bench does (split the sweep to run the rest)"
        )
    ctx = EntryContext(index, bench, top)
    cases: list[tuple[str, Case]] = []
    for layer in _layers(entry, index, bench, request):
        merged = {**shared, **layer}
        for combo in sweep.combinations() if sweep.axes else iter([{}]):
            given = {
                **merged,
                **{k: Sourced(v, key_path(sweep_where, k)) for k, v in combo.items()},
            }
            fields_given = {k: s for k, s in given.items() if k not in OURS}
            ours = {k: _ours(k, s) for k, s in given.items() if k in OURS}
            fields = _field_values(bench, fields_given, request.max_dim)
            asked = repr(_field_values(bench, fields_given, None)) if request.max_dim else ""
            expanded = _pairs(fields, request, where) if bench.every_pair else [fields]
            for one in expanded:
                cases += [(asked, c) for c in _cases_for(one, ours, given, ctx, request)]
                if len(cases) > request.max_cases:
                    raise UserError(
                        f"the config expands to more than {request.max_cases} cases; raise the cap "
                        "with --max-cases or 'max_cases:' if this is intended",
                        key=where,
                    )
    return cases


def _numbered_repeats(cases: list[tuple[str, Case]]) -> list[Case]:
    """Under upstream's conditions a case asked for twice runs twice, as jax-bench runs it: each
    repeat is numbered, so it is a case of its own (its own id, row and summary line). Points that
    only --max-dim made equal are not repeats: they stay one case, which runs once."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for asked, case in cases:
        if case.origin is not None and case.origin.conditions == "upstream":
            n = seen.get((case.id, asked), 0)
            seen[case.id, asked] = n + 1
            case = replace(case, occurrence=n) if n else case
        out.append(case)
    return out


def plan(cfg: JaxBenchConfig, request: PlanRequest) -> list[Case]:
    return plan_entries(cfg, request)


def plan_entries(cfg: JaxBenchConfig, request: PlanRequest, hidden: bool = False) -> list[Case]:
    """The cases of a jax-bench file; `hidden`: names a later generation adds (planned through this
    one) are known too."""
    for key in cfg.model_extra or {}:
        request.warnings.append(
            f"{key}: not a jax-bench key (global, hardware, benchmarks): ignored, as jax-bench does"
        )
    top = None
    if cfg.hardware:
        top, warnings = parse_hardware(cfg.hardware, "hardware")
        request.warnings.extend(warnings)
    globals_ = cfg.global_ or {}
    cases: list[tuple[str, Case]] = []
    for i, entry in enumerate(cfg.benchmarks):
        cases += _expand_entry(entry, i, globals_, top, request, hidden)
        if len(cases) > request.max_cases:  # the cap holds across entries too
            raise UserError(
                f"the config expands to more than {request.max_cases} cases; raise the cap "
                "with --max-cases or 'max_cases:' if this is intended",
                key=key_path("benchmarks", i),
            )
    return _numbered_repeats(cases)
