"""`microbench history`: each case's median over the stored runs in commit order (one point per run:
a case held twice is the median of its medians), and the steps in it (results/change_points.py)."""

from __future__ import annotations

import fnmatch
import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, astuple, dataclass, field, fields

from accelbench.results.change_points import Step, steps
from accelbench.results.compare import CaseKey, case_label, usable
from accelbench.results.console import format_seconds
from accelbench.results.display import csv_text, markdown_lines
from accelbench.results.reading import read_many
from accelbench.results.records import Conditions, Environment, Identity, Row, TimeStats, TimingInfo
from accelbench.results.run_store import StoredRun

GROUPS = (Identity, TimeStats, Conditions, TimingInfo, Environment)  # what a point reads of a row


@dataclass(frozen=True)
class Point:
    commit: str  # '' where the run recorded none
    date: str  # the commit's date, else when the run started
    label: str  # the run's --name, else its number
    median_s: float
    conditions: str  # what it was measured under: host, device, timer, doubt


@dataclass
class History:
    case: str
    config: str  # what ran it (a config, or `--run ...`): what `ab` needs to measure it again
    points: list[Point] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def around(self, step: Step) -> tuple[Point, Point]:
        return self.points[step.at - 1], self.points[step.at]


def _order(run: StoredRun) -> tuple[str, str, int]:
    return (run.code.date or run.started or "", run.started or "", run.number)


def _conditions(row: Row, run: StoredRun) -> str:
    parts = (run.host, row.environment.device_kind, row.timing.timing_source, row.doubt)
    return " ".join(p for p in parts if p)


def histories(
    runs: Sequence[StoredRun], case: str | None = None, since: str | None = None
) -> list[History]:
    """One history per case (matching the shell pattern `case`) and device (a change of runner is no
    step of the code), from the runs dated `since` or later."""
    found: dict[tuple[CaseKey, str | None], History] = {}
    kept = [r for r in sorted(runs, key=_order) if not since or _order(r)[0][: len(since)] >= since]
    read = iter(read_many([path for run in kept for path in run.files], GROUPS))
    for run in kept:
        mine: dict[tuple[CaseKey, str | None], list[tuple[float, Row]]] = {}
        for row in (r for _ in run.files for r in next(read)):
            if row.ok and (median := row.median_s) is not None and usable(median):
                where = (CaseKey.of(row), row.environment.device_kind)
                mine.setdefault(where, []).append((median, row))
        for where, rows in mine.items():  # a case the run holds twice is one point
            if where not in found:
                found[where] = History(case_label(rows[0][1]), run.source)
            said = "; ".join(dict.fromkeys(_conditions(row, run) for _, row in rows))
            median = statistics.median(m for m, _ in rows)
            tested, label = run.code.commit or "", run.name or str(run.number)
            found[where].points.append(Point(tested, _order(run)[0], label, median, said))
    devices = Counter(case_key for case_key, _ in found)
    for (case_key, device), history in found.items():
        history.case += f" on {device}" if devices[case_key] > 1 else ""
    chosen = [h for h in found.values() if case is None or fnmatch.fnmatchcase(h.case, case)]
    for history in chosen:
        history.steps = steps([p.median_s for p in history.points])
    return chosen


def _step_line(history: History, step: Step) -> str:
    before, after = history.around(step)
    span = f" (95% {step.low - 1:+.1%} to {step.high - 1:+.1%})" if step.low and step.high else ""
    return f"{step.ratio - 1:+.1%}{span} at {after.commit or after.label}, after {before.commit or before.label}"


def as_records(found: Sequence[History]) -> list[dict[str, object]]:
    return [
        asdict(h)
        | {
            "steps": [
                {**asdict(s), "last_before": asdict(a), "first_after": asdict(b)}
                for s in h.steps
                for a, b in [h.around(s)]
            ]
        }
        for h in found
    ]


def as_text(found: Sequence[History], fmt: str) -> str:
    """`--format csv` (a row per point, a step's size on the first after it), json or markdown."""
    if fmt == "json":
        return json.dumps(as_records(found), indent=2) + "\n"
    if fmt == "markdown":
        return markdown_lines(
            [HEAD, ("---", "---:", "---", "---", "---"), *table_rows(found, "; ")]
        )
    lines: list[tuple[object, ...]] = [CSV_HEAD]
    for h in found:
        at = {s.at: s.ratio for s in h.steps}
        lines += [(h.case, *astuple(p), at.get(i, "")) for i, p in enumerate(h.points)]
    return csv_text(lines)


def _point(p: Point) -> str:
    return f"{format_seconds(p.median_s)} ({p.commit or p.label})"


HEAD = ("case", "points", "first", "latest", "steps")
CSV_HEAD = ("case", *(f.name for f in fields(Point)), "step_ratio")  # a row per point


def table_rows(found: Sequence[History], between: str = "\n") -> list[tuple[str, ...]]:
    return [
        (
            h.case,
            str(len(h.points)),
            _point(h.points[0]),
            _point(h.points[-1]),
            between.join(_step_line(h, s) for s in h.steps) or "none",
        )
        for h in found
    ]
