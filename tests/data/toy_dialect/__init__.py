"""A fourth dialect, written only to show that one folder is all a dialect is (tests/test_toy_dialect.py
puts this folder on the path and names it under the `accelbench.dialects` entry point group): one
benchmark (`toy_fault`, run as the harness's own numpy `fault` op), one flag (`--toy-scale`), one
output column (`toy_scaled_n_count`, in `toy_out.csv`), a listing and a command line of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from accelbench.catalogue import get_spec
from accelbench.config.cases import cases_per_implementation
from accelbench.config.dialects import Command, Dialect, Listing, OneOff, register_dialect
from accelbench.config.expand import Point
from accelbench.config.settings import PlanRequest
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.core.flags import Flag

SCALE: Flag[int] = Flag("--toy-scale", "toy configs: every n times this", 1, parse=int)
BENCHMARKS = {"toy_fault": "the harness's fault op on numpy, n elements"}


class ToyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    toy: list[dict[str, int]]


def _cases(n: int, where: str, request: PlanRequest) -> list[Case]:
    spec = get_spec("fault")
    return cases_per_implementation(
        spec,
        ["numpy"],
        None,
        where,
        params=spec.resolve({"n": n * request.flag(SCALE)}, where),
        run=RunSettings(num_runs=2, warmup=0),
        outputs=Outputs(request.default_csv),
        benchmark="toy_fault",
        config_id=request.config_id,
    )


def plan(cfg: ToyConfig, request: PlanRequest) -> list[Case]:
    return [c for i, entry in enumerate(cfg.toy) for c in _cases(entry["n"], f"toy[{i}]", request)]


def one_off(name: str, point: Point, request: PlanRequest) -> list[Case]:
    """`run --run toy_fault --n 4`: the case of the values given."""
    return _cases(point["n"].value, point["n"].where, request)


@dataclass(frozen=True)
class ToyRecord:
    name: str
    what: str


def _records() -> list[Any]:
    return [ToyRecord(name, what) for name, what in BENCHMARKS.items()]


register_dialect(
    Dialect(
        "toy",
        ToyConfig,
        lambda data: "toy" in data,
        plan,
        order=50,
        looks_like="'toy: [{n: ...}]' (toy dialect)",
        flags=(SCALE,),
        sinks=("toy_dialect.output",),
        command=Command("toy", "toy_dialect.cli", "the toy dialect's own command line"),
        listing=Listing(
            "--toy",
            "the toy dialect's benchmarks instead",
            _records,
            "toy benchmarks",
            ("name", "what"),
            lambda r: (r.name, r.what),
        ),
        one_off=OneOff(
            lambda name: get_spec("fault").params if name in BENCHMARKS else None, one_off
        ),
    )
)
