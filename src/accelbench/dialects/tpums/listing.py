"""`microbench list --tpums`: each TPUMS name, its tier, the jax-bench name it runs as, its fields in
TPUMS's names and defaults, and that entry's departures."""

from __future__ import annotations

from dataclasses import dataclass

from accelbench.benchmarks.base import BASE_FIELDS, TPUMS, Tpums
from accelbench.run.listing import ParamRecord, shown_params


@dataclass(frozen=True)
class TpumsRecord:
    name: str
    tier: str
    runs_as: str
    fields: list[ParamRecord]
    notes: str

    @classmethod
    def of(cls, entry: Tpums) -> TpumsRecord:
        own = {p.name for p in BASE_FIELDS}
        fields = [ParamRecord.of(p) for p in entry.fields if p.name not in own]
        return cls(entry.name, entry.tier, entry.v2, fields, entry.bench.notes)


def tpums_records() -> list[TpumsRecord]:
    return [TpumsRecord.of(entry) for entry in TPUMS.values()]


def cells(r: TpumsRecord) -> tuple[str, ...]:
    return (r.name, r.tier, r.runs_as, shown_params(r.fields), r.notes)
