"""Rows read back from a results file, a column at a time: each column typed in one pass (as its group
field or the op's parameter declaration types it) and each group built from its columns, so 100k rows
read in seconds; the op's parameters become its typed parameter class where this version knows the op.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import operator
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from typing import Any, NamedTuple

from accelbench.catalogue import OpParams, ReadParams, all_specs, get_spec
from accelbench.errors import Status, UserError
from accelbench.results.records import ALL_GROUPS, GROUP_ATTRIBUTES, Identity, Row, Series

_BOOLS = {"true": True, "false": False, "True": True, "False": False}
_STATUSES = {s.value: s for s in Status}  # a dict: Enum() costs 20 µs a cell


def _number(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = float(text)
        except ValueError:
            return None  # a hand-edited or foreign cell is no number, never a traceback
        if kind is int:
            return int(value) if math.isfinite(value) and value.is_integer() else None
        return value

    return parse


def _status(text: str) -> Status:
    return _STATUSES.get(text, Status.ERROR)  # one this version does not know gave no clean number


class CellType(NamedTuple):
    """How a cell of one field type reads back (the writer's `_cell` in reverse). `fast` takes every
    cell this writer writes and raises ValueError or KeyError on anything else; `careful` takes any
    text, a foreign or hand-edited cell reading as None; `blank` is what an empty cell means where
    the field's default would not do."""

    fast: Callable[[str], Any]
    careful: Callable[[str], Any]
    blank: Any = None


TEXT = CellType(str, str)
CELL_TYPES: dict[type, CellType] = {
    Status: CellType(_STATUSES.__getitem__, _status, Status.ERROR),  # no status is no clean number
    bool: CellType(_BOOLS.__getitem__, _BOOLS.get),
    int: CellType(int, _number(int)),
    float: CellType(float, _number(float)),
}


def _cell_type(annotation: Any) -> CellType:
    kinds = set(typing.get_args(annotation)) or {annotation}
    return next((CELL_TYPES[k] for k in CELL_TYPES if k in kinds), TEXT)  # bool before int


@functools.cache
def parsers(cls: type) -> tuple[tuple[str, CellType], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _cell_type(hints[f.name])) for f in fields(cls))


def _param_types(op: str) -> dict[str, CellType]:
    """How each parameter of an op reads back, from its declaration (catalogue.Param.python_type)."""
    spec = all_specs().get(op)
    return {p.name: CELL_TYPES.get(p.python_type, TEXT) for p in spec.params} if spec else {}


def _as_declared(
    op: str, params: dict[str, Any], names: list[str], foreign: list[bool]
) -> OpParams:
    """A row's parameters as the op's typed class (its defaults where a cell is empty: a file of
    several ops has the union of their columns); a value in a column the op does not declare, a
    parameter it needs and the row lacks, or an op this version does not know, leaves the dict."""
    if any(n in params for n, other in zip(names, foreign, strict=True) if other):
        return ReadParams(params)
    try:
        return get_spec(op).made(params)
    except (TypeError, UserError):
        return ReadParams(params)


def _typed(cells: Sequence[str], kind: CellType, blank: Any) -> Sequence[Any]:
    """One column typed: the fast way for a whole column this writer wrote, the careful way cell by
    cell where one is foreign (a cell no type takes is None); an empty cell is `blank`."""
    if not any(cells):
        return [blank] * len(cells)
    fast = kind.fast
    try:
        if all(cells):  # no blanks: map runs at C speed, and text is already text
            return list(cells) if fast is str else list(map(fast, cells))
        return [fast(c) if c else blank for c in cells]
    except (ValueError, KeyError):
        careful = kind.careful
        return [careful(c) if c else blank for c in cells]


def _build(cls: type, columns: list[Sequence[str] | None], n: int) -> list[Any]:
    """n instances of a row group from its fields' columns (None: a column the file lacks, read as
    empty cells: the field's default, or None)."""
    values: list[Iterable[Any]] = []
    for f, (_, kind), cells in zip(fields(cls), parsers(cls), columns, strict=True):
        default = None if f.default is dataclasses.MISSING else f.default
        blank = default if kind.blank is None else kind.blank
        values.append(itertools.repeat(blank, n) if cells is None else _typed(cells, kind, blank))
    return (
        [cls(*args) for args in zip(*values, strict=True)] if values else [cls() for _ in range(n)]
    )


