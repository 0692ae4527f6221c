"""`microbench list`: the op catalogue as a table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from microbench.catalogue import all_specs


def print_ops() -> None:
    table = Table(title="ops")
    for col in ("op", "suite", "backends", "parameters (default)", "what"):
        table.add_column(col)
    for spec in all_specs().values():
        params = ", ".join(
            p.name if p.default is None else f"{p.name}={p.default}" for p in spec.params
        )
        table.add_row(spec.name, spec.suite, ", ".join(spec.backends), params, spec.doc)
    Console(width=200).print(table)
