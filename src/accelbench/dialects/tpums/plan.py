"""The TPUMS dialect: one `benchmark:` mapping per file, planned straight into the typed fields of the
benchmark its name is declared on (benchmarks/tpums.py), in either form (stage B: `params`, `cases`,
`cases_from_csv`, `sweep`; the earlier stage A: fields flat in `benchmark:`; docs/tpums.md). Every
error names the TPUMS key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from accelbench.benchmarks.base import SAMPLES_PER_RUN, Tpums, get_tpums
from accelbench.benchmarks.cases import Context, Reading, entry_points, point_cases
from accelbench.benchmarks.flags import XPROF_DIR
from accelbench.benchmarks.hardware import parse_hardware
from accelbench.benchmarks.models import MODEL_PRESETS
from accelbench.config.cases import within_cap
from accelbench.config.expand import Expansion, Given, Point, csv_cases, given, upstream_sweep
from accelbench.config.settings import PlanRequest
from accelbench.core.case import DEVICE_MODES, Case
from accelbench.dialects.jax_bench.plan import shared_values
from accelbench.dialects.tpums.layouts import TOP, LayoutNote, stage_b
from accelbench.errors import UserError, did_you_mean, key_path

MISSING = "must define a 'benchmark:' mapping (name, params, cases or cases_from_csv, sweep)"


class TpumsConfig(BaseModel):
    """`benchmark:`, checked by the planner (its keys depend on its name); stage A adds globals."""

    model_config = ConfigDict(extra="allow")

    benchmark: Any


def _expected(what: str, name: object, shape: str, where: str) -> UserError:
    return UserError(f"Expected {what} in benchmark '{name}' to be {shape}", key=where)


def _mapping(value: Any, where: str, name: object = None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        got = f"a dict, got {type(value).__name__}"
        raise _expected(f"'{where.rpartition('.')[2]}'", name, got, where)
    return {str(k): v for k, v in value.items()}


def _cases(bench: dict[str, Any], request: PlanRequest, layout: LayoutNote) -> tuple[Point, ...]:
    """The cases before the sweep: each the params overlaid by a case or CSV row."""
    name = bench.get("name")
    if "cases" in bench and "cases_from_csv" in bench:
        raise UserError("cannot specify both 'cases' and 'cases_from_csv'", key=TOP)
    at = key_path(TOP, "params")
    params = _mapping(bench.get("params"), at, name)
    layout.reserved_in(params, at)
    base = given(params, at)
    if "cases_from_csv" in bench:
        rows = csv_cases(
            bench["cases_from_csv"], request.config_dir, key_path(TOP, "cases_from_csv")
        )
        return tuple({**base, **row} for row in rows)
    if "cases" not in bench:
        return (base,)
    return tuple({**base, **case} for case in listed_cases(bench, layout))


def listed_cases(bench: dict[str, Any], layout: LayoutNote) -> Iterator[Point]:
    """`cases:`, a list of mappings (each laid over the params, or a stage-A file's flat fields)."""
    where, cases, name = key_path(TOP, "cases"), bench["cases"], bench.get("name")
    if not isinstance(cases, list) or not cases:
        got = f"a list (non-empty) of mappings, got {type(cases).__name__}"
        raise _expected("'cases'", name, got, where)
    for i, case in enumerate(cases):
        at = key_path(where, i)
        if not isinstance(case, dict):
            got = f"a dict, got {type(case).__name__}"
            raise _expected("each item of 'cases'", name, got, at)
        layout.reserved_in(case, at)
        yield given(case, at)


def _preset(bench: dict[str, Any], entry: Tpums) -> Point:
    """The model preset's values for this benchmark's fields (an unknown one: TPUMS's error)."""
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


def _sweep(
    bench: dict[str, Any], cases: tuple[Point, ...], request: PlanRequest, layout: LayoutNote
) -> Expansion:
    """The cases over the sweep's product (first key slowest); its keys given nowhere else."""
    if "sweep" not in bench:
        return Expansion(cases=cases)
    where = key_path(TOP, "sweep")
    if not isinstance(bench["sweep"], dict) or not bench["sweep"]:
        raise _expected("'sweep'", bench.get("name"), "a non-empty dict", where)
    layout.reserved_in(bench["sweep"], where)
    past_cap = " per case; the first {} are run, as TPUMS does"
    sweep = upstream_sweep(bench["sweep"], where, past_cap, request.warnings)
    names = [a.name for a in sweep.axes]
    case_block = "cases_from_csv" if "cases_from_csv" in bench else "cases"
    for block, keys in (
        ("params", set(_mapping(bench.get("params"), "params"))),
        (case_block, {k for case in cases for k, g in case.items() if ".params." not in g.where}),
    ):
        if clash := [n for n in names if n in keys]:
            raise UserError(
                f"sweep key(s) {', '.join(clash)} collide with keys in '{block}' (a key is given "
                "in one place)",
                key=key_path(where, clash[0]),
            )
    return replace(sweep, cases=cases)


@dataclass(frozen=True)
class FileLevel:
    """What a stage-B file (or `benchmark run`) sets for every case, and how a case's values end."""

    entry: Tpums
    xprof: bool | None
    device_mode: str | None
    request: PlanRequest

    def adjusted(self, values: dict[str, Any]) -> dict[str, Any]:
        if self.xprof is not None:
            values["xprof_timing"] = self.xprof
        if self.request.flag(XPROF_DIR):
            values["xprof_dir"] = self.request.flag(XPROF_DIR)
        _dcn_note(values, self.request)
        if values.get("num_runs") != 0:
            return values
        if not values.get("min_duration_s"):
            self.request.warnings.append(  # said once: the planner drops repeats
                f"{TOP}: num_runs 0 and no min_duration_s: TPUMS times nothing; one call is "
                "timed here"
            )
        return {**values, "num_runs": 1}

    def run_keys(self, point: Point, values_where: str) -> Point:
        """The soak's samples_per_run as the run's soak_chunk, and the file's device mode."""
        out = dict(point)
        chunk = out.pop(SAMPLES_PER_RUN.name, None)
        if self.entry.soak:
            param = next(p for p in self.entry.fields if p.name == SAMPLES_PER_RUN.name)
            value = param.validate(chunk.value, chunk.where) if chunk else param.default_value
            out["soak_chunk"] = Given(value, chunk.where if chunk else values_where)
        elif chunk is not None:  # not a soak: the key is none of its fields
            Reading.of_tpums(self.entry).check_keys([(SAMPLES_PER_RUN.name, chunk.where)])
        if self.device_mode is not None:
            out["xprof_device_mode"] = Given(self.device_mode, key_path(TOP, "xprof_device_mode"))
        return out


def _dcn_note(values: dict[str, Any], request: PlanRequest) -> None:
    """A DCN file's batching is recorded, not applied: each timed step here is one collective."""
    if values.get("batch_size") not in (None, 1) or values.get("sync_between_runs"):
        request.warnings.append(
            f"{TOP}: batch_size and sync_between_runs are recorded; each timed step here is one "
            "collective (upstream's batching is not applied)"
        )


def planned(level: FileLevel, points: list[Point], where: str) -> list[Case]:
    """Each point's cases (`where`: a point's key when it came from no case or CSV row)."""
    entry, request = level.entry, level.request
    reading = Reading.of_tpums(entry)
    cases: list[Case] = []
    for point in points:
        at = _case_where(point, where)
        if entry.soak:
            _soaks(level.xprof, point, at)
        ctx = Context(reading, at)
        cases += [
            c for _, c in point_cases(level.run_keys(point, at), ctx, request, level.adjusted)
        ]
        within_cap(len(cases), request.max_cases, TOP, "")
    return cases


def command_line(
    name: str, expansion: Expansion, xprof: bool, device_mode: str | None, request: PlanRequest
) -> list[Case]:
    """`tpums benchmark run NAME --field v1 [v2 ...]`: its values (a case) over its sweep."""
    entry = get_tpums(name, "benchmark run")
    if entry.is_experimental:
        request.warnings.append(f"[WARNING] Running experimental benchmark '{entry.name}'")
    level = FileLevel(entry, xprof or None, device_mode, request)
    return planned(level, list(expansion.points()), "benchmark run")


def _xprof(value: Any, entry: Tpums, layout: LayoutNote) -> bool | None:
    """The file's xprof_timing: benchmark's, else (an earlier layout) the first case's."""
    where = key_path(TOP, "xprof_timing")
    if value is None and layout.xprof is not None:
        value, where = layout.xprof.value, layout.xprof.where
    if value is not None and not isinstance(value, bool):
        raise _expected(
            "'xprof_timing'", entry.name, f"a bool (true or false), got {value!r}", where
        )
    return value


def _case_where(point: Point, where: str) -> str:
    """Where a case was given: its item of `cases`, its CSV row, else `where`."""
    for g in point.values():
        if " row " in g.where:
            return g.where.rpartition(" column ")[0]
        if ".cases[" in g.where:
            return g.where.rpartition(".")[0]
    return where


def _soaks(xprof: Any, point: Point, where: str) -> None:
    """TPUMS's soak needs its traced windows and a duration (its executor refuses otherwise)."""
    if xprof is not True:
        raise UserError("a soak's windows are traced: set xprof_timing: true", key=TOP)
    duration = point.get("min_duration_s")
    if duration is None or not duration.value:
        raise UserError("a soak lasts min_duration_s: give it (above 0)", key=where)


def _stage_a_cases(
    data: dict[str, Any], entry: Tpums, request: PlanRequest, layout: LayoutNote
) -> list[Case]:
    """A stage-A file: its flat fields an entry as jax-bench read it, each `cases:` item over them,
    the other top-level keys globals, `hardware:` the file's peaks."""
    bench = data[TOP]
    reading = Reading.of_tpums(entry, flat=True)
    top = {k: v for k, v in data.items() if k not in (TOP, "hardware")}
    block = data.get("hardware")
    hardware = parse_hardware(block, "hardware", request.warnings) if block is not None else None
    shared = shared_values(top, request, "")
    flat = {k: v for k, v in bench.items() if k != "cases"}
    overlays = list(listed_cases(bench, layout)) if "cases" in bench else [{}]
    sweep_of = (bench.get("sweep"), key_path(TOP, "sweep"))
    cases: list[Case] = []
    for overlay in overlays:
        ctx = Context(reading, _case_where(overlay, TOP), hardware)
        for point in entry_points(flat, TOP, shared, sweep_of, reading, request):
            cases += [c for _, c in point_cases({**point, **overlay}, ctx, request)]
            within_cap(len(cases), request.max_cases, TOP, "")
    return cases


def plan(cfg: TpumsConfig, request: PlanRequest) -> list[Case]:
    """The file's cases, each carrying its TPUMS name so its files take TPUMS's columns."""
    data = {TOP: cfg.benchmark, **(cfg.model_extra or {})}
    bench = cfg.benchmark
    if not isinstance(bench, dict):
        raise UserError(MISSING, key=TOP)
    if "name" not in bench or not bench["name"]:
        raise UserError("required key is missing", key=key_path(TOP, "name"))
    entry = get_tpums(bench["name"], key_path(TOP, "name"))
    layout = LayoutNote(request)
    data[TOP] = bench = meant_dtypes(bench, entry, request)
    if entry.is_experimental:
        request.warnings.append(f"[WARNING] Running experimental benchmark '{entry.name}'")
    if stage_b(data, layout):
        if extra := [k for k in data if k != TOP]:
            raise UserError(
                "not a TPUMS key: one `benchmark:` mapping per file (baseline parameters belong "
                "under benchmark.params)",
                key=extra[0],
            )
        expansion = _sweep(bench, _cases(bench, request, layout), request, layout)
        points = [layout.file_xprof(p) for p in expansion.points()]
        xprof = _xprof(bench.get("xprof_timing"), entry, layout)
        if (device_mode := bench.get("xprof_device_mode")) not in (None, *DEVICE_MODES):
            raise UserError(
                f"must be one of {', '.join(DEVICE_MODES)}, got {device_mode!r}",
                key=key_path(TOP, "xprof_device_mode"),
            )
        level = FileLevel(entry, xprof, device_mode, request)
        preset = _preset(bench, entry)
        return planned(level, [{**preset, **p} for p in points], key_path(TOP, "params"))
    _dcn_note(bench, request)
    return _stage_a_cases(data, entry, request, layout)


# what TPUMS files write for a dtype jax.numpy spells otherwise (upstream fails on the case)
MEANT_DTYPES = {"float4": "float4_e2m1fn"}


def meant_dtypes(bench: dict[str, Any], entry: Tpums, request: PlanRequest) -> dict[str, Any]:
    """The file with each dtype value its authors meant (`float4` is jax.numpy's float4_e2m1fn)."""
    keys = {p.name for p in entry.fields if p.kind.endswith("dtype")}
    said: list[str] = []

    def meant(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            return {k: meant(v, key_path(path, str(k))) for k, v in value.items()}
        if isinstance(value, list):
            return [meant(v, path) for v in value]
        if path.rpartition(".")[2] in keys and isinstance(value, str) and value in MEANT_DTYPES:
            said.append(f"{path}: {value} read as {MEANT_DTYPES[value]}, the jax.numpy name")
            return MEANT_DTYPES[value]
        return value

    out = meant(bench, TOP)
    request.warnings.extend(dict.fromkeys(said))
    return out