class RowReader:
    """How the rows of one file become typed rows, a column at a time: each column is typed in one
    pass and each group built from its columns, so 100k rows read in seconds, not minutes. The op's
    parameters (typed as its spec types them; text where the op or the kind is unknown) and extras
    are read per op."""

    def __init__(self, header: list[str], param_names: list[str]) -> None:
        self.width = len(header)
        self._names = header
        self._index = {name: i for i, name in enumerate(header)}
        self._param_names = [n for n in param_names if n in self._index]

    def _column(self, columns: list[tuple[str, ...]], name: str) -> Sequence[str] | None:
        at = self._index.get(name)
        return None if at is None else columns[at]

    def _params(self, op: str, columns: list[tuple[str, ...]], n: int) -> list[OpParams]:
        """The op's parameters as its typed class (a value its kind does not take, or a parameter
        or op this version does not know, leaves that row a dict of what it read, text kept); an
        empty cell is the parameter's default."""
        types = _param_types(op)
        names = self._param_names
        texts = [columns[self._index[name]] for name in names]
        typed = [
            _typed(column, types.get(name, TEXT), None)
            for name, column in zip(names, texts, strict=True)
        ]
        out = [dict(zip(names, values, strict=True)) for values in zip(*typed, strict=True)]
        out = out or [{} for _ in range(n)]
        foreign = [name not in types for name in names]
        kept: list[bool] = [False] * len(out)  # a row with a value its kind did not take
        for name, column, values in zip(names, texts, typed, strict=True):
            if None not in values:
                continue
            for i, (params, text, value) in enumerate(zip(out, column, values, strict=True)):
                if value is None:  # empty: no entry; a value its kind does not take: its text
                    if text:
                        params[name] = text
                        kept[i] = True
                    else:
                        del params[name]
        return [
            ReadParams(params) if kept[i] else _as_declared(op, params, names, foreign)
            for i, params in enumerate(out)
        ]

    def _extras(self, op: str, columns: list[tuple[str, ...]], n: int) -> list[Any]:
        """The op's extras (its spec's `row_extras`), None where a row has no extras cell (a failed
        case) or the op is not one this version knows."""
        spec = all_specs().get(op)
        cls = spec.row_extras if spec else None
        if cls is None:
            return [None] * n
        own = [self._column(columns, name) for name, _ in parsers(cls)]
        present = [c for c in own if c is not None]
        if not present:
            return [None] * n
        built = _build(cls, own, n)
        return [
            e if any(row) else None
            for e, row in zip(built, zip(*present, strict=True), strict=True)
        ]

    def _columns(self, table: list[list[str]], groups: tuple[type, ...]) -> list[tuple[str, ...]]:
        """The table's columns, in one pass in memory order (not one pass per column); those of the
        groups left out are not extracted (empty)."""
        skipped = {n for cls in ALL_GROUPS if cls not in groups for n, _ in parsers(cls)}
        skipped -= {n for n, _ in parsers(Identity)}
        keep = [i for i in range(self.width) if self._names[i] not in skipped]
        if len(keep) == self.width:
            return list(zip(*table, strict=False))
        columns: list[tuple[str, ...]] = [()] * self.width
        picked = zip(*map(operator.itemgetter(*keep), table), strict=True) if keep else ()
        for i, column in zip(keep, picked, strict=True):
            columns[i] = column
        return columns

    def rows(
        self,
        table: list[list[str]],
        series: dict[str, Series] | None = None,
        groups: tuple[type, ...] = ALL_GROUPS,
    ) -> list[Row]:
        """Every row of cells (a short row reads as empty cells at its end), typed again, with its
        case's raw series where `series` has them. A reader that needs only some groups names them:
        the others are left at their defaults, their columns never typed (compare reads 39 of a
        hundred columns)."""
        n, width = len(table), self.width
        if not n:
            return []
        padded = [r if len(r) >= width else r + [""] * (width - len(r)) for r in table]
        columns = self._columns(padded, groups)
        built = {
            cls: _build(cls, [self._column(columns, name) for name, _ in parsers(cls)], n)
            if cls in groups or cls is Identity
            else [cls() for _ in range(n)]
            for cls in ALL_GROUPS
        }
        params: list[OpParams] = [ReadParams({}) for _ in range(n)]
        extras: list[Any] = [None] * n
        by_op: dict[str, list[int]] = {}
        for k, identity in enumerate(built[Identity]):
            by_op.setdefault(identity.op, []).append(k)
        for op, at in by_op.items():
            own = columns if len(by_op) == 1 else list(zip(*(padded[k] for k in at), strict=False))
            typed = zip(
                at, self._params(op, own, len(at)), self._extras(op, own, len(at)), strict=True
            )
            for k, p, e in typed:
                params[k], extras[k] = p, e
        series = series or {}
        return [
            Row(
                params=params[k],
                extras=extras[k],
                series=series.get(identity.case_id) or Series(),
                **{GROUP_ATTRIBUTES[cls]: built[cls][k] for cls in ALL_GROUPS},
            )
            for k, identity in enumerate(built[Identity])
        ]
