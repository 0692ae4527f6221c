"""`microbench list --jax-bench`: each name, the op(s) that run it, its fields, its departures."""

from __future__ import annotations

from dataclasses import dataclass

from accelbench.benchmarks.base import BASE_FIELDS, V2, Benchmark
from accelbench.run.listing import ParamRecord, shown_params


@dataclass(frozen=True)
class BenchmarkRecord:
    name: str
    ops: list[str]
    fields: list[ParamRecord]
    notes: str

    @classmethod
    def of(cls, bench: Benchmark) -> BenchmarkRecord:
        defaults = {p.name: p.default_value for p in bench.all_fields}
        variants = [defaults] + [
            {**defaults, p.name: choice} for p in bench.all_fields for choice in p.choices
        ]  # a choice field (mode) may pick another op
        ops = list(dict.fromkeys(bench.op(bench.typed(**v)) for v in variants))
        base = {p.name for p in BASE_FIELDS}  # the fields every Config starts with
        fields = [
            ParamRecord(p.name, p.kind, p.default, list(p.choices))
            for p in bench.all_fields
            if p.name not in base
        ]
        return cls(bench.name, ops, fields, bench.notes)


def benchmark_records() -> list[BenchmarkRecord]:
    return [BenchmarkRecord.of(b) for b in V2.values() if not b.tpums_only]


def cells(r: BenchmarkRecord) -> tuple[str, ...]:
    return (r.name, ", ".join(r.ops), shown_params(r.fields), r.notes)
