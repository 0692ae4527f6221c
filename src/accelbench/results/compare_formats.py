"""How a comparison is written out (`compare --format`, `ab`): one function per format (FORMATS) over
one typed `Report`. Light to import (the command line reads the format names)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from accelbench.errors import visible

SUMMARY_ROWS = 200  # a GitHub job summary holds at most 1 MiB: its collapsed table stops here
LINKED = ("http://", "https://", "gs://")  # a trace a reader of the summary can open


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
    trace: str = ""  # the candidate's trace (else the baseline's), where a row kept one

    @property
    def inconclusive(self) -> bool:
        return self.verdict.startswith("inconclusive")


@dataclass
class Grid:
    """Groups of one file side by side (`--by`)."""

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


def show(report: Report, output_format: str) -> None:
    FORMATS[output_format](report)
    machine = output_format in MACHINE
    for note in (report.grid.notes if report.grid else []) + report.notes:
        print(visible(note), file=sys.stderr if machine else sys.stdout)


TITLE = (
    "median time; verdicts from the ratio's 95% interval (paired rounds, raw samples, or p10-p90 "
    "where samples are too few), beyond what differing conditions explain"
)


def _pair_rows(report: Report) -> list[list[str]]:
    from accelbench.results.console import format_seconds

    rounds = any(x.rounds is not None for x in report.every)
    head = ["case", *report.labels, "ratio", "95% interval", "evidence"]
    return [[*head, *(["rounds"] if rounds else []), "verdict"]] + [
        [
            x.case,
            format_seconds(x.baseline_median_s) + x.marks[0],
            format_seconds(x.candidate_median_s) + x.marks[1],
            f"{x.ratio:.3f}" if x.ratio else "",
            f"{x.ratio_low:.3f} - {x.ratio_high:.3f}"
            if x.ratio_low is not None and x.ratio_high is not None
            else "",
            x.evidence,
            *(["" if x.rounds is None else str(x.rounds)] if rounds else []),
            x.verdict,
        ]
        for x in report.lines
    ]


def _grid_rows(grid: Grid) -> list[list[str]]:
    return [["case", *grid.sides]] + [[c, *cells] for c, cells in grid.rows]


def _text_rows(report: Report) -> list[list[str]]:
    grid = report.grid
    return _grid_rows(grid) if grid is not None and grid.rows else _pair_rows(report)


def _rich(title: str, rows: list[list[str]], left: Callable[[int, str], bool]) -> Any:
    """A console table, its text never read as markup; `left`: which columns are left-justified."""
    from rich.table import Table

    from accelbench.results.console import shown

    table = Table(title=shown(title))
    for i, heading in enumerate(rows[0]):
        table.add_column(shown(heading), justify="left" if left(i, heading) else "right")
    for cells in rows[1:]:
        table.add_row(*map(shown, cells))
    return table


def grid_table(grid: Grid) -> Any:
    return _rich(grid.title, _grid_rows(grid), lambda i, _: i == 0)


def pairs_table(report: Report) -> Any:
    title = f"{report.labels[1]} vs {report.labels[0]} ({TITLE})"
    return _rich(title, _pair_rows(report), lambda _, heading: heading in ("case", "verdict"))


def _table(report: Report) -> None:
    from accelbench.results.console import table_console

    if report.grid is not None:
        table_console().print(grid_table(report.grid))
    elif report.lines:
        table_console().print(pairs_table(report))


def _csv(report: Report) -> None:
    from accelbench.results.display import csv_text

    print(csv_text(_text_rows(report)), end="")


def _markdown(report: Report) -> None:
    from accelbench.results.display import markdown_lines

    head, *rest = _text_rows(report)
    print(markdown_lines([head, ["---"] * len(head), *rest]), end="")


def finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a number is null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


# a Line's fields JSON says elsewhere (`failing`) or not at all
GATE_ONLY = ("fails", "marks", "trace")


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


def _github_line(x: Line) -> str:
    from urllib.parse import quote

    from accelbench.results.console import format_seconds
    from accelbench.results.display import markdown_safe

    interval = f"{x.ratio_low:.3f} – {x.ratio_high:.3f}" if x.ratio_low and x.ratio_high else ""
    trace = (
        f"[trace]({quote(visible(x.trace), safe=':/#?=&')})" if x.trace.startswith(LINKED) else ""
    )
    cells = (
        markdown_safe(x.case),
        format_seconds(x.baseline_median_s),
        format_seconds(x.candidate_median_s),
        f"{x.ratio:.3f}" if x.ratio else "",
        interval,
        markdown_safe(x.verdict),
        trace,
    )
    return "| " + " | ".join(cells) + " |"


def _github(report: Report) -> None:
    """GitHub job-summary Markdown: the verdict, the regressions' table, then every case, collapsed."""
    from accelbench.results.display import markdown_safe

    every, failing = report.every, [x for x in report.every if x.fails]
    a, b = (markdown_safe(label) for label in report.labels)
    head = f"| case | {a} | {b} | ratio | 95% interval | verdict | trace |\n|---|---:|---:|---:|---:|---|---|\n"
    said = Counter(x.verdict.split(" (")[0] for x in failing)
    unjudged, beyond = sum(x.inconclusive for x in every), f"by more than {report.threshold:.0%}"
    others = f"; none of the other {len(every) - unjudged} slower {beyond}" * (
        unjudged < len(every)
    )
    verdict = (
        f"**Regression**: {', '.join(f'{n} {v}' for v, n in said.items())} of {len(every)} cases "
        f"(threshold {report.threshold:.0%})."
        + (f" **No verdict** for {unjudged} (inconclusive)." if unjudged else "")
        if failing
        else f"**No verdict** for {unjudged} of {len(every)} cases (inconclusive){others}."
        if unjudged
        else f"**No regression**: {len(every)} cases compared, none slower {beyond}."
    )
    ordered = [*failing, *(x for x in every if not x.fails)]
    shown = ordered[:SUMMARY_ROWS]
    more = f"\nThe first {len(shown)} of {len(ordered)}; `compare --json` lists every case.\n"
    out = [f"### microbench compare\n\n{verdict}\n"]
    if failing:
        out.append(head + "\n".join(map(_github_line, failing)) + "\n")
    out.append(
        f"<details><summary>All {len(every)} cases</summary>\n\n{head}"
        + "\n".join(map(_github_line, shown))
        + "\n"
        + (more if len(ordered) > len(shown) else "")
        + "\n</details>\n"
    )
    print("\n".join(out), end="")


