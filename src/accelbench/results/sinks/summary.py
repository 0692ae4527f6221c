"""The table a run prints when it ends: one line per row, what it is and what it measured, and a
warning when rows are noisy (their number depends on the machine's load)."""

from __future__ import annotations

import os

from rich.console import Console
from rich.table import Table

from accelbench.results.console import cpu_threads, shown, table_console
from accelbench.results.display import CONSOLE, Column, as_text, cells, choose, sort_rows
from accelbench.results.records import Row
from accelbench.results.roofline import L2_EDGE, at_l2_edge
from accelbench.results.sinks import RunContext, Sink, register_sink

STDERR = Console(stderr=True, soft_wrap=True)


# dropped in this order when the table is wider than the terminal (every column is in the CSV)
DROP_ORDER = ("timing", "peak", "gbps", "tflops", "sqnr", "noise", "speedup")


def _table(columns: list[Column], grid: list[list[str]], whole: bool = True) -> Table:
    """`whole`: what tells rows apart is never folded (off only when nothing else fits)."""
    table = Table(title="results", show_lines=False)
    for i, col in enumerate(columns):
        widest = max((len(line[i]) for line in grid), default=0)
        table.add_column(
            col.heading,
            justify="right" if col.numeric else "left",
            min_width=max(widest, len(col.heading)) if whole and col.identifies else None,
            overflow="fold",
        )
    for line in grid:
        table.add_row(*(shown(cell) for cell in line))
    return table


def summary_table(
    rows: list[Row], width: int | None = None, chosen: tuple[Column, ...] = CONSOLE
) -> tuple[Table, list[str]]:
    """The rows' table, and the columns left out so that it fits `width` (what a row is, its status
    and its median are never left out; the parameters fold only when nothing else makes it fit)."""
    columns, grid = cells(rows, chosen)
    dropped: list[str] = []
    table = _table(columns, grid)
    measuring = Console(width=10_000)  # the table's own widths, not the terminal's
    for key in DROP_ORDER:
        if width is None or measuring.measure(table).minimum <= width:
            break
        keys = [c.key for c in columns]
        if key in keys:
            i = keys.index(key)
            dropped.append(columns[i].heading)
            columns = columns[:i] + columns[i + 1 :]
            grid = [line[:i] + line[i + 1 :] for line in grid]
            table = _table(columns, grid)
    if width is not None and measuring.measure(table).minimum > width:
        table = _table(columns, grid, whole=False)  # long parameters fold: the row stays in view
    return table, dropped


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
        if rows and not interrupted:
            rows = sort_rows(rows, self.sort)
            dropped: list[str] = []
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
