"""How a comparison is written out (`compare --format`, `ab`): one registered function per format over
the same typed `Report`, so a new format is one function here and touches no verdict or pairing. Light
to import (the command line reads the format names); the console's modules load when one writes."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from accelbench.errors import visible


@dataclass(frozen=True)
class Line:
    """One compared case: what every format writes of it."""

    case: str
    baseline_median_s: float | None
    candidate_median_s: float | None
    ratio: float | None
    ratio_low: float | None  # the interval the verdict read (evidence says of what)
    ratio_high: float | None
    verdict: str
    evidence: str
    rounds: int | None  # ab: the paired rounds the interval is of
    device_state_differs: list[str]  # the GPU settings the two rows differ in (a condition)
    fails: bool  # the gate fails on it
    marks: tuple[str, str] = ("", "")  # after each median: the audit's `!` where it found something


@dataclass
class Grid:
    """Groups of one file side by side (`--by`): a title, the groups, a line of cells per case."""

    title: str
    sides: list[str]
    rows: list[tuple[str, list[str]]]
    notes: list[str]


@dataclass
class Report:
    labels: tuple[str, str]  # baseline, candidate
    threshold: float
    lines: list[Line]  # those a table shows
    every: list[Line]  # all of them (JSON)
    notes: list[str]  # said under the table (on standard error under a machine-read format)
    grid: Grid | None = None
    ambiguous: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Format:
    write: Callable[[Report], None]
    machine: bool  # read by a program: standard output holds nothing else


FORMATS: dict[str, Format] = {}


def comparison_format(name: str, machine: bool = False) -> Callable[..., Any]:
    def register(write: Callable[[Report], None]) -> Callable[[Report], None]:
        FORMATS[name] = Format(write, machine)
        return write

    return register


def show(report: Report, output_format: str) -> None:
    chosen = FORMATS[output_format]
    chosen.write(report)
    for note in (report.grid.notes if report.grid else []) + report.notes:
        print(visible(note), file=sys.stderr if chosen.machine else sys.stdout)


TITLE = (
    "median time; verdicts from the ratio's 95% interval (paired rounds, raw samples, or p10-p90 "
    "where there are no samples), beyond what differing conditions explain"
)


def _cells(line: Line, rounds: bool) -> list[str]:
    from accelbench.results.console import format_seconds

    interval = (
        f"{line.ratio_low:.3f} - {line.ratio_high:.3f}"
        if line.ratio_low is not None and line.ratio_high is not None
        else ""
    )
    return [
        line.case,
        format_seconds(line.baseline_median_s) + line.marks[0],
        format_seconds(line.candidate_median_s) + line.marks[1],
        f"{line.ratio:.3f}" if line.ratio else "",
        interval,
        line.evidence,
        *([] if not rounds else ["" if line.rounds is None else str(line.rounds)]),
        line.verdict,
    ]


def _rounds(report: Report) -> bool:
    """The rounds column, where an A/B run gave any."""
    return any(x.rounds is not None for x in report.every)


def _head(report: Report) -> list[str]:
    a, b = report.labels
    rounds = ["rounds"] if _rounds(report) else []
    return ["case", a, b, "ratio", "95% interval", "evidence", *rounds, "verdict"]


def _text_rows(report: Report) -> list[list[str]]:
    if report.grid is not None and report.grid.rows:
        return [["case", *report.grid.sides]] + [[c, *cells] for c, cells in report.grid.rows]
    return [_head(report)] + [_cells(x, _rounds(report)) for x in report.lines]


def grid_table(grid: Grid) -> Any:
    from rich.table import Table

    from accelbench.results.console import shown

    table = Table(title=shown(grid.title))
    table.add_column("case", justify="left")
    for side in grid.sides:
        table.add_column(shown(side), justify="right")
    for label, cells in grid.rows:
        table.add_row(shown(label), *map(shown, cells))
    return table


def pairs_table(report: Report) -> Any:
    from rich.table import Table

    from accelbench.results.console import shown

    table = Table(title=shown(f"{report.labels[1]} vs {report.labels[0]} ({TITLE})"))
    for col in _head(report):
        table.add_column(shown(col), justify="left" if col in ("case", "verdict") else "right")
    for x in report.lines:
        table.add_row(*map(shown, _cells(x, _rounds(report))))
    return table


@comparison_format("table")
def _table(report: Report) -> None:
    from accelbench.results.console import table_console

    if report.grid is not None:
        table_console().print(grid_table(report.grid))
    elif report.lines:
        table_console().print(pairs_table(report))


@comparison_format("csv", machine=True)
def _csv(report: Report) -> None:
    buffer = io.StringIO()
    rows = _text_rows(report)
    csv.writer(buffer, lineterminator="\n").writerows([[visible(x) for x in r] for r in rows])
    print(buffer.getvalue(), end="")


@comparison_format("markdown")
def _markdown(report: Report) -> None:
    from accelbench.results.display import markdown_safe

    head, *rest = _text_rows(report)
    rows = [head, ["---"] * len(head), *rest]
    print("".join("| " + " | ".join(markdown_safe(x) for x in r) + " |\n" for r in rows), end="")


def finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a number is null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


GATE_ONLY = ("fails", "marks")  # a Line's fields JSON says elsewhere (`failing`) or not at all


@comparison_format("json", machine=True)
def _json(report: Report) -> None:
    pairs = [
        {f.name: finite(getattr(x, f.name)) for f in fields(Line) if f.name not in GATE_ONLY}
        for x in report.every
    ]
    record = {
        "threshold": finite(report.threshold),
        "pairs": pairs,
        "failing": [x.case for x in report.every if x.fails],  # what fails the gate
        "ambiguous": report.ambiguous,
    }
    print(json.dumps(record, indent=2, allow_nan=False))
