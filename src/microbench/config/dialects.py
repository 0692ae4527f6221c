"""The config dialects: how each is recognised, its schema, and its planner (beside its schema).

A dialect is one `register_dialect(...)`; the loader asks each in registration order whether a file
is written in it, and the planner hands the validated model to that dialect's `plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from microbench.config import ironwood, jax_bench, torchao, tpums
from microbench.config.schema import IronwoodConfig, TorchaoConfig
from microbench.config.settings import PlanRequest
from microbench.core.case import Case
from microbench.errors import UserError
from microbench.registry import register_once

DEFAULT_MAX_CASES = 5000


@dataclass(frozen=True)
class Dialect:
    name: str
    schema: type[BaseModel]
    recognise: Callable[[dict[str, Any]], bool]  # is this file written in the dialect?
    plan: Callable[[Any, PlanRequest], list[Case]]
    # renames keys of the dialect's earlier versions: (upgraded data, one warning per key)
    upgrade: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]] = lambda data: (data, [])
    looks_like: str = ""  # what a file of this dialect has, for the error when none recognises it
    # the dialect's own command-line options (PlanRequest fields they set): refused for other files
    options: tuple[tuple[str, str], ...] = ()

    @property
    def title(self) -> str:
        """The dialect as its users spell it (jax-bench)."""
        return self.name.replace("_", "-")


DIALECTS: dict[str, Dialect] = {}


def register_dialect(dialect: Dialect) -> Dialect:
    return register_once(DIALECTS, dialect.name, dialect, "dialect")


def has_any(*keys: str) -> Callable[[dict[str, Any]], bool]:
    return lambda data: any(key in data for key in keys)


# TPUMS first: a stage-A file may have `hardware:` beside its `benchmark:`, as jax-bench files do
register_dialect(
    Dialect(
        "tpums",
        tpums.TpumsConfig,
        tpums.recognise,
        tpums.plan,
        looks_like="'benchmark: {name: ...}' (TPUMS dialect)",
        options=(("--xprof_dir", "xprof_dir"),),
    )
)
# then jax-bench: its files have a `benchmarks:` list too
register_dialect(
    Dialect(
        "jax_bench",
        jax_bench.JaxBenchConfig,
        jax_bench.recognise,
        jax_bench.plan,
        looks_like="'global:' or 'benchmarks: - name:' (jax-bench dialect)",
        options=(("--hw", "system"), ("--xprof_dir", "xprof_dir"), ("--conditions", "conditions")),
    )
)
register_dialect(
    Dialect(
        "ironwood",
        IronwoodConfig,
        has_any("benchmarks"),
        ironwood.plan,
        looks_like="'benchmarks: - benchmark_name:' (Ironwood dialect)",
    )
)
register_dialect(
    Dialect(
        "torchao",
        TorchaoConfig,
        has_any("model_params", "quantization_config_recipe_names", "quantizations"),
        torchao.plan,
        torchao.upgrade_earlier_keys,
        looks_like="'model_params' (torchao dialect)",
    )
)


ALL_DIALECT_OPTIONS = {option: field for d in DIALECTS.values() for option, field in d.options}


def detect_dialect(data: dict[str, Any]) -> Dialect:
    for dialect in DIALECTS.values():
        if dialect.recognise(data):
            return dialect
    if "suite_name" in data and "configs" in data:
        raise UserError(
            "a TPUMS suite file (its configs run in turn): run it with `tpums suite run FILE`",
            key="(top level)",
        )
    keys = ", ".join(map(str, data)) or "nothing"
    expected = ", ".join(d.looks_like for d in DIALECTS.values())
    raise UserError(
        f"not a benchmark config: expected {expected}; found {keys}",
        key="(top level)",
    )
