"""TPUMS layouts its newest loader refuses and an earlier one read: fields flat in `benchmark:` (stage
A) and `xprof_timing` inside `params:`, a case or the sweep (the first case's applying to the file).
Users keep files pinned at the version they wrote them for: each is read as that version read it,
with one note in upstream's newest words; `--strict-layout` makes the note upstream's error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accelbench.benchmarks.flags import STRICT_LAYOUT
from accelbench.config.expand import Given, Point
from accelbench.config.settings import PlanRequest
from accelbench.errors import UserError, key_path

TOP = "benchmark"
RESERVED = ("name", "model_preset", "params", "cases", "cases_from_csv", "sweep")
STAGE_B = (*RESERVED, "xprof_timing", "xprof_device_mode")
NEWEST_MARKS = ("params", "cases_from_csv", "model_preset")  # keys no earlier layout had
XPROF = "xprof_timing"


@dataclass
class LayoutNote:
    """What a file's older layouts earn: one note each (or, strict, upstream's error)."""

    request: PlanRequest
    noted: set[str] = field(default_factory=set)
    xprof: Given | None = None  # the first xprof_timing given inside a case's values

    def older(self, kind: str, message: str, key: str) -> None:
        if self.request.flag(STRICT_LAYOUT):
            raise UserError(message, key=key)
        if kind not in self.noted:
            self.noted.add(kind)
            self.request.warnings.append(
                f"{key}: {message}; read as TPUMS's earlier loader read it (--strict-layout "
                "refuses it)"
            )

    def reserved_in(self, given: dict[str, Any], where: str) -> None:
        """TPUMS's structure keys cannot be a case's value; xprof_timing once could."""
        if found := [k for k in given if k in (*RESERVED, XPROF)]:
            message = (
                f"{', '.join(found)}: reserved key(s) cannot be given here (they belong directly "
                "under benchmark:)"
            )
            if found != [XPROF]:
                raise UserError(message, key=key_path(where, found[0]))
            self.older(XPROF, message, key_path(where, XPROF))

    def file_xprof(self, point: Point) -> Point:
        """A case's values without xprof_timing (the first one given is the file's)."""
        if XPROF not in point:
            return point
        self.xprof = self.xprof or point[XPROF]
        return {k: g for k, g in point.items() if k != XPROF}


def stage_b(data: dict[str, Any], layout: LayoutNote) -> bool:
    """Stage B keeps only structure keys in `benchmark:`; fields there are stage A, unless mixed
    with keys only B has (no loader read that: upstream's error)."""
    bench = data[TOP]
    flat = [k for k in bench if k not in STAGE_B]
    if not flat:
        return True
    message = (
        f"Unrecognized key(s) in 'benchmark' mapping: {', '.join(flat)}. Baseline execution "
        "parameters should be placed under 'params:'"
    )
    if any(k in bench for k in NEWEST_MARKS):
        raise UserError(message, key=key_path(TOP, flat[0]))
    layout.older("flat", message, key_path(TOP, flat[0]))
    return False
