"""`microbench list` and `validate --list`: the op catalogue and a config's cases, as tables or JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from microbench.catalogue import all_specs
from microbench.core.case import Case, shape_label
from microbench.results.console import table_console


def op_records() -> list[dict[str, Any]]:
    """Every op: its suite, backends, parameters (kind, default, choices, aliases) and what it is."""
    return [
        {
            "op": spec.name,
            "suite": spec.suite,
            "backends": list(spec.backends),
            "doc": spec.doc,
            "params": [
                {
                    "name": p.name,
                    "kind": p.kind,
                    "default": p.default,
                    **({"choices": list(p.choices)} if p.choices else {}),
                    **({"aliases": list(p.aliases)} if p.aliases else {}),
                }
                for p in spec.params
            ],
        }
        for spec in all_specs().values()
    ]


def case_records(cases: list[Case]) -> list[dict[str, Any]]:
    return [
        {
            "case_id": c.id,
            "label": c.label,
            "op": c.op,
            "backend": c.backend,
            "implementation": c.implementation,
            "params": c.params,
            "num_runs": c.run.num_runs,
            "warmup": c.run.warmup,
            "timer": c.run.timer,
            "cache": c.run.cache,
            "cadence": c.run.cadence,
            "csv_path": c.outputs.csv_path,
        }
        for c in cases
    ]


def print_json(records: Any) -> None:
    print(json.dumps(records, indent=1, default=str))


def print_ops() -> None:
    table = Table(title="ops")
    for col in ("op", "suite", "backends", "parameters (default)", "what"):
        table.add_column(col)
    for record in op_records():
        params = ", ".join(
            p["name"] if p["default"] is None else f"{p['name']}={p['default']}"
            for p in record["params"]
        )
        table.add_row(
            record["op"], record["suite"], ", ".join(record["backends"]), params, record["doc"]
        )
    table_console().print(table)


def print_cases(cases: list[Case]) -> None:
    table = Table(title=f"{len(cases)} cases")
    for col in (
        "case",
        "op",
        "backend",
        "implementation",
        "shape",
        "runs",
        "timer / cache / cadence",
    ):
        table.add_column(col)
    for c in cases:
        table.add_row(
            c.id,
            c.op,
            c.backend,
            c.implementation or "",
            shape_label(c.params, named=True),
            str(c.run.num_runs),
            f"{c.run.timer} / {c.run.cache} / {c.run.cadence}",
        )
    table_console().print(table)
