"""Where tables are printed: fitted to the terminal, or unwrapped when the output goes to a file or pipe."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

from rich.console import Console

from microbench.catalogue import get_spec
from microbench.core.case import shape_label
from microbench.errors import UserError

PIPE_WIDTH = 200  # piped output is read by tools and people with wide windows: never wrap a row


def table_console() -> Console:
    return Console() if sys.stdout.isatty() else Console(width=PIPE_WIDTH)


IDENTITY_LIKE = frozenset(("case_id", "run_id", "timestamp", "label", "error", "status"))
SHAPE_KEYS = frozenset(("m", "k", "n", "num_elements", "batch", "seq", "hidden", "size"))


def fixed(value: Any, scale: float = 1.0, digits: int = 1) -> str:
    """A number for a table cell, scaled, at fixed decimals; blank where there is none."""
    return "" if value in (None, "") else f"{float(value) * scale:.{digits}f}"


def varying(rows: list[dict[str, Any]], keys: Any) -> list[str]:
    """The keys, in order, whose values are not the same in every row."""
    return [k for k in keys if len({str(r.get(k)) for r in rows}) > 1]


def distinguishing(rows: list[dict[str, Any]]) -> list[str]:
    """Per row, `key=value` for the parameters (and implementation) that differ between rows of the
    same op, backend and shape: what tells two otherwise identical table lines apart."""
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[r["op"], r["backend"], shape_label(r)].append(i)
    out = [""] * len(rows)
    for (op, _, _), members in groups.items():
        if len(members) < 2:
            continue
        try:
            names = [p.name for p in get_spec(op).params if p.name not in SHAPE_KEYS]
        except UserError:  # a row of an op this version no longer has: compare what it does have
            names = sorted({k for i in members for k in rows[i]} - SHAPE_KEYS)
            names = [k for k in names if k not in IDENTITY_LIKE]
        keys = varying([rows[i] for i in members], ("implementation", *names))
        for i in members:
            out[i] = " ".join(f"{k}={rows[i].get(k)}" for k in keys)
    return out
