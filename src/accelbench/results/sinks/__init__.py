"""Output formats as sinks (nvbench's printers): opened before the first case, handed each finished
row, closed however the run ends. A format is one `register_sink` on a factory of its sink (or None)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, TypeVar

from accelbench.core.flags import Flag
from accelbench.plugins import import_sink_modules
from accelbench.registry import register_once

if TYPE_CHECKING:  # the command line's help reads the flags below and loads no format
    from accelbench.core.case import Case
    from accelbench.core.options import RunOptions
    from accelbench.results.records import Row

# the flags this package's formats take (a dialect's formats' flags are the dialect's)
SEED_JSON: Flag[str | None] = Flag(
    "--seed-json", "also write fusion/elementwise rows in the seeds' JSON format", None
)
FLAGS = (SEED_JSON,)


@dataclass(frozen=True)
class RunContext:
    """What a sink may know about the run it writes."""

    options: RunOptions
    cases: tuple[Case, ...]


class Sink:
    """One output format. Every method is optional: a whole-file format writes in `close`."""

    # rebuilt on resume: a finished case this output lacks (a kill between its write and the rows')
    # is handed its stored row before the run goes on
    restores: ClassVar[bool] = False

    def open(self) -> None:
        """Check that the output can be written (one-line UserError otherwise), before any case."""

    def holds(self, case: Case) -> bool:
        """Whether this output already holds the case's row (--resume skips it)."""
        return False

    def stored(self, case: Case) -> Row | None:
        """The row this output holds for a finished case, read back (the rows' own files give it)."""
        return None

    def row(self, case: Case, row: Row) -> None:
        """A finished case's row, before the next case starts."""

    def close(self, rows: list[Row], interrupted: bool) -> None:
        """The run is over (`rows`: this run's, in order); release what the sink holds."""

    def locations(self) -> list[str]:
        """Where this sink put rows, for the message an interrupted run prints."""
        return []


SinkFactory = Callable[[RunContext], Sink | None]
F = TypeVar("F", bound=SinkFactory)  # a factory function, or a Sink class made from the context


# by name: (order, factory); opened, fed and closed in that order: the durable rows first, the
# console last
_SINKS: dict[str, tuple[int, SinkFactory]] = {}
_discovered = False


def register_sink(name: str, order: int = 50) -> Callable[[F], F]:
    def decorate(factory: F) -> F:
        entry: tuple[int, SinkFactory] = (order, factory)
        register_once(_SINKS, name, entry, "sink")
        return factory

    return decorate


def registered_sinks() -> list[SinkFactory]:
    """Every output format: this package's modules, then those the dialects bring."""
    global _discovered
    if not _discovered:
        _discovered = True
        for module in pkgutil.iter_modules(__path__, __name__ + "."):
            importlib.import_module(module.name)
        import_sink_modules()
    return [factory for _, factory in sorted(_SINKS.values(), key=lambda s: s[0])]


def open_sinks(context: RunContext) -> list[Sink]:
    """Every sink this run asked for, opened in order; if one refuses, those opened are closed."""
    opened: list[Sink] = []
    try:
        for factory in registered_sinks():
            sink = factory(context)
            if sink is not None:
                sink.open()
                opened.append(sink)
    except BaseException:
        for sink in reversed(opened):
            sink.close([], interrupted=True)
        raise
    return opened
