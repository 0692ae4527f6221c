"""The Ironwood dialect's planner: benchmark blocks and their sweeps into cases."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from accelbench.catalogue import (
    OpParams,
    OpSpec,
    Param,
    all_specs,
    case_choice_params,
    get_spec,
    run_setting_params,
)
from accelbench.config.cases import cases_per_implementation, lacking, within_cap
from accelbench.config.expand import (
    Expansion,
    Point,
    ironwood_sweep,
    resolve_same_as,
    values_of,
)
from accelbench.config.settings import (
    RUN_KEYS,
    PlanRequest,
    check_setting,
    checked_run,
    run_settings,
)
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.dialects.ironwood import OUTPUT_PATH
from accelbench.dialects.ironwood.schema import Benchmark, IronwoodConfig
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.backends import BACKENDS


def _backends(
    value: str | list[str] | None, spec: OpSpec, where: str, given: bool = True
) -> list[str]:
    """The block's backends; `--backend`'s (not `given` here) are checked once --only/--skip chose."""
    names = (
        [value] if isinstance(value, str) else list(spec.backends[:1] if value is None else value)
    )
    if not names:
        raise UserError("backend list is empty", key=where)
    for name in names:
        if name not in BACKENDS:
            raise UserError(
                f"unknown backend '{name}'", key=where, suggestion=did_you_mean(name, BACKENDS)
            )
        if given and name not in spec.backends:
            raise UserError(lacking(spec, name), key=where)
    return names


def csv_path_for(csv_path: str | None, benchmark_name: str, default: str) -> str:
    """csv_path names a file (*.csv) or, as in the Ironwood reference configs, a directory."""
    if not csv_path:
        return default
    is_file = csv_path.lower().endswith(".csv")  # R.CSV is a file too
    return csv_path if is_file else os.path.join(csv_path, f"{benchmark_name}.csv")


RUN_ALIASES = {"n_repeats": "num_runs"}  # send_recv's name for its timed iterations
BLOCK_ALIASES = {"warmup_tries": "warmup"}  # a block's


def _run_aliases(
    d: dict[str, Any], where: str, aliases: dict[str, str] = RUN_ALIASES
) -> dict[str, Any]:
    """The reference's other names of run settings, read as ours."""
    out = dict(d)
    for alias, name in aliases.items():
        if alias in out:
            if name in out:
                raise UserError(f"give {name} or {alias}, not both", key=key_path(where, alias))
            out[name] = out.pop(alias)
    return out


# the reference's later parameters that change nothing here, accepted so its configs load unchanged:
# gemm_throttling's run_on_local_node (its pull request #130: a mesh of this host's devices instead of
# the slice's) is what every case here does, one device of this process per case (docs/ironwood.md)
INERT = {"gemm_throttling": ("run_on_local_node",)}


def _as_ours(
    spec: OpSpec, bench: Benchmark, d: dict[str, Any], where: str, block: str
) -> list[dict[str, Any]]:
    """An entry as the reference reads it: inert parameters checked and dropped, other names of run
    settings read as ours, the block's `topology` where it has none, and a parameter with `each`
    values it leaves out swept (host_device runs both directions, as the reference reported both)."""
    inert = INERT.get(spec.name, ())
    for name in set(inert) & set(d):
        if not isinstance(d[name], bool):
            raise UserError(f"{name} must be true or false", key=key_path(where, name))
    d = _run_aliases({k: v for k, v in d.items() if k not in inert}, where)
    if bench.topology is not None:
        if "topology" not in spec.param_names:
            raise UserError(f"op '{spec.name}' takes no topology", key=key_path(block, "topology"))
        d = {"topology": bench.topology, **d}
    out = [d]
    for param in spec.params:
        if param.each and param.name not in d:
            out = [{**e, param.name: value} for e in out for value in param.each]
    return out


CASE_KEYS = (*RUN_KEYS, "implementation")  # keys of a parameter entry that are not op parameters


def _resolved(spec: OpSpec, d: dict[str, Any], where: str, max_dim: int | None) -> OpParams:
    """The op's parameters of an entry; --max-dim: every problem size within its kind's cap."""
    params = spec.resolve({k: v for k, v in d.items() if k not in CASE_KEYS}, where, CASE_KEYS)
    if not max_dim:
        return params
    return spec.made({p.name: p.clamped(getattr(params, p.name), max_dim) for p in spec.params})


@dataclass(frozen=True)
class Planned:
    index: int
    bench: Benchmark
    spec: OpSpec
    where: str
    dicts: list[dict[str, Any]]  # as written, run settings and implementation included
    resolved: list[OpParams]  # the op's parameters, checked and defaulted
    backends: list[str]
    implementation: str | list[str] | None = None  # the block's, else the config's


