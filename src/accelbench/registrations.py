"""Every registry of the program, and `with scoped(): ...`: registrations made inside (a test's timer,
backend, sink, dialect, op, ...) are gone afterwards, whatever was there as it was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from accelbench import catalogue, specs
from accelbench.config import dialects
from accelbench.measure import timers
from accelbench.ops import torchao
from accelbench.platform import backends
from accelbench.results import sinks
from accelbench.run import runner


def _tables() -> tuple[dict[Any, Any], ...]:
    catalogue.discover()  # discovered first: a scope never hides a module registering late
    timers.registered_timers()
    sinks.registered_sinks()
    owned = tuple(table for d in dialects.dialects() for table in d.registries())
    return (
        timers._TIMERS,
        sinks._SINKS,
        backends.BACKENDS,
        dialects.DIALECTS,
        *owned,
        catalogue.SPECS,
        catalogue.IMPLEMENTATIONS,
        catalogue.PARAM_KINDS,
        specs.presets(),
        torchao.RECIPES,
        runner._backend_cache,  # a registered backend's loaded instance goes with it
    )


@contextmanager
def scoped() -> Iterator[None]:
    saved = [(table, dict(table)) for table in _tables()]
    try:
        yield
    finally:
        for table, contents in saved:
            table.clear()
            table.update(contents)
