"""Resolving a validated config into concrete cases with stable ids."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from microbench.config.loader import LoadedConfig
from microbench.config.schema import Benchmark, IronwoodConfig
from microbench.config.sweep import count_sweep, expand_sweep, resolve_same_as
from microbench.dtypes import dtype as lookup_dtype
from microbench.errors import UserError, did_you_mean, key_path
from microbench.registry import MAX_DIM, OpSpec, Param, get_spec

DEFAULT_MAX_CASES = 5000
RUN_KEYS = ("num_runs", "warmup", "timeout_s", "check")
KNOWN_BACKENDS = ("jax", "torch", "numpy")


@dataclass(frozen=True)
class RunSettings:
    num_runs: int = 20
    warmup: int = 3
    timeout_s: float | None = None
    check: str = "strict"  # strict: a wrong result is not timed; flag: timed but flagged; off


@dataclass(frozen=True)
class Outputs:
    csv_path: str
    trace_dir: str | None = None
    xla_dump_dir: str | None = None

    @property
    def jsonl_path(self) -> str:
        return str(Path(self.csv_path).with_suffix(".jsonl"))


@dataclass(frozen=True)
class Case:
    op: str
    backend: str
    params: dict[str, Any]
    run: RunSettings
    outputs: Outputs
    benchmark: str
    config_id: str = ""
    pair_key: str = field(default="", compare=False)

    @property
    def id(self) -> str:
        """Stable across runs: the op, backend, parameters and run settings, nothing else."""
        ident = {"op": self.op, "backend": self.backend, "params": self.params,
                 "num_runs": self.run.num_runs, "warmup": self.run.warmup}
        return hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        dims = "x".join(str(self.params[d]) for d in ("m", "k", "n") if d in self.params)
        return f"{self.op}-{self.backend}-{dims}-{self.id[:6]}" if dims else f"{self.op}-{self.backend}-{self.id[:6]}"


def _validate_value(param: Param, value: Any, where: str) -> Any:
    if param.kind == "dim":
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(f"must be a positive integer, got {value!r}", key=where)
        if value <= 0:
            raise UserError(f"must be positive, got {value}", key=where)
        if value > MAX_DIM:
            raise UserError(f"{value} is absurdly large for one dimension (limit {MAX_DIM})", key=where)
        return value
    if param.kind == "dtype":
        try:
            canonical = lookup_dtype(value).name
        except UserError as error:
            raise UserError(error.message, key=where, suggestion=error.suggestion) from None
        allowed = {lookup_dtype(c).name for c in param.choices} if param.choices else None
        if allowed and canonical not in allowed:
            raise UserError(f"dtype '{value}' is not supported by this op (choose from {', '.join(param.choices)})",
                            key=where)
        return canonical
    if param.kind == "choice":
        if value not in param.choices:
            raise UserError(f"'{value}' is not one of {', '.join(map(str, param.choices))}", key=where,
                            suggestion=did_you_mean(str(value), map(str, param.choices)))
        return value
    if param.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise UserError(f"must be an integer, got {value!r}", key=where)
    if param.kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise UserError(f"must be a number, got {value!r}", key=where)
    if param.kind == "bool" and not isinstance(value, bool):
        raise UserError(f"must be true or false, got {value!r}", key=where)
    if param.kind == "str" and not isinstance(value, str):
        raise UserError(f"must be a string, got {value!r}", key=where)
    return float(value) if param.kind == "float" else value


def resolve_params(spec: OpSpec, given: dict[str, Any], where: str) -> dict[str, Any]:
    """Check names and values against the op's parameters and fill in defaults."""
    resolved: dict[str, Any] = {}
    for name in given:
        if name not in spec.param_names:
            raise UserError(f"unknown parameter '{name}' for op '{spec.name}'", key=key_path(where, name),
                            suggestion=did_you_mean(name, (*spec.param_names, *RUN_KEYS)))
    for param in spec.params:
        if param.name in given:
            resolved[param.name] = _validate_value(param, given[param.name], key_path(where, param.name))
        elif param.required:
            raise UserError(f"op '{spec.name}' needs parameter '{param.name}'", key=where)
        else:
            resolved[param.name] = param.default if param.kind != "dtype" else lookup_dtype(param.default).name
    return resolved


def _run_settings(base: RunSettings, given: dict[str, Any], where: str) -> RunSettings:
    updates: dict[str, Any] = {}
    for key in RUN_KEYS:
        if key not in given:
            continue
        value = given[key]
        if key in ("num_runs", "warmup"):
            low = 1 if key == "num_runs" else 0
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UserError(f"must be an integer >= {low}, got {value!r}", key=key_path(where, key))
        elif key == "timeout_s" and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise UserError(f"must be a positive number, got {value!r}", key=key_path(where, key))
        elif key == "check" and value not in ("strict", "flag", "off"):
            raise UserError(f"must be strict, flag or off, got {value!r}", key=key_path(where, key),
                            suggestion=did_you_mean(str(value), ("strict", "flag", "off")))
        updates[key] = value
    return replace(base, **updates)


