"""The TPUMS dialect: one `benchmark:` mapping per file (docs/tpums.md).

The newest form ("stage B") holds `name`, `xprof_timing`, `xprof_device_mode`, `model_preset`,
`params` (the baseline), `cases` or `cases_from_csv`, and `sweep` (keys disjoint from the others);
each case is the preset, overlaid by params, then by the case (or CSV row), then expanded over the
sweep's Cartesian product, capped at 1000 combinations per case. The earlier form ("stage A") keeps
the fields flat in `benchmark:` beside `sweep:`, `csv_shapes:` and `model:`, other top-level keys being
global values: a jax-bench entry under another name. Both are checked here key by key (errors name the
TPUMS key) and then planned by the jax-bench dialect under the benchmark's jax-bench name
(names.py), so conditions, ops, models and columns are the jax-bench ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from accelbench.config.settings import PlanRequest
from accelbench.core.case import DEVICE_MODES, Case
from accelbench.dialects.jax_bench import plan as jax_bench
from accelbench.dialects.jax_bench.benchmarks import OURS
from accelbench.dialects.jax_bench.flags import XPROF_DIR
from accelbench.dialects.jax_bench.inputs import (
    MAX_COMBINATIONS,
    MODEL_PRESETS,
    read_csv_shapes,
    read_sweep,
)
from accelbench.dialects.jax_bench.tpu_flags import FlagSet
from accelbench.dialects.tpums.names import BASE_NAMES, SAMPLES_PER_RUN, Tpums, get_tpums
from accelbench.errors import UserError, did_you_mean, key_path

RESERVED = ("name", "model_preset", "params", "cases", "cases_from_csv", "sweep")
STAGE_B = (*RESERVED, "xprof_timing", "xprof_device_mode")
TOP = "benchmark"


class TpumsConfig(BaseModel):
    """The top level: `benchmark:` (checked by the planner, its keys depend on its name); stage-A
    files may add global keys beside it."""

    model_config = ConfigDict(extra="allow")

    benchmark: Any


MISSING = "must define a 'benchmark:' mapping (name, params, cases or cases_from_csv, sweep)"


def recognise(data: dict[str, Any]) -> bool:
    return TOP in data and "benchmarks" not in data


@dataclass(frozen=True)
class Given:
    """A value and the TPUMS key that gave it."""

    value: Any
    where: str


def _mapping(value: Any, where: str, name: object = None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UserError(
            f"Expected '{where.rpartition('.')[2]}' in benchmark '{name}' to be a dict, got "
            f"{type(value).__name__}",
            key=where,
        )
    return {str(k): v for k, v in value.items()}


def _reserved(given: dict[str, Any], where: str) -> None:
    """TPUMS's structure keys (and xprof_timing, a file-level switch) cannot be a case's value."""
    if reserved := [k for k in given if k in (*RESERVED, "xprof_timing")]:
        raise UserError(
            f"{', '.join(reserved)}: reserved key(s) cannot be given here (they belong directly "
            "under benchmark:)",
            key=key_path(where, reserved[0]),
        )


def _known(entry: Tpums) -> dict[str, str]:
    """Every key a case may give, to its canonical field name (aliases included)."""
    known = {p.name: p.name for p in entry.fields}
    known.update({a: p.name for p in entry.fields for a in p.aliases})
    known.update({name: name for name in (*BASE_NAMES, *OURS)})
    return known


def _canonical(entry: Tpums, given: dict[str, Given]) -> dict[str, Given]:
    known, out = _known(entry), {}
    for key, value in given.items():
        if key not in known:
            raise UserError(
                f"unknown key '{key}' for {entry.name}",
                key=value.where,
                suggestion=did_you_mean(key, known),
            )
        name = known[key]
        if name in out:
            raise UserError(f"'{name}' is given twice (as '{key}' too)", key=value.where)
        out[name] = value
    return out


Layer = tuple[str, dict[str, Given]]  # where a case was given, and its values


def _cases(bench: dict[str, Any], request: PlanRequest) -> list[Layer]:
    """The cases before the sweep: each the params overlaid by a case or CSV row."""
    name = bench.get("name")
    if "cases" in bench and "cases_from_csv" in bench:
        raise UserError("cannot specify both 'cases' and 'cases_from_csv'", key=TOP)
    params_where = key_path(TOP, "params")
    params = _mapping(bench.get("params"), params_where, name)
    _reserved(params, params_where)
    base = {k: Given(v, key_path(params_where, k)) for k, v in params.items()}
    if "cases_from_csv" in bench:
        where = key_path(TOP, "cases_from_csv")
        rows = read_csv_shapes(bench["cases_from_csv"], request.config_dir, where)
        return [
            (
                f"{where} row {i + 1}",
                {
                    **base,
                    **{k: Given(v, f"{where} row {i + 1} column {k}") for k, v in row.items()},
                },
            )
            for i, row in enumerate(rows)
        ]
    if "cases" not in bench:
        return [(params_where, base)]
    return _listed_cases(bench, base, TOP)


def _listed_cases(bench: dict[str, Any], base: dict[str, Given], top: str) -> list[Layer]:
    """`cases:`, a list of mappings, each over `base` (params; a stage-A file's flat fields)."""
    where, cases, name = key_path(top, "cases"), bench["cases"], bench.get("name")
    if not isinstance(cases, list) or not cases:
        raise UserError(
            f"Expected 'cases' in benchmark '{name}' to be a list (non-empty) of mappings, got "
            f"{type(cases).__name__}",
            key=where,
        )
    out: list[Layer] = []
    for i, case in enumerate(cases):
        at = key_path(where, i)
        if not isinstance(case, dict):
            raise UserError(
                f"Expected each item of 'cases' in benchmark '{name}' to be a dict, got "
                f"{type(case).__name__}",
                key=at,
            )
        _reserved(case, at)
        out.append(
            (at, {**base, **{str(k): Given(v, key_path(at, str(k))) for k, v in case.items()}})
        )
    return out


def _preset(bench: dict[str, Any], entry: Tpums) -> dict[str, Given]:
    """The model preset's values for the fields this benchmark has (an unknown preset is an error,
    as TPUMS made it)."""
    if "model_preset" not in bench:
        return {}
    where, name = key_path(TOP, "model_preset"), bench["model_preset"]
    preset = MODEL_PRESETS.get(str(name))
    if preset is None:
        raise UserError(
            f"Unknown model preset '{name}' (presets: {', '.join(MODEL_PRESETS)})",
            key=where,
            suggestion=did_you_mean(str(name), MODEL_PRESETS),
        )
    fields = {p.name for p in entry.fields}
    return {k: Given(v, where) for k, v in preset.items() if k in fields}


def _swept(bench: dict[str, Any], cases: list[Layer], request: PlanRequest) -> Iterator[Layer]:
    """Each case over the sweep's product (first key slowest), at most 1000 combinations per case."""
    if "sweep" not in bench:
        yield from cases
        return
    where = key_path(TOP, "sweep")
    if not isinstance(bench["sweep"], dict) or not bench["sweep"]:
        raise UserError(
            f"Expected 'sweep' in benchmark '{bench.get('name')}' to be a non-empty dict",
            key=where,
        )
    _reserved(bench["sweep"], where)
    sweep = read_sweep(bench["sweep"], where)
    request.warnings.extend(sweep.warnings)
    names = [name for name, _ in sweep.axes]
    case_block = "cases_from_csv" if "cases_from_csv" in bench else "cases"
    for block, keys in (
        ("params", set(_mapping(bench.get("params"), "params"))),
        (
            case_block,
            {k for _, case in cases for k, g in case.items() if ".params." not in g.where},
        ),
    ):
        if clash := [n for n in names if n in keys]:
            raise UserError(
                f"sweep key(s) {', '.join(clash)} collide with keys in '{block}' (a key is given "
                "in one place)",
                key=key_path(where, clash[0]),
            )
    if sweep.total > MAX_COMBINATIONS:
        request.warnings.append(
            f"{where}: {sweep.total:,} combinations per case; the first {MAX_COMBINATIONS} are "
            "run, as TPUMS does"
        )
    for at, case in cases:
        for combo in itertools.islice(sweep.combinations(), MAX_COMBINATIONS):
            yield at, {**case, **{k: Given(v, key_path(where, k)) for k, v in combo.items()}}


def _dcn_note(values: dict[str, Any], where: str, request: PlanRequest) -> None:
    """A DCN file's batching is recorded, not applied: each timed step here is one collective."""
    if values.get("batch_size") not in (None, 1) or values.get("sync_between_runs"):
        note = (
            f"{where}: batch_size and sync_between_runs are recorded; each timed step here is one "
            "collective (upstream's batching is not applied)"
        )
        if note not in request.warnings:
            request.warnings.append(note)


def _checked(entry: Tpums, given: dict[str, Given]) -> dict[str, Any]:
    """The case's values, each checked against its field (errors name the TPUMS key)."""
    fields = {p.name: p for p in entry.fields}
    return {
        name: fields[name].validate(g.value, g.where) if name in fields else g.value
        for name, g in given.items()
    }


def _flag(bench: dict[str, Any], key: str, choices: tuple[Any, ...]) -> Any:
    value = bench.get(key)
    if value is not None and value not in choices:
        raise UserError(
            f"must be one of {', '.join(map(str, choices))}, got {value!r}", key=key_path(TOP, key)
        )
    return value


# what TPUMS files write for a dtype jax.numpy spells otherwise (upstream fails on the case)
MEANT_DTYPES = {"float4": "float4_e2m1fn"}


def _meant(value: Any, dtype_keys: set[str], path: str, said: list[str]) -> Any:
    """The file with each dtype value its authors meant (`float4` is jax.numpy's float4_e2m1fn)."""
    if isinstance(value, dict):
        return {k: _meant(v, dtype_keys, key_path(path, str(k)), said) for k, v in value.items()}
    if isinstance(value, list):
        return [_meant(v, dtype_keys, path, said) for v in value]
    if path.rpartition(".")[2] in dtype_keys and isinstance(value, str) and value in MEANT_DTYPES:
        said.append(f"{path}: {value} read as {MEANT_DTYPES[value]}, the jax.numpy name")
        return MEANT_DTYPES[value]
    return value


def _entries_b(
    bench: dict[str, Any], entry: Tpums, request: PlanRequest
) -> list[tuple[dict[str, Any], str]]:
    """(jax-bench entry, where its case came from) per case of a stage-B file."""
    xprof = bench.get("xprof_timing")
    if xprof is not None and not isinstance(xprof, bool):
        raise UserError(
            f"Expected 'xprof_timing' in benchmark '{entry.name}' to be a bool (true or false), "
            f"got {xprof!r}",
            key=key_path(TOP, "xprof_timing"),
        )
    device_mode = _flag(bench, "xprof_device_mode", DEVICE_MODES)
    preset = _preset(bench, entry)
    out: list[tuple[dict[str, Any], str]] = []
    for where, case in _swept(bench, _cases(bench, request), request):
        given = _canonical(entry, {**preset, **case})
        checked = _runs_at_least_one(_checked(entry, given), where, request)
        _dcn_note(checked, TOP, request)
        fields = entry.to_v2({**entry.moved, **checked})
        if entry.soak:
            _soaks(xprof, fields, where)
        if xprof is not None:
            fields["xprof_timing"] = xprof
        if device_mode is not None:
            fields["xprof_device_mode"] = device_mode
        if request.flag(XPROF_DIR):
            fields["xprof_dir"] = request.flag(XPROF_DIR)
        out.append(({"name": entry.v2, **fields}, where))
    return out


def _runs_at_least_one(checked: dict[str, Any], where: str, request: PlanRequest) -> dict[str, Any]:
    """TPUMS allows num_runs 0 (min_duration_s alone then decides how long it times); a row here is
    never made of no samples, so at least one call is timed."""
    if checked.get("num_runs") != 0:
        return checked
    if not checked.get("min_duration_s"):
        note = f"{where}: num_runs 0 and no min_duration_s: TPUMS times nothing; one call is timed here"
        if note not in request.warnings:
            request.warnings.append(note)
    return {**checked, "num_runs": 1}


def _soaks(xprof: Any, fields: dict[str, Any], where: str) -> None:
    """TPUMS's soak needs its traced windows and a duration (its executor refuses otherwise)."""
    if xprof is not True:
        raise UserError("a soak's windows are traced: set xprof_timing: true", key=TOP)
    if not fields.get("min_duration_s"):
        raise UserError("a soak lasts min_duration_s: give it (above 0)", key=where)
    fields.setdefault("soak_chunk", SAMPLES_PER_RUN.default)


def _entries_a(data: dict[str, Any], entry: Tpums) -> list[tuple[dict[str, Any], str]]:
    """A stage-A file as jax-bench files, one per case (its flat fields overlaid by each item of a
    `cases:` list, where it has one): the benchmark an entry, the other top-level keys global."""
    bench = dict(data[TOP])
    for alias, name in entry.aliases.items():
        if alias in bench:
            bench[name] = bench.pop(alias)
    flat = {k: v for k, v in bench.items() if k != "cases"}
    layers = (
        [
            (where, {k: g.value for k, g in case.items()})
            for where, case in _listed_cases(bench, {}, TOP)
        ]
        if "cases" in bench
        else [(TOP, {})]
    )
    top = {k: v for k, v in data.items() if k != TOP}
    hardware = top.pop("hardware", None)
    out = []
    for where, case in layers:
        fields = {**entry.to_v2({**entry.moved, **flat, **case}), "name": entry.v2}
        converted = {"global": top, "benchmarks": [fields]}
        if hardware is not None:
            converted["hardware"] = hardware
        out.append((converted, where))
    return out


def _stage_b(data: dict[str, Any]) -> bool:
    """Which form a file is in. The newest (B) keeps only structure keys in `benchmark:`; a field
    directly there is the earlier form (A) where the file shows that form's marks (a global key
    beside `benchmark:`, or a sweep or cases list beside the flat fields), else the mistake TPUMS's
    newest loader names."""
    bench = data[TOP]
    flat = [k for k in bench if k not in STAGE_B]
    if not flat:
        return True
    marked = any(k != TOP for k in data) or "sweep" in bench or "cases" in bench
    if marked and not {"params", "cases_from_csv", "model_preset"} & set(bench):
        return False
    raise UserError(
        f"Unrecognized key(s) in 'benchmark' mapping: {', '.join(flat)}. Baseline execution "
        "parameters should be placed under 'params:'",
        key=key_path(TOP, flat[0]),
    )


def plan(cfg: TpumsConfig, request: PlanRequest) -> list[Case]:
    """The file's cases, each carrying its TPUMS name so its summary.csv takes TPUMS's columns."""
    cases = _plan(cfg, request)
    name = cfg.benchmark.get("name")
    return [
        replace(c, origin=replace(c.origin, generation="tpums", generation_name=name))
        if c.origin is not None
        else c
        for c in cases
    ]


def _plan(cfg: TpumsConfig, request: PlanRequest) -> list[Case]:
    data = {TOP: cfg.benchmark, **(cfg.model_extra or {})}
    bench = cfg.benchmark
    if not isinstance(bench, dict):
        raise UserError(MISSING, key=TOP)
    if "name" not in bench or not bench["name"]:
        raise UserError("required key is missing", key=key_path(TOP, "name"))
    entry = get_tpums(bench["name"], key_path(TOP, "name"))
    said: list[str] = []
    dtype_keys = {p.name for p in entry.fields if p.kind.endswith("dtype")}
    bench = _meant(bench, dtype_keys, TOP, said)
    data[TOP] = bench
    request.warnings.extend(dict.fromkeys(said))
    if entry.is_experimental:
        request.warnings.append(f"[WARNING] Running experimental benchmark '{entry.name}'")
    if _stage_b(data):
        if extra := [k for k in data if k != TOP]:
            raise UserError(
                "not a TPUMS key: one `benchmark:` mapping per file (baseline parameters belong "
                "under benchmark.params)",
                key=extra[0],
            )
        converted_cases = [
            ({"benchmarks": [fields]}, where) for fields, where in _entries_b(bench, entry, request)
        ]
    else:
        _dcn_note(bench, TOP, request)
        converted_cases = _entries_a(data, entry)
    cases: list[Case] = []
    for converted, where in converted_cases:
        cases += _planned(converted, request, where)
        if len(cases) > request.max_cases:
            raise UserError(
                f"the config expands to more than {request.max_cases} cases; raise the cap with "
                "--max-cases if this is intended",
                key=TOP,
            )
    return cases


def _planned(converted: dict[str, Any], request: PlanRequest, where: str) -> list[Case]:
    """The jax-bench dialect's cases; its errors re-keyed to where the TPUMS file gave the case."""
    before = len(request.warnings)
    try:
        model = jax_bench.JaxBenchConfig.model_validate(converted)
        cases = jax_bench.plan_entries(model, request, hidden=True)  # the same warnings list
        request.warnings[before:] = [_located(w, where) for w in request.warnings[before:]]
        return cases
    except UserError as error:
        inner = (error.key or "").removeprefix("benchmarks[0]").lstrip(".")
        if inner.startswith("global."):  # a stage-A top-level key
            error.key = inner.removeprefix("global.")
        else:
            error.key = key_path(where, inner) if inner and where == TOP else where
        raise


def _located(warning: str, where: str) -> str:
    """A jax-bench warning about the converted file, naming the TPUMS key instead."""
    if warning.startswith("global."):
        return warning.removeprefix("global.")
    return warning.replace("benchmarks[0]", TOP if where == TOP else where)


def flag_sets(path: str) -> dict[str, FlagSet]:
    """--xla_flags_file_path: per benchmark name, a list of flags or `{flags: [...], env: {...}}`
    (both forms upstream's op_flags.yaml has used), replacing the packaged sets."""
    from accelbench.config.yaml_reader import read_yaml

    data = read_yaml(path)
    if not isinstance(data, dict):
        raise UserError("must be a YAML mapping of benchmark name to flags", key=path)
    out = {}
    for name, entry in data.items():
        where = f"{path}: {name}"
        if isinstance(entry, dict):
            if extra := sorted(set(entry) - {"flags", "env"}):
                raise UserError(f"{extra[0]}: an entry holds flags and env only", key=where)
            flags, env = entry.get("flags") or [], entry.get("env") or {}
        else:
            flags, env = entry, {}
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise UserError("flags must be a list of strings", key=where)
        if not isinstance(env, dict):
            raise UserError("env must be a mapping", key=where)
        out[str(name)] = FlagSet(tuple(flags), {str(k): str(v) for k, v in env.items()})
    return out


def with_flags(cases: list[Case], sets: dict[str, FlagSet]) -> list[Case]:
    """Each case's TPU flags from the file (by its TPUMS name, else its jax-bench one); none where
    the file names neither, as upstream passes none."""
    out = []
    for case in cases:
        origin = case.origin
        names = (origin.generation_name, origin.benchmark) if origin else ()
        chosen = next((sets[n] for n in names if n in sets), None)
        out.append(replace(case, process_env=chosen.process_env() if chosen else ()))
    return out
