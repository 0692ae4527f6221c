"""The toy dialect's one output: toy_out.csv beside the run's rows, one column per case."""

from __future__ import annotations

import csv
import os

from accelbench.core.case import Case
from accelbench.results.records import Row
from accelbench.results.sinks import RunContext, Sink, register_sink


class ToyCsv(Sink):
    def __init__(self, path: str) -> None:
        self.path = path
        self.values: list[int] = []

    def row(self, case: Case, row: Row) -> None:
        self.values.append(int(case.params.n))

    def close(self, rows: list[Row], interrupted: bool) -> None:
        with open(self.path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["toy_scaled_n_count"])
            writer.writerows([v] for v in self.values)


@register_sink("toy_csv", order=35)
def toy_csv(context: RunContext) -> Sink | None:
    toys = [c for c in context.cases if c.benchmark == "toy_fault"]
    if not toys:
        return None
    return ToyCsv(os.path.join(os.path.dirname(toys[0].outputs.csv_path) or ".", "toy_out.csv"))
