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

from microbench.config.settings import PlanRequest
from microbench.core.case import DEVICE_MODES, Case
from microbench.dialects.jax_bench import plan as jax_bench
from microbench.dialects.jax_bench.benchmarks import OURS
from microbench.dialects.jax_bench.flags import XPROF_DIR
from microbench.dialects.jax_bench.inputs import (
    MAX_COMBINATIONS,
    MODEL_PRESETS,
    read_csv_shapes,
    read_sweep,
)
from microbench.dialects.jax_bench.tpu_flags import FlagSet
from microbench.dialects.tpums.names import BASE_NAMES, SAMPLES_PER_RUN, Tpums, get_tpums
from microbench.errors import UserError, did_you_mean, key_path

RESERVED = ("name", "model_preset", "params", "cases", "cases_from_csv", "sweep")
STAGE_B = (*RESERVED, "xprof_timing", "xprof_device_mode")
TOP = "benchmark"


class TpumsConfig(BaseModel):
    """The top level: `benchmark:` (checked by the planner, its keys depend on its name); stage-A
    files may add global keys beside it."""

    model_config = ConfigDict(extra="allow")

    benchmark: dict[str, Any]


def recognise(data: dict[str, Any]) -> bool:
    return TOP in data and "benchmarks" not in data


def is_stage_b(bench: dict[str, Any]) -> bool:
    """The newest form: nothing in `benchmark:` but its structure keys."""
    return set(bench) <= set(STAGE_B)


@dataclass(frozen=True)
class Given:
    """A value and the TPUMS key that gave it."""

    value: Any
    where: str


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UserError(f"must be a mapping, got {type(value).__name__}", key=where)
    return {str(k): v for k, v in value.items()}


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
    if "cases" in bench and "cases_from_csv" in bench:
        raise UserError("cases and cases_from_csv exclude each other; give one", key=TOP)
    params_where = key_path(TOP, "params")
    params = _mapping(bench.get("params"), params_where)
    if reserved := sorted(set(params) & set(RESERVED)):
        raise UserError(f"{', '.join(reserved)} cannot be a parameter", key=params_where)
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
    where = key_path(TOP, "cases")
    cases = bench["cases"]
    if not isinstance(cases, list) or not cases:
        raise UserError("must be a non-empty list of mappings", key=where)
    out: list[Layer] = []
    for i, case in enumerate(cases):
        at = key_path(where, i)
        out.append(
            (at, {**base, **{k: Given(v, key_path(at, k)) for k, v in _mapping(case, at).items()}})
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
            f"unknown model preset {name!r} (presets: {', '.join(MODEL_PRESETS)})",
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
        raise UserError("must be a non-empty mapping of key to values", key=where)
    sweep = read_sweep(bench["sweep"], where)
    request.warnings.extend(sweep.warnings)
    names = [name for name, _ in sweep.axes]
    for block, keys in (
        ("the structure keys", set(RESERVED)),
        ("benchmark.params", set(_mapping(bench.get("params"), "params"))),
        (
            "the cases",
            {k for _, case in cases for k, g in case.items() if ".params." not in g.where},
        ),
    ):
        if clash := [n for n in names if n in keys]:
            raise UserError(
                f"{', '.join(clash)}: a sweep key may not also be in {block}",
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


def _flag(
    bench: dict[str, Any], key: str, choices: tuple[Any, ...], where: str | None = None
) -> Any:
    value = bench.get(key)
    if value is not None and value not in choices:
        raise UserError(
            f"must be one of {', '.join(map(str, choices))}, got {value!r}",
            key=where or key_path(TOP, key),
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
    xprof = _flag(bench, "xprof_timing", (True, False))
    device_mode = _flag(bench, "xprof_device_mode", DEVICE_MODES)
    preset = _preset(bench, entry)
    out: list[tuple[dict[str, Any], str]] = []
    for where, case in _swept(bench, _cases(bench, request), request):
        if "xprof_timing" in case:  # a case's own: the first case's applies to the file, as TPUMS
            flag = case.pop("xprof_timing")
            xprof = flag.value if xprof is None and not out else xprof
            _flag({"xprof_timing": flag.value}, "xprof_timing", (True, False), flag.where)
        given = _canonical(entry, {**preset, **case})
        checked = _checked(entry, given)
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


def _soaks(xprof: Any, fields: dict[str, Any], where: str) -> None:
    """TPUMS's soak needs its traced windows and a duration (its executor refuses otherwise)."""
    if xprof is not True:
        raise UserError("a soak's windows are traced: set xprof_timing: true", key=TOP)
    if not fields.get("min_duration_s"):
        raise UserError("a soak lasts min_duration_s: give it (above 0)", key=where)
    fields.setdefault("soak_chunk", SAMPLES_PER_RUN.default)


def _entry_a(data: dict[str, Any], entry: Tpums) -> dict[str, Any]:
    """A stage-A file as a jax-bench file: the benchmark an entry, the other top-level keys global."""
    bench = dict(data[TOP])
    for alias, name in entry.aliases.items():
        if alias in bench:
            bench[name] = bench.pop(alias)
    return {**entry.to_v2({**entry.moved, **bench}), "name": entry.v2}


def plan(cfg: TpumsConfig, request: PlanRequest) -> list[Case]:
    """The file's cases, each carrying its TPUMS name so its summary.csv takes TPUMS's columns."""
    name = cfg.benchmark.get("name")
    return [
        replace(c, origin=replace(c.origin, generation="tpums", generation_name=name))
        if c.origin is not None
        else c
        for c in _plan(cfg, request)
    ]


def _plan(cfg: TpumsConfig, request: PlanRequest) -> list[Case]:
    data = {TOP: cfg.benchmark, **(cfg.model_extra or {})}
    bench = cfg.benchmark
    if "name" not in bench or not bench["name"]:
        raise UserError("required key is missing", key=key_path(TOP, "name"))
    entry = get_tpums(bench["name"], key_path(TOP, "name"))
    said: list[str] = []
    dtype_keys = {p.name for p in entry.fields if p.kind.endswith("dtype")}
    bench = _meant(bench, dtype_keys, TOP, said)
    data[TOP] = bench
    request.warnings.extend(dict.fromkeys(said))
    if not is_stage_b(bench):
        _dcn_note(bench, TOP, request)
        top = {k: v for k, v in data.items() if k != TOP}
        hardware = top.pop("hardware", None)
        converted = {"global": top, "benchmarks": [_entry_a(data, entry)]}
        if hardware is not None:
            converted["hardware"] = hardware
        return _planned(converted, request, TOP)
    if extra := [k for k in data if k != TOP]:
        raise UserError(
            "not a TPUMS key: one `benchmark:` mapping per file (baseline parameters belong under "
            "benchmark.params)",
            key=extra[0],
        )
    cases: list[Case] = []
    for converted, where in _entries_b(bench, entry, request):
        cases += _planned({"benchmarks": [converted]}, request, where)
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
        if where == TOP and inner.startswith("global."):  # a stage-A top-level key
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
    from microbench.config.yaml_reader import read_yaml

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
