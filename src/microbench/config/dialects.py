"""The config dialects: how each is recognised, its schema, and its planner (beside its schema)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from microbench.config import ironwood, torchao
from microbench.config.schema import IronwoodConfig, TorchaoConfig
from microbench.config.settings import PlanRequest
from microbench.core.case import Case
from microbench.errors import UserError

DEFAULT_MAX_CASES = 5000


@dataclass(frozen=True)
class Dialect:
    name: str
    schema: type[BaseModel]
    markers: tuple[str, ...]  # any of these top-level keys identifies the dialect
    plan: Callable[[Any, PlanRequest], list[Case]]
    # renames keys of the dialect's earlier versions: (upgraded data, one warning per key)
    upgrade: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]] = lambda data: (data, [])


DIALECTS = (
    Dialect("ironwood", IronwoodConfig, ("benchmarks",), ironwood.plan),
    Dialect(
        "torchao",
        TorchaoConfig,
        ("model_params", "quantization_config_recipe_names", "quantizations"),
        torchao.plan,
        torchao.upgrade_earlier_keys,
    ),
)
BY_NAME = {d.name: d for d in DIALECTS}


def detect_dialect(data: dict[str, Any]) -> Dialect:
    for dialect in DIALECTS:
        if any(key in data for key in dialect.markers):
            return dialect
    keys = ", ".join(map(str, data)) or "nothing"
    raise UserError(
        f"not a benchmark config: expected a top-level 'benchmarks' list (Ironwood dialect) "
        f"or 'model_params' (torchao dialect), found {keys}",
        key="(top level)",
    )


def default_csv(path: str, output_dir: str) -> str:
    """Where rows go when the config names no file: <output_dir>/<config stem>.csv."""
    return os.path.join(output_dir, f"{Path(path).stem}.csv")


def plan_cases(
    dialect: str,
    model: Any,
    *,
    path: str,
    config_id: str,
    output_dir: str = "results",
    max_cases: int | None = None,
    max_dim: int | None = None,
    output_path: str | None = None,
) -> list[Case]:
    """All cases of a validated config, in config order. Errors name the file and key."""
    request = PlanRequest(
        config_id=config_id,
        default_csv=default_csv(path, output_dir),
        max_cases=max_cases or getattr(model, "max_cases", None) or DEFAULT_MAX_CASES,
        max_dim=max_dim,
        output_path=output_path,
    )
    try:
        cases = BY_NAME[dialect].plan(model, request)
    except UserError as error:
        raise error.with_file(path) from None
    if not cases:
        raise UserError(
            "the config expands to zero cases (an empty range or list?)",
            file=path,
            key="(top level)",
        )
    unique: dict[str, Case] = {}
    for case in cases:  # one row per case id: a case named twice (two entries, one point) runs once
        unique.setdefault(case.id, case)
    return list(unique.values())
