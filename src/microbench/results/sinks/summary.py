"""The table a run prints when it ends: one line per row, what it is and what it measured, and a
warning when rows are noisy (their number depends on the machine's load)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from microbench.results.console import table_console
from microbench.results.display import CONSOLE, cells
from microbench.results.records import Row
from microbench.results.sinks import RunContext, Sink, register_sink

WHAT = frozenset(("op", "backend", "params"))  # what tells rows apart is never cut


def summary_table(rows: list[Row]) -> Table:
    columns, grid = cells(rows, CONSOLE)
    table = Table(title="results", show_lines=False)
    for i, col in enumerate(columns):
        widest = max((len(line[i]) for line in grid), default=0)
        table.add_column(
            col.title,
            justify="right" if col.numeric else "left",
            min_width=max(widest, len(col.title)) if col.title in WHAT else None,
            overflow="fold" if col.title in WHAT else "ellipsis",
            no_wrap=col.title not in WHAT,
        )
    for line in grid:
        table.add_row(*(escape(cell) for cell in line))
    return table


def noisy_warning(rows: list[Row]) -> str | None:
    noisy = [r for r in rows if r.stats.noisy]
    if not noisy:
        return None
    threads = sorted({r.conditions.thread_count for r in noisy if r.conditions.thread_count})
    return (
        f"warning: {len(noisy)} of {len(rows)} rows are noisy (IQR above 10% of the median): their "
        "numbers depend on what else this machine is doing"
        + (f" (threads: {', '.join(map(str, threads))})" if threads else "")
        + "; re-run them on an idle machine or with more iterations"
    )


class Summary(Sink):
    def close(self, rows: list[Row], interrupted: bool) -> None:
        if rows and not interrupted:
            console = table_console()
            console.print(summary_table(rows))
            warning = noisy_warning(rows)
            if warning:
                console.print(escape(warning), style="yellow")


@register_sink("summary", order=100)
def summary(context: RunContext) -> Sink | None:
    return Summary() if context.options.verbosity >= 0 else None
