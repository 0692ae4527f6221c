"""`microbench list` and `validate --list`: the op catalogue and a config's cases as typed records
(`OpRecord`, `CaseRecord`), printed as tables or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.table import Table

from accelbench.catalogue import OpSpec, Param, all_specs, get_spec
from accelbench.core.case import Case, declared_settings
from accelbench.results.console import shown, table_console


@dataclass(frozen=True)
class ParamRecord:
    name: str
    kind: str
    default: Any
    choices: list[Any] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, p: Param) -> ParamRecord:
        return cls(p.name, p.kind, p.default, list(p.choices), list(p.aliases))


@dataclass(frozen=True)
class OpRecord:
    op: str
    suite: str
    backends: list[str]
    doc: str
    params: list[ParamRecord]

    @classmethod
    def of(cls, spec: OpSpec) -> OpRecord:
        params = [ParamRecord.of(p) for p in spec.params]
        return cls(spec.name, spec.suite, list(spec.backends), spec.doc, params)


def shown_params(params: list[ParamRecord]) -> str:
    return ", ".join(p.name if p.default is None else f"{p.name}={p.default}" for p in params)


def print_table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    table = Table(title=title)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*map(shown, row))
    table_console().print(table)


def op_records() -> list[OpRecord]:  # not the harness's own test ops
    return [OpRecord.of(s) for s in all_specs().values() if not s.traits.internal]


@dataclass(frozen=True)
class CaseRecord:
    """A planned case as `validate --json` prints it (a jax-bench or TPUMS case: its benchmark and
    fields in that file's names)."""

    case_id: str
    label: str
    op: str
    backend: str
    implementation: str | None
    params: dict[str, Any]
    settings: dict[str, Any]
    repeat_count: int
    csv_path: str
    benchmark: str | None = None
    fields: dict[str, Any] | None = None

    @classmethod
    def of(
        cls, c: Case, own: Callable[[Case], tuple[str, dict[str, Any]]] | None = None
    ) -> CaseRecord:
        benchmark, fields = own(c) if own is not None and c.origin is not None else (None, None)
        return cls(
            c.id,
            c.label,
            c.op,
            c.backend,
            c.implementation,
            c.params.as_dict(),
            {f.name: getattr(c.run, f.name) for f in declared_settings()},
            c.occurrence,
            c.outputs.csv_path,
            benchmark,
            fields,
        )


def print_json(records: list[Any]) -> None:
    print(json.dumps([asdict(r) for r in records], indent=1, default=str))


def print_ops() -> None:
    print_table(
        "ops",
        ("op", "suite", "backends", "parameters (default)", "what"),
        [
            (r.op, r.suite, ", ".join(r.backends), shown_params(r.params), r.doc)
            for r in op_records()
        ],
    )


def varying_params(cases: list[Case]) -> list[str]:
    """Per case, what identifies it beyond its shape: every non-dimension parameter, then the run
    settings in its id and a repeat where they differ between its op's cases."""
    what = [c.distinctions() for c in cases]
    by_op: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_op.setdefault(c.op, []).append(i)
    shown: dict[str, list[str]] = {}
    for op, members in by_op.items():
        keys = dict.fromkeys(k for i in members for k in what[i])
        params, dims = set(cases[members[0]].params.as_dict()), get_spec(op).dimensions
        shown[op] = [
            k
            for k in keys
            if k not in dims and (k in params or len({str(what[i].get(k)) for i in members}) > 1)
        ]
    return [
        " ".join(f"{k}={what[i][k]}" for k in shown[c.op] if what[i].get(k) not in (None, ""))
        for i, c in enumerate(cases)
    ]


def print_cases(cases: list[Case]) -> None:
    table = Table(title=f"{len(cases)} cases")
    columns = ("case", "op", "backend", "implementation", "shape", "params", "runs")
    for col in (*columns, "timer / cache / cadence"):
        table.add_column(col, overflow="fold")
    for c, params in zip(cases, varying_params(cases), strict=True):
        table.add_row(
            c.id,
            shown(c.op),
            c.backend,
            shown(c.implementation or ""),
            get_spec(c.op).shape(c.params, named=True),
            shown(params),
            str(c.run.num_runs),
            f"{c.run.timer} / {c.run.cache} / {c.run.cadence}",
        )
    table_console().print(table)
