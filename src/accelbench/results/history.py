"""`microbench history`: each case's median over the stored runs in the order of their commits, and
the steps in it (results/change_points.py).

A point is one run's row of a case (compare's `CaseKey`); where the run holds the case twice (a
jax-bench file's repeat, two entries made one case by --max-dim), the median of those rows' medians: one
point per run. Runs are ordered by the date of the commit they measured, then by when they started.
Rows without a usable time leave no point.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from accelbench.errors import visible
from accelbench.results.change_points import Step, steps
from accelbench.results.compare import CaseKey, case_label, usable
from accelbench.results.console import format_seconds
from accelbench.results.display import markdown_lines
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
        """The last point before a step and the first after it."""
        return self.points[step.at - 1], self.points[step.at]


def _order(run: StoredRun) -> tuple[str, str, int]:
    return (run.date or run.started or "", run.started or "", run.number)


def _conditions(row: Row, run: StoredRun) -> str:
    parts = (run.host, row.environment.device_kind, row.timing.timing_source, row.doubt)
    return " ".join(p for p in parts if p)


def histories(
    runs: Sequence[StoredRun], case: str | None = None, since: str | None = None
) -> list[History]:
    """One history per case and device the runs hold (whose label matches the shell pattern `case`),
    from the runs whose commit (or start) is dated `since` or later, each with its steps. A case
    timed on two kinds of device is two histories, each label naming its device: a change of runner
    is no step of the code."""
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
            label = run.name or str(run.number)
            found[where].points.append(Point(run.tested or "", _order(run)[0], label, median, said))
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
    """`--format json`: each case with every point and every step (its size, interval, commits)."""
    return [
        {
            "case": h.case,
            "config": h.config,
            "points": [asdict(p) for p in h.points],
            "steps": [
                {
                    **asdict(s),
                    "last_before": asdict(h.around(s)[0]),
                    "first_after": asdict(h.around(s)[1]),
                }
                for s in h.steps
            ],
        }
        for h in found
    ]


def as_text(found: Sequence[History], fmt: str) -> str:
    """`--format csv` (a row per point, the step's size on the first point after it), `json` or
    `markdown` (a line per case, as the table)."""
    if fmt == "json":
        return json.dumps(as_records(found), indent=2) + "\n"
    if fmt == "markdown":
        return markdown_lines(
            [HEAD, ("---", "---:", "---", "---", "---"), *table_rows(found, "; ")]
        )
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(["case", "commit", "date", "label", "median_s", "conditions", "step_ratio"])
    for h in found:
        at = {s.at: s.ratio for s in h.steps}
        for i, p in enumerate(h.points):
            cells = (h.case, p.commit, p.date, p.label, p.median_s, p.conditions, at.get(i, ""))
            out.writerow([visible(c) if isinstance(c, str) else c for c in cells])
    return buffer.getvalue()


def _point(p: Point) -> str:
    return f"{format_seconds(p.median_s)} ({p.commit or p.label})"


HEAD = ("case", "points", "first", "latest", "steps")


def table_rows(found: Sequence[History], between: str = "\n") -> list[tuple[str, ...]]:
    """A line per case: its points, first and latest medians, and its steps."""
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