def _backends(value: str | list[str] | None, spec: OpSpec, where: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value or [spec.backends[0]])
    if not names:
        raise UserError("backend list is empty", key=where)
    for name in names:
        if name not in KNOWN_BACKENDS:
            raise UserError(f"unknown backend '{name}'", key=where, suggestion=did_you_mean(name, KNOWN_BACKENDS))
        if name not in spec.backends:
            raise UserError(f"op '{spec.name}' has no {name} implementation (implemented in: {', '.join(spec.backends)})",
                            key=where)
    return names


def csv_path_for(csv_path: str | None, benchmark_name: str, default: str) -> str:
    """csv_path may name a file (*.csv) or, as in the Ironwood reference configs, a directory."""
    if not csv_path:
        return default
    return csv_path if csv_path.endswith(".csv") else os.path.join(csv_path, f"{benchmark_name}.csv")


def _ironwood_cases(cfg: IronwoodConfig, loaded: LoadedConfig, default_csv: str, max_cases: int) -> list[Case]:
    base = RunSettings(num_runs=cfg.num_runs or 20, warmup=3 if cfg.warmup is None else cfg.warmup,
                       timeout_s=cfg.timeout_s)
    planned: list[tuple[int, Benchmark, str, list[dict[str, Any]], list[dict[str, Any]]]] = []
    total = 0
    for i, bench in enumerate(cfg.benchmarks):  # everything is validated before any case exists
        where = key_path("benchmarks", i)
        try:
            spec = get_spec(bench.benchmark_name)
        except UserError as error:
            raise UserError(error.message, key=key_path(where, "benchmark_name"), suggestion=error.suggestion) from None
        entries: list[tuple[str, dict[str, Any], bool]] = []
        for j, entry in enumerate(bench.benchmark_params or []):
            entries.append((key_path(where, "benchmark_params", j), entry, False))
        for j, entry in enumerate(bench.benchmark_sweep_params or []):
            entries.append((key_path(where, "benchmark_sweep_params", j), entry, True))
        if not entries:
            entries.append((where, {}, False))
        backends = _backends(bench.backend or cfg.backend, spec, key_path(where, "backend"))
        for entry_where, entry, is_sweep in entries:
            total += (count_sweep(entry, entry_where) if is_sweep else 1) * len(backends)
            if total > max_cases:
                raise UserError(f"the config expands to more than {max_cases} cases; raise the cap with "
                                f"--max-cases or 'max_cases:' if this is intended", key=entry_where)
            dicts = expand_sweep(entry, entry_where) if is_sweep else [resolve_same_as(entry, entry_where)]
            resolved = [resolve_params(spec, {k: v for k, v in d.items() if k not in RUN_KEYS}, entry_where)
                        for d in dicts]
            planned.append((i, bench, entry_where, dicts, resolved))
    cases: list[Case] = []
    for i, bench, entry_where, dicts, resolved in planned:
        spec = get_spec(bench.benchmark_name)
        bench_run = _run_settings(base, bench.model_dump(exclude_none=True), key_path("benchmarks", i))
        outputs = Outputs(csv_path=csv_path_for(bench.csv_path, bench.benchmark_name, default_csv),
                          trace_dir=bench.trace_dir, xla_dump_dir=bench.xla_dump_dir)
        backends = _backends(bench.backend or cfg.backend, spec, key_path("benchmarks", i, "backend"))
        for d, params in zip(dicts, resolved):
            run = _run_settings(bench_run, d, entry_where)
            pair = hashlib.sha1(json.dumps([spec.name, params], sort_keys=True).encode()).hexdigest()[:12]
            for backend in backends:
                cases.append(Case(op=spec.name, backend=backend, params=params, run=run, outputs=outputs,
                                  benchmark=bench.benchmark_name, config_id=loaded.config_id, pair_key=pair))
    return cases


def plan_cases(loaded: LoadedConfig, *, output_dir: str = "results", max_cases: int | None = None,
               overrides: dict[str, Any] | None = None) -> list[Case]:
    """All cases of a config, in config order. Errors name the file and key."""
    cap = max_cases or getattr(loaded.model, "max_cases", None) or DEFAULT_MAX_CASES
    default_csv = os.path.join(output_dir, f"{Path(loaded.path).stem}.csv")
    try:
        if loaded.dialect == "ironwood":
            cases = _ironwood_cases(loaded.model, loaded, default_csv, cap)  # type: ignore[arg-type]
        else:
            from microbench.torchao_plan import torchao_cases
            cases = torchao_cases(loaded, cap, overrides or {})
    except UserError as error:
        raise error.with_file(loaded.path)
    return cases
