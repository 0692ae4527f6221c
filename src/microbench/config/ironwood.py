"""The Ironwood dialect's planner: benchmark blocks and their sweeps into cases."""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any

from microbench.catalogue import OpSpec, get_spec, implementations
from microbench.config.schema import Benchmark, IronwoodConfig
from microbench.config.settings import RUN_KEYS, PlanRequest, run_settings
from microbench.config.sweep import count_sweep, expand_sweep, resolve_same_as
from microbench.core.case import Case, Outputs, RunSettings
from microbench.errors import UserError, did_you_mean, key_path
from microbench.platform.backends import BACKENDS


def _backends(value: str | list[str] | None, spec: OpSpec, where: str) -> list[str]:
    names = (
        [value]
        if isinstance(value, str)
        else list(value if value is not None else [spec.backends[0]])
    )
    if not names:
        raise UserError("backend list is empty", key=where)
    for name in names:
        if name not in BACKENDS:
            raise UserError(
                f"unknown backend '{name}'", key=where, suggestion=did_you_mean(name, BACKENDS)
            )
        if name not in spec.backends:
            raise UserError(
                f"op '{spec.name}' has no {name} implementation (implemented in: {', '.join(spec.backends)})",
                key=where,
            )
    return names


def csv_path_for(csv_path: str | None, benchmark_name: str, default: str) -> str:
    """csv_path may name a file (*.csv) or, as in the Ironwood reference configs, a directory."""
    if not csv_path:
        return default
    return (
        csv_path if csv_path.endswith(".csv") else os.path.join(csv_path, f"{benchmark_name}.csv")
    )


def _block_settings(bench: Benchmark, where: str) -> dict[str, Any]:
    """The block's run settings, `warmup_tries` read as the reference's name for `warmup`."""
    given = bench.model_dump(exclude_none=True)
    if "warmup_tries" in given:
        if "warmup" in given:
            raise UserError(
                "give warmup or warmup_tries, not both", key=key_path(where, "warmup_tries")
            )
        given["warmup"] = given.pop("warmup_tries")
    return given


def _inject(bench: Benchmark, spec: OpSpec, d: dict[str, Any], where: str) -> dict[str, Any]:
    """Block-level `topology` goes into every parameter set that lacks it, as in the reference."""
    if bench.topology is None:
        return d
    if "topology" not in spec.param_names:
        raise UserError(f"op '{spec.name}' takes no topology", key=key_path(where, "topology"))
    return {"topology": bench.topology, **d}


RUN_ALIASES = {"n_repeats": "num_runs"}  # send_recv's name for its timed iterations


def _run_aliases(d: dict[str, Any], where: str) -> dict[str, Any]:
    """The reference's other names of run settings, read as ours."""
    out = dict(d)
    for alias, name in RUN_ALIASES.items():
        if alias in out:
            if name in out:
                raise UserError(f"give {name} or {alias}, not both", key=key_path(where, alias))
            out[name] = out.pop(alias)
    return out


def _each(spec: OpSpec, d: dict[str, Any]) -> list[dict[str, Any]]:
    """A parameter with `each` values that the entry leaves out is swept over them (host_device runs
    both directions, as the reference's one benchmark reported both)."""
    out = [d]
    for param in spec.params:
        if param.each and param.name not in d:
            out = [{**e, param.name: value} for e in out for value in param.each]
    return out


def _clamp(spec: OpSpec, params: dict[str, Any], max_dim: int | None) -> dict[str, Any]:
    """--max-dim: every dimension parameter at most max_dim, a flat element count at most max_dim^2
    (a stock config on a laptop)."""
    if not max_dim:
        return params
    limits = {"dim": max_dim, "elements": max_dim * max_dim}
    kinds = {p.name: p.kind for p in spec.params}
    return {
        k: min(v, limits[kinds[k]]) if kinds.get(k) in limits and v is not None else v
        for k, v in params.items()
    }


