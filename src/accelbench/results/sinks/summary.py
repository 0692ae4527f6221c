"""The table a run prints when it ends, and the notes on what its numbers depend on."""

from __future__ import annotations

import bisect
import os

from rich.console import Console
from rich.table import Table

from accelbench.results.console import cpu_threads, shown, table_console
from accelbench.results.display import CONSOLE, Column, as_text, cells, choose, sort_rows
from accelbench.results.records import Row
from accelbench.results.roofline import L2_EDGE, at_l2_edge
from accelbench.results.sinks import RunContext, Sink, register_sink

STDERR = Console(stderr=True, soft_wrap=True)


# dropped in this order when the table is wider than the terminal (every column is in the CSV); the
# names (op, backend, params) fold to fit once the first is gone, before any figure is dropped
DROP_ORDER = ("timing", "peak", "gbps", "tflops", "sqnr", "noise", "speedup")
# the names that fold, never the shape: a number split over lines misreads
FOLDING = ("source", "op", "backend", "params")
FOLD_FLOOR = 12  # the narrowest a name folds to
MEASURING = Console(width=10_000)  # a table's own widths, not the terminal's


def _table(columns: list[Column], grid: list[list[str]], fold: int | None = None) -> Table:
    """What tells rows apart (`identifies`) is whole, or its names fold at `fold` characters."""
    table = Table(title="results", show_lines=False)
    for i, col in enumerate(columns):
        widest = max([len(col.heading), *(len(line[i]) for line in grid)])
        whole = col.identifies and not (fold is not None and col.key in FOLDING)
        table.add_column(
            col.heading,
            justify="right" if col.numeric else "left",
            min_width=widest if whole else None,
            no_wrap=whole,
            max_width=fold if col.key in FOLDING else None,
            overflow="fold",
        )
    for line in grid:
        table.add_row(*(shown(cell) for cell in line))
    return table


def _fits(table: Table, width: int) -> bool:
    return MEASURING.measure(table).minimum <= width


def _fitted(columns: list[Column], grid: list[list[str]], width: int, folds: bool) -> Table | None:
    """The table within `width`, its names folded as little as needed where `folds`."""
    if _fits(table := _table(columns, grid), width) or not folds:
        return table if _fits(table, width) else None
    # the widest fold that fits: folding is monotonic, so a bisection finds it in a few tables
    folds_at = range(FOLD_FLOOR, max(len(cell) for line in grid for cell in line) + 1)
    best = bisect.bisect(folds_at, False, key=lambda f: not _fits(_table(columns, grid, f), width))
    return _table(columns, grid, folds_at[best - 1]) if best else None


def summary_table(
    rows: list[Row], width: int | None = None, chosen: tuple[Column, ...] = CONSOLE
) -> tuple[Table, list[str]]:
    """The rows' table, and the columns left out so that it fits `width` (names fold first)."""
    columns, grid = cells(rows, chosen)
    if width is None:
        return _table(columns, grid), []
    dropped: list[str] = []
    for i, key in enumerate(DROP_ORDER):
        table = _fitted(columns, grid, width, folds=i > 0)
        if table is not None:
            return table, dropped
        keys = [c.key for c in columns]
        if key in keys:
            at = keys.index(key)
            dropped.append(columns[at].heading)
            columns = columns[:at] + columns[at + 1 :]
            grid = [line[:at] + line[at + 1 :] for line in grid]
    return _fitted(columns, grid, width, True) or _table(columns, grid, FOLD_FLOOR), dropped


def cpu_note(rows: list[Row]) -> str | None:
    """What every CPU number depends on, said on screen and not only in the CSV."""
    cpu = [r for r in rows if r.environment.platform == "cpu" and r.ok]
    if not cpu:
        return None
    threads = cpu_threads(cpu)
    return (
        "note: CPU rows are wall-clock times of blocked calls (no device clock) and depend on this "
        f"machine's load; host threads: {', '.join(threads) or 'unknown'} (one by default; a config's "
        "`threads:` sets PyTorch's, JAX's CPU pool is sized once per process)"
    )


def load_now() -> str:
    """The machine's load right now, beside its cores: a busy machine explains noisy rows."""
    try:
        one_minute = os.getloadavg()[0]
    except OSError:
        return ""
    return f"; load average {one_minute:.1f} on {os.cpu_count()} cores"


def noisy_warning(rows: list[Row]) -> str | None:
    noisy = [r for r in rows if r.stats.noisy]
    if not noisy:
        return None
    return (
        f"warning: {len(noisy)} of {len(rows)} rows are noisy (IQR above 10% of the median): their "
        f"numbers depend on what else this machine is doing{load_now()}; re-run them on an idle "
        "machine or with more iterations"
    )


def l2_edge_note(rows: list[Row]) -> str | None:
    """Warm-cache rows whose working set is about the L2's size: their times move with the process."""
    edge = [
        r
        for r in rows
        if r.ok and at_l2_edge(r.conditions.cache, r.roofline.working_set_over_l2_ratio)
    ]
    if not edge:
        return None
    return (
        f"note: {len(edge)} warm-cache rows have a working set of {L2_EDGE[0]:g}-{L2_EDGE[1]:g}x the "
        "L2 (`working_set_over_l2_ratio`): how much of it the L2 keeps between iterations, and so "
        "the time, can change by a few percent with what the process ran before; `cache: cold` "
        "gives a time that does not"
    )


class Summary(Sink):
    def __init__(self, columns: tuple[str, ...], sort: str | None, output_format: str) -> None:
        self.chosen = choose(columns, CONSOLE)  # a bad name is refused before any case runs
        self.sort, self.format = sort, output_format
        sort_rows([], sort)

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if not rows or interrupted:
            return
        rows = sort_rows(rows, self.sort)
        if self.format != "table":  # for a program or a page: stdout holds nothing else
            print(as_text(rows, self.chosen, self.format), end="")
        else:
            console = table_console()
            table, dropped = summary_table(rows, console.width, self.chosen)
            console.print(table)
            if dropped:
                STDERR.print(
                    f"left out to fit the terminal: {', '.join(dropped)} (every column is in the CSV)"
                )
        notes = (
            (cpu_note(rows), None),
            (l2_edge_note(rows), None),
            (noisy_warning(rows), "yellow"),
        )
        for line, style in notes:
            if line:
                STDERR.print(shown(line), style=style, soft_wrap=True)


@register_sink("summary", order=100)
def summary(context: RunContext) -> Sink | None:
    options = context.options
    if options.verbosity < 0 and options.output_format == "table":
        return None
    return Summary(options.columns, options.sort, options.output_format)
