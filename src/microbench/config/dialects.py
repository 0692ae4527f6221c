"""The config dialects: how each is recognised, its schema, and its planner (beside its schema)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