def _junit(report: Report) -> None:
    """JUnit XML: a test case per compared case; a regression fails, an inconclusive one is skipped."""
    every = report.every
    suite = ET.Element(
        "testsuite",
        name="microbench compare",
        tests=str(len(every)),
        failures=str(sum(x.fails for x in every)),
        errors="0",
        skipped=str(sum(x.inconclusive and not x.fails for x in every)),
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    sides = visible(" vs ".join(report.labels))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="sides", value=sides)
    for x in every:
        seconds = finite(x.candidate_median_s) or 0.0
        case = ET.SubElement(
            suite, "testcase", classname="microbench", name=visible(x.case), time=f"{seconds:.3f}"
        )
        ratio = f" (ratio {x.ratio:.3f})" if x.ratio else ""
        if x.fails:
            kind = x.verdict.split(" (")[0]
            ET.SubElement(case, "failure", type=kind, message=visible(x.verdict + ratio))
        elif x.inconclusive:
            ET.SubElement(case, "skipped", message=visible(x.verdict))
    print('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode"))


FORMATS: dict[str, Callable[[Report], None]] = {
    "table": _table,
    "csv": _csv,
    "markdown": _markdown,
    "json": _json,
    "github": _github,
    "junit": _junit,
}
# read by a program: standard output holds nothing else
MACHINE = frozenset(("csv", "json", "github", "junit"))
