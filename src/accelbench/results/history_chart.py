"""The report's history as small multiples (cases with steps first), and each point's place in the
picture, so the HTML page names its commit, date and run on hover (an image map)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelbench.errors import visible
from accelbench.results.charts import plt, save_figure
from accelbench.results.console import format_seconds
from accelbench.results.display import html_safe
from accelbench.results.history import History, histories
from accelbench.results.run_store import StoredRun, runs_under

PER_CHART = 24  # cases in one picture; the Markdown summary lists every case's steps
COLUMNS = 3
DPI = 100
MIN_POINTS = 3  # fewer runs of a case make no history


def stored_runs(paths: Sequence[str]) -> list[StoredRun]:
    wanted = {os.path.abspath(p) for p in paths}
    folders = {os.path.dirname(p) for p in wanted}
    return [
        run
        for folder in folders
        for run in runs_under(folder)
        if any(os.path.abspath(f) in wanted for f in run.files)
    ]


def report_histories(paths: Sequence[str]) -> list[History]:
    """The histories a report over these files draws: cases with at least MIN_POINTS runs."""
    runs = stored_runs(paths)
    if len(runs) < MIN_POINTS:
        return []
    found = [h for h in histories(runs) if len(h.points) >= MIN_POINTS]
    return sorted(found, key=lambda h: not h.steps)  # stable: the runs' order otherwise


@dataclass
class Area:
    x: int
    y: int
    title: str


def chart(found: Sequence[History], out_dir: str) -> tuple[str, int, list[Area]]:
    """history.png of the first PER_CHART cases: its path, the points drawn and where each lies."""
    cases = list(found[:PER_CHART])
    rows = math.ceil(len(cases) / COLUMNS)
    cols = min(COLUMNS, len(cases))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.6 * rows), squeeze=False, dpi=DPI)
    for ax, history in zip(axes.flat, cases, strict=False):
        _draw(ax, history)
    for ax in list(axes.flat)[len(cases) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.canvas.draw()
    height = fig.get_size_inches()[1] * DPI
    areas = []
    for ax, history in zip(axes.flat, cases, strict=False):
        for i, p in enumerate(history.points):
            x, y = ax.transData.transform((i, p.median_s * 1e6))
            at = f"{p.commit or '?'} ({p.date}), run {p.label}; {p.conditions}"
            said = f"{history.case}: {format_seconds(p.median_s)} at {at}"
            areas.append(Area(round(x), round(height - y), said.strip("; ")))
    path = os.path.join(out_dir, "history.png")
    save_figure(fig, path, dpi=DPI)
    return path, sum(len(h.points) for h in cases), areas


def _draw(ax: Any, history: History) -> None:
    y = [p.median_s * 1e6 for p in history.points]
    ax.plot(range(len(y)), y, "o-", ms=3, lw=0.8)
    for step in history.steps:
        ax.axvline(step.at - 0.5, color="tab:red", ls="--", lw=1)
        ax.annotate(f"{step.ratio - 1:+.1%}", (step.at - 0.5, max(y)), color="tab:red", fontsize=8)
    ticks = sorted({0, len(y) - 1, *(s.at for s in history.steps)})
    names = [visible(history.points[t].commit[:8] or history.points[t].label) for t in ticks]
    ax.set_xticks(ticks, names, fontsize=6)
    ax.set_ylabel("µs (median)", fontsize=7)
    ax.set_title(visible(history.case)[:60], fontsize=8)
    ax.grid(True, alpha=0.3)


def hover_areas(areas: Sequence[Area]) -> str:
    return "".join(
        f"<area shape='circle' coords='{a.x},{a.y},6' title='{html_safe(a.title)}' "
        f"alt='{html_safe(a.title)}'>"
        for a in areas
    )
