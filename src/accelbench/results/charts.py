"""What every chart of a report needs (the headless backend, the rows it can place, a figure written
whole); each case's samples over its run, with the GPU's SM clock and power where sampled; and the
history's small multiples, each point named on hover (an image map)."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from accelbench.catalogue import OpParams, all_specs  # noqa: E402
from accelbench.errors import visible  # noqa: E402
from accelbench.names import portable_name  # noqa: E402
from accelbench.results.console import format_seconds, shape_of, significant  # noqa: E402
from accelbench.results.display import html_safe  # noqa: E402
from accelbench.results.history import History, histories  # noqa: E402
from accelbench.results.records import Row, speedup  # noqa: E402
from accelbench.results.run_store import StoredRun, runs_under  # noqa: E402
from accelbench.results.writer import write_atomically  # noqa: E402

GAP, DTYPE = "gap_strategy", "dtype"  # the parameters a soak chart's title names, where it has them


def save_figure(fig: Any, path: str, **options: Any) -> str:
    """A chart laid out and written whole, never through a link planted at its path; then closed."""
    fig.tight_layout()
    write_atomically(path, lambda f: fig.savefig(f, format="png", **options), binary=True)
    plt.close(fig)
    return path


def dimensions(op: str, params: OpParams) -> tuple[str, ...]:
    spec = all_specs().get(op)  # an op this version no longer has: any integer parameter may do
    if spec:
        return spec.dimensions
    return tuple(n for n, v in params.as_dict().items() if isinstance(v, int))


LARGEST = 1e30  # past it a scale's arithmetic overflows (a ratio, a square); no measurement is that


def placeable(row: Row) -> bool:
    """Every number a chart reads is finite, in (0, LARGEST), the median within its p10-p90 (bars
    are lengths); rows that are not ok are drawn by no chart."""
    s, d = row.stats, row.derived
    numbers = (row.median_s, s.time_p10_s, s.time_p90_s, d.tflop_per_s, d.gb_per_s)
    given = [float(v) for v in (*numbers, d.intensity_flop_per_byte, speedup(row)) if v is not None]
    values = row.params.as_dict()
    sizes = [values[n] for n in dimensions(row.identity.op, row.params) if n in values]
    inside = (s.time_p10_s or 0) <= (row.median_s or 0) <= (s.time_p90_s or math.inf)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in sizes)
    placed = numeric and all(0 < v < LARGEST for v in [*given, *sizes])
    return not row.ok or (placed and inside)


def drawable(rows: Sequence[Row]) -> list[Row]:
    """The rows the charts may take; those left out are named in one line (the tables keep them)."""
    left = [r.identity.label for r in rows if not placeable(r)]
    if left:
        print(
            visible(
                f"{len(left)} rows are in the tables but not the charts (a time or rate that is not "
                f"a finite positive number, or a median outside its p10-p90): {', '.join(left[:10])}"
                + (" ..." if len(left) > 10 else "")
            ),
            file=sys.stderr,
        )
    return [r for r in rows if placeable(r)]


def soaked(row: Row) -> bool:
    c = row.conditions
    if c.min_duration_s or c.soak_chunk_count or row.timing.sm_clock_first_mhz:
        return True
    spec = all_specs().get(row.identity.op)  # None: an op this version does not know
    return bool(spec and spec.traits.monitor_gpu)


def time_series(rows: Sequence[Row], out_dir: str, every: bool = False) -> dict[str, int]:
    """Per soaked case (`every`: `report --sample-charts`): each iteration's time, clock, power."""
    written: dict[str, int] = {}
    for row in rows:
        samples = row.series.samples_s
        if not row.ok or not samples or not (every or soaked(row)):
            continue
        clocks = row.series.gpu_monitor
        fig, axes = plt.subplots(
            2 if clocks else 1, 1, figsize=(9, 7 if clocks else 4.5), squeeze=False
        )
        ax = axes[0][0]
        ax.plot([s * 1e3 for s in samples], lw=0.8)
        ax.set(xlabel="iteration", ylabel="ms per iteration")
        if clocks:  # the monitor spans the whole case (inputs, compile, check, warm-up, timed run)
            bottom = axes[1][0]
            bottom.plot([c[0] for c in clocks], [c[1] for c in clocks], "r", lw=0.8)
            bottom.set_xlabel("seconds since the case started (the timed run is at the end)")
            bottom.set_ylabel("SM clock (MHz)", color="r")
            power = bottom.twinx()
            power.plot([c[0] for c in clocks], [c[4] for c in clocks], "k", lw=0.5, alpha=0.5)
            power.set_ylabel("power (W)")
            bottom.grid(True, alpha=0.3)
        clocked = f", throttled {row.stats.throttled}" if clocks else ""  # a clock to say so
        ax.set_title(
            f"{row.identity.op} {row.params.value(GAP, '')} {shape_of(row)} "
            f"{row.params.value(DTYPE, '')}: last/first tenth "
            f"{significant(row.stats.decile_drift_ratio)}{clocked}",
            fontsize=9,
        )
        ax.grid(True, alpha=0.3)
        name = f"series_{portable_name(row.identity.op)}_{portable_name(row.identity.case_id)}.png"
        path = save_figure(fig, os.path.join(out_dir, name), dpi=120)
        written[path] = len(samples)
    return written


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


def history_chart(found: Sequence[History], out_dir: str) -> tuple[str, int, str]:
    """history.png of the first PER_CHART cases: its path, its points, its image map's areas."""
    cases = list(found[:PER_CHART])
    rows = math.ceil(len(cases) / COLUMNS)
    cols = min(COLUMNS, len(cases))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.6 * rows), squeeze=False, dpi=DPI)
    for ax, history in zip(axes.flat, cases, strict=False):
        _draw(ax, history)
    for ax in list(axes.flat)[len(cases) :]:
        ax.axis("off")
    # laid out and drawn first: the map's coordinates are the written picture's
    path = save_figure(fig, os.path.join(out_dir, "history.png"), dpi=DPI)
    height = fig.get_size_inches()[1] * DPI
    areas = ""
    for ax, history in zip(axes.flat, cases, strict=False):
        for i, p in enumerate(history.points):
            x, y = ax.transData.transform((i, p.median_s * 1e6))
            at = f"{p.commit or '?'} ({p.date}), run {p.label}; {p.conditions}"
            said = f"{history.case}: {format_seconds(p.median_s)} at {at}"
            title, spot = html_safe(said.strip("; ")), f"{round(x)},{round(height - y)},6"
            areas += f"<area shape='circle' coords='{spot}' title='{title}' alt='{title}'>"
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
