"""Shared plumbing of the seed-style Python entry points: build cases, run them, return seed dicts."""

from __future__ import annotations

from typing import Any

from accelbench.catalogue import get_spec
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.core.options import RunOptions
from accelbench.results.sinks.seed_json import to_seed_records
from accelbench.run.session import execute_all


def make_case(
    op: str, given: dict[str, Any], num_trials: int, warmup: int, implementation: str | None = None
) -> Case:
    spec = get_spec(op)
    return Case(
        op=op,
        backend="torch",
        params=spec.resolve(given, op),
        run=RunSettings(num_runs=num_trials, warmup=warmup),
        outputs=Outputs(csv_path=""),
        benchmark=op,
        implementation=implementation,
    )


def run_seed_cases(cases: list[Case], progress: bool = False) -> list[dict[str, Any]]:
    return to_seed_records(execute_all(cases, RunOptions(progress=progress)))