def _plan_entries(cfg: IronwoodConfig, request: PlanRequest) -> list[Planned]:
    """Every entry validated and expanded (its sweep, its parameters resolved), within the case cap,
    before any case is made."""
    planned: list[Planned] = []
    total = 0
    for i, bench in enumerate(cfg.benchmarks):
        where = key_path("benchmarks", i)
        try:
            spec = get_spec(bench.benchmark_name)
        except UserError as error:
            raise UserError(
                error.message, key=key_path(where, "benchmark_name"), suggestion=error.suggestion
            ) from None
        chosen = request.backend or bench.backend or cfg.backend  # --backend wins
        backends = _backends(chosen, spec, key_path(where, "backend"), not request.backend)
        entries = [  # (where, entry, is a sweep); a block without any is one
            (key_path(where, key, j), entry, key == "benchmark_sweep_params")
            for key in ("benchmark_params", "benchmark_sweep_params")
            for j, entry in enumerate(getattr(bench, key) or [])
        ]
        for at, entry, is_sweep in entries or [(where, {}, False)]:
            sweep = ironwood_sweep(entry, at) if is_sweep else Expansion()
            swept = math.prod(len(p.each) for p in spec.params if p.each)  # an upper bound
            total += sweep.total * len(backends) * swept
            within_cap(total, request.max_cases, at)
            written = [
                resolve_same_as(values_of(p) if is_sweep else entry, at) for p in sweep.points()
            ]
            dicts = [e for d in written for e in _as_ours(spec, bench, d, at, where)]
            resolved = [_resolved(spec, d, at, request.max_dim) for d in dicts]
            for params in resolved:
                spec.check_constraints(params, at)
            implementation = bench.implementation or cfg.implementation
            planned.append(Planned(i, bench, spec, at, dicts, resolved, backends, implementation))
    return planned


def _outputs(bench: Benchmark, request: PlanRequest) -> Outputs:
    path = request.flag(OUTPUT_PATH)  # the reference's: traces and HLO dumps under it
    under = os.path.join(path, bench.benchmark_name) if path else None
    return Outputs(
        csv_path=csv_path_for(bench.csv_path, bench.benchmark_name, request.default_csv),
        trace_dir=os.path.join(under, "trace") if under else bench.trace_dir,
        xla_dump_dir=os.path.join(under, "hlo_graphs") if under else bench.xla_dump_dir,
        xlml_metrics_dir=bench.xlml_metrics_dir,
    )


def _cases(entry: Planned, base: RunSettings, request: PlanRequest) -> list[Case]:
    block = key_path("benchmarks", entry.index)
    bench, spec = entry.bench, entry.spec
    bench_run = run_settings(
        base, _run_aliases(bench.model_dump(exclude_none=True), block, BLOCK_ALIASES), block
    )
    outputs = _outputs(bench, request)
    cases = []
    for d, params in zip(entry.dicts, entry.resolved, strict=True):
        run = run_settings(bench_run, d, entry.where)
        if spec.traits.run_overrides:  # an op whose parameters set how it is timed
            run = spec.traits.run_overrides(params).apply(run)
        run = checked_run(run, entry.where)
        requested = d.get("implementation", entry.implementation)
        impl_where = entry.where if "implementation" in d else block
        cases += cases_per_implementation(
            spec,
            entry.backends,
            requested,
            impl_where,
            params=params,
            run=run,
            outputs=outputs,
            benchmark=bench.benchmark_name,
            config_id=request.config_id,
        )
    return cases


def plan(cfg: IronwoodConfig, request: PlanRequest) -> list[Case]:
    base = run_settings(RunSettings(), cfg.model_dump(exclude_none=True), "")
    return [case for entry in _plan_entries(cfg, request) for case in _cases(entry, base, request)]


def one_off(name: str, point: Point, request: PlanRequest) -> list[Case]:
    """`run --run OP --field value`: a block of one parameter entry (the backend the block's), each
    value checked where it was given (its option)."""
    spec = get_spec(name)
    for key, g in point.items():
        if key in spec.param_names:
            spec.typed.declared_param(key).validate(g.value, g.where)
        elif key in RUN_KEYS:
            check_setting(key, g.value, "", at=g.where)
    values = values_of(point)
    block = Benchmark(benchmark_name=name, backend=values.pop("backend", None))
    try:
        block = block.model_copy(update={"benchmark_params": [values]})
        return plan(IronwoodConfig(benchmarks=[block]), request)
    except UserError as error:  # about the entry: the option that gave it, else --run
        inner = (error.key or "").removeprefix("benchmarks[0]").lstrip(".")
        inner = inner.removeprefix("benchmark_params[0]").lstrip(".")
        raise UserError(
            error.message, key=f"--{inner}" if inner else "--run", suggestion=error.suggestion
        ) from None


def one_off_fields(name: str) -> tuple[Param, ...] | None:
    """What `run --run OP` takes: the op's parameters, backend and implementation, run settings."""
    spec = all_specs().get(name)
    return None if spec is None else (*spec.params, *case_choice_params(), *run_setting_params())
