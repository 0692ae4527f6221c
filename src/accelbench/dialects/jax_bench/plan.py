"""The jax-bench (v2) planner: `global:`, `hardware:` and `benchmarks: - name:` entries (expanded by
benchmarks/cases.py), and `run --run NAME --field value`. Unlike upstream, a file may name several
benchmarks, bad keys and values are one-line errors, and nothing is dropped silently."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelbench.benchmarks.base import OURS_AS_PARAMS, V2, get_v2
from accelbench.benchmarks.cases import (
    Context,
    Reading,
    entry_points,
    numbered_repeats,
    point_cases,
)
from accelbench.benchmarks.flags import XPROF_DIR
from accelbench.benchmarks.hardware import parse_hardware
from accelbench.catalogue import Param
from accelbench.config.cases import within_cap
from accelbench.config.expand import Given, Point, given
from accelbench.config.schema import CaseCap
from accelbench.config.settings import PlanRequest
from accelbench.core.case import Case
from accelbench.errors import UserError, key_path


class JaxBenchConfig(BaseModel):
    """The top level; entries are checked by the planner (their keys depend on `name`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    global_: dict[str, Any] | None = Field(default=None, alias="global")
    hardware: dict[str, Any] | None = None
    benchmarks: list[dict[str, Any]] = Field(min_length=1)
    max_cases: CaseCap | None = None


def recognise(data: dict[str, Any]) -> bool:
    """`global:` or `hardware:`, or entries named by `name:` (Ironwood's: `benchmark_name:`)."""
    if "global" in data or "hardware" in data:
        return True
    entries = data.get("benchmarks")
    return isinstance(entries, list) and any(
        isinstance(e, dict) and "name" in e and "benchmark_name" not in e for e in entries
    )


def shared_values(globals_: dict[str, Any], request: PlanRequest, where: str = "global") -> Point:
    """`global:` (less its sweep) under every entry; --xprof_dir where neither says."""
    shared = given({k: v for k, v in globals_.items() if k != "sweep"}, where)
    if request.flag(XPROF_DIR):
        shared.setdefault("xprof_dir", Given(request.flag(XPROF_DIR), "--xprof_dir"))
    return shared


def plan(cfg: JaxBenchConfig, request: PlanRequest) -> list[Case]:
    for key in cfg.model_extra or {}:
        request.warnings.append(
            f"{key}: not a jax-bench key (global, hardware, benchmarks): ignored, as jax-bench does"
        )
    top = parse_hardware(cfg.hardware, "hardware", request.warnings) if cfg.hardware else None
    globals_ = cfg.global_ or {}
    shared = shared_values(globals_, request)
    cases: list[tuple[str, Case]] = []
    for i, entry in enumerate(cfg.benchmarks):
        where = key_path("benchmarks", i)
        if not isinstance(entry, dict):
            raise UserError(f"an entry must be a mapping, got {type(entry).__name__}", key=where)
        if "name" not in entry:
            raise UserError("required key is missing", key=key_path(where, "name"))
        reading = Reading.jax_bench(get_v2(entry["name"], key_path(where, "name")))
        sweep_of = (
            (entry["sweep"], key_path(where, "sweep"))
            if "sweep" in entry
            else (globals_.get("sweep"), "global.sweep")
        )
        ctx, own = Context(reading, where, top), []
        for point in entry_points(entry, where, shared, sweep_of, reading, request):
            own += point_cases(point, ctx, request)
            within_cap(len(own), request.max_cases, where)
        cases += own
        within_cap(len(cases), request.max_cases, where)  # across entries
    return numbered_repeats(cases)


def one_off(name: str, point: Point, request: PlanRequest) -> list[Case]:
    """`run --run NAME --field value`: one entry of the values given."""
    reading = Reading.jax_bench(get_v2(name, "--run"))
    point = {**shared_values({}, request), **point}
    return numbered_repeats(point_cases(point, Context(reading, "--run"), request))


def one_off_fields(name: str) -> tuple[Param, ...] | None:
    """What `run --run NAME` takes when NAME is a jax-bench name: its fields, then ours."""
    bench = V2.get(name)
    return None if bench is None or bench.tpums_only else (*bench.all_fields, *OURS_AS_PARAMS)
