"""Every registry of the program, and one way to make registrations that do not outlive a block:
`with scoped(): ...` (a test adding a timer, a backend, a sink, a dialect, an op and its twins, a
jax-bench name, a torchao recipe, a parameter kind or a roofline preset, and running it end to end). Whatever is
registered inside is gone afterwards, and whatever was there is as it was."""

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
    """The registries that are plain tables (the catalogue and the sinks have their own scopes)."""
    timers.registered_timers()  # discovered first: a scope never hides a module registering late
    owned = tuple(table for d in dialects.dialects() for table in d.registries())
    return (
        timers._TIMERS,
        backends.BACKENDS,
        dialects.DIALECTS,
        *owned,
        catalogue.PARAM_KINDS,
        specs.presets(),
        torchao.RECIPES,
        runner._backend_cache,  # a registered backend's loaded instance goes with it
    )


@contextmanager
def scoped() -> Iterator[None]:
    """Registrations made inside are undone on the way out, however the block ends."""
    saved = [(table, dict(table)) for table in _tables()]
    try:
        with catalogue.CATALOGUE.scoped(), sinks.scoped_sinks():
            yield
    finally:
        for table, contents in saved:
            table.clear()
            table.update(contents)
