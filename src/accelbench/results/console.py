"""Where tables are printed, and how numbers and labels look in them (text from a file is never
read as console markup)."""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from rich.console import Console
from rich.markup import escape

from accelbench.catalogue import OpParams, ReadParams, all_specs, get_spec
from accelbench.core.case import shape_label
from accelbench.core.param_kinds import PARAM_KINDS
from accelbench.errors import UserError, visible
from accelbench.ops.callables import OP as CALLABLE
from accelbench.results.records import DISTINCTION_COLUMNS, Identity, Row, setting_columns

PIPE_WIDTH = 200  # piped output is read by tools and people with wide windows: never wrap a row
SIGNIFICANT = 3
TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def shown(text: object) -> str:
    """Any text from a config, a results file or an argument: no markup, no control character."""
    return escape(visible(str(text)))


def table_console() -> Console:
    return Console() if sys.stdout.isatty() else Console(width=PIPE_WIDTH)


def significant(value: float | None, digits: int = SIGNIFICANT) -> str:
    if value is None or not math.isfinite(value):
        return ""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 6 or magnitude < -4:
        return f"{value:.{digits - 1}e}"
    return f"{value:.{max(0, digits - 1 - magnitude)}f}"


def format_seconds(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return ""
    scale, unit = next((u for u in TIME_UNITS if abs(seconds) >= u[0]), TIME_UNITS[-1])
    return f"{significant(seconds / scale)} {unit}"


def format_pct(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.0f}%"


def cpu_threads(rows: Sequence[Row]) -> list[str]:
    """Each framework's host threads in the CPU rows: what every CPU number depends on."""
    cpu = (r for r in rows if r.environment.platform == "cpu" and r.conditions.thread_count)
    return sorted({f"{r.environment.framework} {r.conditions.thread_count}" for r in cpu})


def varying(rows: Sequence[Row], names: Iterable[str]) -> list[str]:
    return [name for name in names if len({str(value_of(r, name)) for r in rows}) > 1]


IDENTIFYING = frozenset(f.name for f in fields(Identity))  # read from the identity, not the params
SOURCE = "source"  # which run or file a row of a report over several came from (not a column)


def value_of(row: Row, name: str) -> Any:
    if name == SOURCE:
        return row.source
    return getattr(row.identity, name) if name in IDENTIFYING else row.get(name)


# ops whose rows a table names by one of their parameters: bench()'s by the function it timed
NAMED_BY = {CALLABLE: "name"}


def op_name(row: Row) -> str:
    """The op as a table names it (`my_matmul`, not `callable`, for a row of bench())."""
    by = NAMED_BY.get(row.identity.op)
    return str(getattr(row.params, by, None) or row.identity.op) if by else row.identity.op


def shape_of(row: Row) -> str:
    try:
        return get_spec(row.identity.op).shape(row.params)
    except UserError:
        return shape_label(row.params.as_dict())


def worth_showing(op: str, params: OpParams) -> set[str]:
    """The parameters that name a row's case: the op's dimensions and those off their defaults, of a
    kind that names a case (every one, for an op this version does not know)."""
    spec = all_specs().get(op)
    if spec is None or isinstance(params, ReadParams):
        return set(params.as_dict())
    declared = {p.name: p for p in spec.params}
    return {
        k
        for k, v in params.as_dict().items()
        if k in spec.dimensions
        or (
            k in declared and v != declared[k].default_value and PARAM_KINDS[declared[k].kind].names
        )
    }


def distinguishing(rows: Sequence[Row]) -> list[str]:
    """Per row, `key=value` for what tells it apart beyond its op, backend and shape: the parameters
    `worth_showing` in any row of its group, then the run settings that differ within it."""
    groups: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[r.identity.op, op_name(r), r.identity.backend, shape_of(r)].append(i)
    out = [""] * len(rows)
    for (op, *_), members in groups.items():
        spec = all_specs().get(op)
        named = (*(spec.dimensions if spec else ()), NAMED_BY.get(op))  # in the shape, or the name
        shown = set().union(*(worth_showing(op, rows[i].params) for i in members))
        order = [p.name for p in spec.params] if spec else sorted(shown)
        names = [n for n in order if n in shown and n not in named]
        settings = [*setting_columns(compared_only=True), *DISTINCTION_COLUMNS]
        keys = names + (varying([rows[i] for i in members], settings) if len(members) > 1 else [])
        for i in members:
            values = ((k, value_of(rows[i], k)) for k in keys)
            out[i] = " ".join(f"{k}={v}" for k, v in values if v not in (None, ""))
    return out