def ironwood_cases(cfg: IronwoodConfig, request: PlanRequest) -> list[Case]:
    base = run_settings(RunSettings(), cfg.model_dump(exclude_none=True), "")
    planned: list[tuple[int, Benchmark, str, list[dict[str, Any]], list[dict[str, Any]]]] = []
    total = 0
    for i, bench in enumerate(cfg.benchmarks):  # everything is validated before any case exists
        where = key_path("benchmarks", i)
        try:
            spec = get_spec(bench.benchmark_name)
        except UserError as error:
            raise UserError(
                error.message, key=key_path(where, "benchmark_name"), suggestion=error.suggestion
            ) from None
        entries: list[tuple[str, dict[str, Any], bool]] = []
        for j, entry in enumerate(bench.benchmark_params or []):
            entries.append((key_path(where, "benchmark_params", j), entry, False))
        for j, entry in enumerate(bench.benchmark_sweep_params or []):
            entries.append((key_path(where, "benchmark_sweep_params", j), entry, True))
        if not entries:
            entries.append((where, {}, False))
        backends = _backends(bench.backend or cfg.backend, spec, key_path(where, "backend"))
        for entry_where, entry, is_sweep in entries:
            swept = math.prod(len(p.each) for p in spec.params if p.each)  # an upper bound
            total += (count_sweep(entry, entry_where) if is_sweep else 1) * len(backends) * swept
            if total > request.max_cases:
                raise UserError(
                    f"the config expands to more than {request.max_cases} cases; raise the cap with "
                    f"--max-cases or 'max_cases:' if this is intended",
                    key=entry_where,
                )
            dicts = (
                expand_sweep(entry, entry_where)
                if is_sweep
                else [resolve_same_as(entry, entry_where)]
            )
            case_keys = (*RUN_KEYS, "implementation")
            dicts = [
                e
                for d in dicts
                for e in _each(spec, _inject(bench, spec, _run_aliases(d, entry_where), where))
            ]
            resolved = [
                _clamp(
                    spec,
                    spec.resolve(
                        {k: v for k, v in d.items() if k not in case_keys}, entry_where, case_keys
                    ),
                    request.max_dim,
                )
                for d in dicts
            ]
            for params in resolved:
                spec.check_constraints(params, entry_where)
            planned.append((i, bench, entry_where, dicts, resolved))
    cases: list[Case] = []
    for i, bench, entry_where, dicts, resolved in planned:
        spec = get_spec(bench.benchmark_name)
        bench_run = run_settings(
            base, _block_settings(bench, key_path("benchmarks", i)), key_path("benchmarks", i)
        )
        under = (  # the reference's --output_path moves traces and HLO dumps under it
            os.path.join(request.output_path, bench.benchmark_name) if request.output_path else None
        )
        outputs = Outputs(
            csv_path=csv_path_for(bench.csv_path, bench.benchmark_name, request.default_csv),
            trace_dir=os.path.join(under, "trace") if under else bench.trace_dir,
            xla_dump_dir=os.path.join(under, "hlo_graphs") if under else bench.xla_dump_dir,
            xlml_metrics_dir=bench.xlml_metrics_dir,
        )
        backends = _backends(
            bench.backend or cfg.backend, spec, key_path("benchmarks", i, "backend")
        )
        for d, params in zip(dicts, resolved, strict=True):
            run = run_settings(bench_run, d, entry_where)
            if spec.traits.run_overrides:  # an op whose parameters set how it is timed
                run = spec.traits.run_overrides(params).apply(run)
            pair = hashlib.sha1(
                json.dumps([spec.name, params], sort_keys=True).encode()
            ).hexdigest()[:12]
            requested = d.get("implementation", bench.implementation)
            impl_where = entry_where if "implementation" in d else key_path("benchmarks", i)
            for backend in backends:
                for impl in implementations_to_run(spec, backend, requested, impl_where):
                    cases.append(
                        Case(
                            op=spec.name,
                            backend=backend,
                            params=params,
                            run=run,
                            outputs=outputs,
                            benchmark=bench.benchmark_name,
                            config_id=request.config_id,
                            pair_key=pair,
                            implementation=impl,
                        )
                    )
    return cases


def implementations_to_run(
    spec: OpSpec, backend: str, requested: str | list[str] | None, where: str
) -> list[str | None]:
    """The requested implementations of the op on the backend, or else its default ones (all of them
    unless the op names its defaults)."""
    registered = list(implementations(spec.name, backend))
    if requested is None:
        defaults = [n for n in spec.traits.default_implementations if n in registered]
        return list(defaults or registered)
    names = [requested] if isinstance(requested, str) else list(requested)
    chosen = [n for n in names if n in registered]
    if chosen:
        return list(chosen)
    if (
        len(registered) == 1
    ):  # one way to run it (JAX's jit): the names were another backend's twins
        return list(registered)
    raise UserError(
        f"op '{spec.name}' has no {backend} implementation '{names[0]}' (registered: {', '.join(registered)})",
        key=key_path(where, "implementation"),
        suggestion=did_you_mean(names[0], registered),
    )


def plan(cfg: IronwoodConfig, request: PlanRequest) -> list[Case]:
    return ironwood_cases(cfg, request)
