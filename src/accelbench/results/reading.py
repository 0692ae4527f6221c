"""Results read back: a results CSV's cells in today's names, its rows typed again a column at a time
(each column typed in one pass, so 100k rows read in seconds), its JSON-lines series, and which files a
command line names."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import glob
import io
import itertools
import json
import math
import operator
import os
import stat
import sys
import typing
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec

from accelbench.catalogue import OpParams, ReadParams, all_specs, get_spec
from accelbench.errors import Status, UserError, visible
from accelbench.measure.garbage import collector_off
from accelbench.results.columns import IDENTITY, STATS, upgrade
from accelbench.results.records import ALL_GROUPS, GROUP_ATTRIBUTES, Identity, Row, Series

MAX_CELL = 1 << 24  # a cell may hold a long kernel list or error; 16 MiB is no results file's


def check_readable(path: str) -> None:
    """A regular file, or a one-line error: a FIFO or a device would block or never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError("results file not found", file=path) from None
    except OSError as error:
        raise UserError(f"cannot read results: {error.strerror}", file=path) from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError("not a regular file (a directory, FIFO or device)", file=path)


def read_records(csv_path: str) -> tuple[list[str], list[list[str]]]:
    """A results CSV's header and rows of cells in today's names and units, whichever version wrote it."""
    check_readable(csv_path)
    csv.field_size_limit(MAX_CELL)
    try:
        with open(csv_path, "rb") as f:
            text = f.read().decode("utf-8").removeprefix("\ufeff")  # a BOM from a spreadsheet
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, [])
        rows = list(reader)
    except UnicodeDecodeError as error:
        raise UserError(
            f"not UTF-8 text (byte {error.start}): a results file is a UTF-8 CSV",
            file=csv_path,
        ) from None
    except csv.Error as error:
        raise UserError(f"cannot read results: {type(error).__name__}", file=csv_path) from None
    except OSError as error:
        raise UserError(f"cannot read results: {error.strerror}", file=csv_path) from None
    if twice := sorted(c for c, k in Counter(header).items() if k > 1):
        raise UserError(f"column {twice[0]!r} appears twice in the header", file=csv_path)
    torn = next((i for i, cells in enumerate(rows) if len(cells) != len(header)), None)
    if torn is not None:  # a cut copy or a hand edit: its cells would land in the wrong columns
        raise UserError(
            f"line {torn + 2} has {len(rows[torn])} cells under {len(header)} columns: "
            "not a whole results file",
            file=csv_path,
        )
    names = list(upgrade(dict.fromkeys(header, "")))
    missing = [c for c in REQUIRED if c not in names]
    if header and missing:
        raise UserError(
            f"not a results file of this harness (no column {', '.join(missing)})", file=csv_path
        )
    if names != header:  # an earlier vintage: renamed and rescaled row by row
        upgraded = (upgrade(dict(zip(header, cells, strict=False))) for cells in rows)
        rows = [[record.get(name, "") for name in names] for record in upgraded]
    return names, rows


REQUIRED = ("case_id", "status", "op", "backend", "time_median_s")


def _is_results_file(path: Path) -> bool:
    """A CSV with this harness's required columns (not a jax-bench summary.csv beside it)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader([f.readline()]), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return all(c in header for c in REQUIRED)


def expand_results(refs: Sequence[str], key: str) -> list[str]:
    """Results files from what a command line names: files, folders of them and shell patterns."""
    found: list[str] = []
    for ref in refs:
        if os.path.isdir(ref):
            candidates = sorted(Path(ref).glob("*.csv"))
        elif any(c in ref for c in "*?[") and not os.path.lexists(ref):  # a name is never a pattern
            candidates = sorted(Path(p) for p in glob.glob(ref, recursive=True))
        else:
            found.append(ref)
            continue
        matched = [str(p) for p in candidates if p.is_file() and _is_results_file(p)]
        if not matched:
            raise UserError("holds no results file of this harness", key=f"{key} '{ref}'")
        found.extend(matched)
    return list(dict.fromkeys(found))


_BOOLS = {"true": True, "false": False, "True": True, "False": False}
_STATUSES = {s.value: s for s in Status}  # a dict: Enum() costs 20 µs a cell


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # a hand-edited or foreign cell is no number, never a traceback


def _int(text: str) -> int | None:
    value = _float(text)
    return int(value) if value is not None and math.isfinite(value) and value.is_integer() else None


class CellType(NamedTuple):
    """A cell of one field type read back (`_cell` reversed): `fast` raises on a foreign cell, `careful`
    reads it as None; `blank`: an empty cell, if not the field's default."""

    fast: Callable[[str], Any]
    careful: Callable[[str], Any]
    blank: Any = None


TEXT = CellType(str, str)
CELL_TYPES: dict[type, CellType] = {
    # a status this version does not know, or none, gave no clean number
    Status: CellType(_STATUSES.__getitem__, lambda t: _STATUSES.get(t, Status.ERROR), Status.ERROR),
    bool: CellType(_BOOLS.__getitem__, _BOOLS.get),
    int: CellType(int, _int),
    float: CellType(float, _float),
}


def _cell_type(annotation: Any) -> CellType:
    kinds = set(typing.get_args(annotation)) or {annotation}
    return next((CELL_TYPES[k] for k in CELL_TYPES if k in kinds), TEXT)  # bool before int


@functools.cache
def parsers(cls: type) -> tuple[tuple[str, CellType], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _cell_type(hints[f.name])) for f in fields(cls))


def _as_declared(op: str, params: dict[str, Any], undeclared: set[str]) -> OpParams:
    """A row's parameters as the op's typed class (its defaults for empty cells); a column the op does
    not declare, a parameter it needs and lacks, or an op this version does not know leaves a dict."""
    if undeclared & params.keys():
        return ReadParams(params)
    try:
        return get_spec(op).made(params)
    except (TypeError, UserError):
        return ReadParams(params)


def _typed(cells: Sequence[str], kind: CellType, blank: Any) -> Sequence[Any]:
    """One column typed, the careful way cell by cell only where a cell is foreign."""
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
    """n instances of a row group from its fields' columns (None: a column the file lacks)."""
    values: list[Iterable[Any]] = []
    for f, (_, kind), cells in zip(fields(cls), parsers(cls), columns, strict=True):
        default = None if f.default is dataclasses.MISSING else f.default
        blank = default if kind.blank is None else kind.blank
        values.append(itertools.repeat(blank, n) if cells is None else _typed(cells, kind, blank))
    return [cls(*args) for args in zip(*values, strict=True)]


Columns = dict[str, Sequence[str]]  # a table's cells by column name


class RowReader:
    """How the rows of one file become typed rows; the op's parameters and extras are read per op."""

    def __init__(self, header: list[str]) -> None:
        self._names = header
        # the parameters: between the identity and statistics blocks
        start = 1 + max((i for i, name in enumerate(header) if name in IDENTITY), default=-1)
        end = header.index(STATS[0]) if STATS[0] in header else len(header)
        self._param_names = header[start:end]

    def _params(self, op: str, columns: Columns, n: int) -> list[OpParams]:
        """The op's parameters as its typed class (a value its kind does not take: a dict, text kept)."""
        spec = all_specs().get(op)  # each parameter read back as its declaration types it
        types = {p.name: CELL_TYPES.get(p.python_type, TEXT) for p in spec.params} if spec else {}
        read = []  # each parameter's name, its values typed and its cells' text
        for name in self._param_names:
            texts = columns[name]
            read.append((name, _typed(texts, types.get(name, TEXT), None), texts))
        undeclared = {name for name in self._param_names if name not in types}
        out: list[OpParams] = []
        for i in range(n):
            cells = [(name, values[i], texts[i]) for name, values, texts in read]
            # empty: no entry; a value its kind does not take: its text, and the row stays a dict
            params = {
                name: text if v is None else v for name, v, text in cells if v is not None or text
            }
            foreign = any(v is None and text for _, v, text in cells)
            out.append(ReadParams(params) if foreign else _as_declared(op, params, undeclared))
        return out

    def _extras(self, op: str, columns: Columns, n: int) -> list[Any]:
        """The op's extras, None where a row has no extras cell (a failed case) or the op is unknown."""
        cls = spec.row_extras if (spec := all_specs().get(op)) else None
        own = [columns.get(name) for name, _ in parsers(cls)] if cls else []
        present = [c for c in own if c is not None]
        if not present:
            return [None] * n
        built = _build(typing.cast(type, cls), own, n)
        return [
            e if any(row) else None
            for e, row in zip(built, zip(*present, strict=True), strict=True)
        ]

    def _columns(self, table: list[list[str]], groups: tuple[type, ...]) -> Columns:
        """The table's columns by name, in one pass in memory order, less the groups' left out."""
        skipped = {n for cls in ALL_GROUPS if cls not in groups for n, _ in parsers(cls)}
        skipped -= {n for n, _ in parsers(Identity)}
        keep = [i for i, name in enumerate(self._names) if name not in skipped]
        picked = zip(*map(operator.itemgetter(*keep), table), strict=True) if keep else ()
        return {self._names[i]: column for i, column in zip(keep, picked, strict=True)}

    def rows(self, table: list[list[str]], groups: tuple[type, ...] = ALL_GROUPS) -> list[Row]:
        """Every row of cells typed again; `groups`: those a reader needs, the others left at their
        defaults, never typed (compare reads 39 of a hundred columns)."""
        n = len(table)  # every row as wide as the header (read_records refuses a torn one)
        if not n:
            return []
        columns = self._columns(table, groups)
        built = {
            cls: _build(cls, [columns.get(name) for name, _ in parsers(cls)], n)
            if cls in groups or cls is Identity
            else [cls() for _ in range(n)]
            for cls in ALL_GROUPS
        }
        by_op: dict[str, list[int]] = {}
        for k, identity in enumerate(built[Identity]):
            by_op.setdefault(identity.op, []).append(k)
        typed: dict[int, tuple[OpParams, Any]] = {}  # each row's parameters and extras
        for op, at in by_op.items():
            own = columns if len(by_op) == 1 else self._columns([table[k] for k in at], groups)
            read = zip(self._params(op, own, len(at)), self._extras(op, own, len(at)), strict=True)
            typed.update(zip(at, read, strict=True))
        return [
            Row(
                params=typed[k][0],
                extras=typed[k][1],
                **{GROUP_ATTRIBUTES[cls]: built[cls][k] for cls in ALL_GROUPS},
            )
            for k in range(n)
        ]


@dataclass(slots=True)
class SeriesLine(Series):
    """What `read_series` decodes of a JSON line: its case and series, the row's copy skipped unread."""

    case_id: str = ""


@dataclass(slots=True)
class SamplesLine:
    """A JSON line's case and samples only: compare's intervals, decoded in half the time."""

    case_id: str = ""
    samples_s: list[float] = field(default_factory=list)


SeriesPart = Literal["all", "samples"]
_DECODERS: dict[SeriesPart, msgspec.json.Decoder[Any]] = {
    "all": msgspec.json.Decoder(SeriesLine),
    "samples": msgspec.json.Decoder(SamplesLine),
}


def read_series(csv_path: str, part: SeriesPart = "all") -> dict[str, Series]:
    """Each case's raw series from the CSV's .jsonl twin; a cut or foreign line leaves its case none."""
    jsonl = Path(csv_path).with_suffix(".jsonl")
    if not jsonl.is_file():
        return {}
    decoder = _DECODERS[part]
    out: dict[str, Series] = {}
    with open(jsonl, "rb") as f:
        for line in f:
            # a foreign value, NaN spelt out, a cut line: the slow way
            with contextlib.suppress(msgspec.MsgspecError):
                decoded = decoder.decode(line)
                series = decoded if part == "all" else Series(samples_s=decoded.samples_s)
                out[decoded.case_id] = series.checked()
                continue
            # a cut line (a killed run), not JSON at all, or a number no float holds
            with contextlib.suppress(ValueError, OverflowError):
                if isinstance(record := json.loads(line), dict) and "case_id" in record:
                    out[str(record["case_id"])] = Series.from_json(record)
    # no line of it a series: not a cut last line (a killed run) but a foreign file
    if not out and jsonl.stat().st_size:
        print(
            visible(f"warning: {jsonl}: holds no series; ignored (percentiles stand in)"),
            file=sys.stderr,
        )
    return out


def read_rows(
    csv_path: str, series: SeriesPart | None = None, groups: tuple[type, ...] = ALL_GROUPS
) -> list[Row]:
    """A results file's rows typed again, with their series (all, or the samples only) if asked."""
    return read_many([csv_path], groups, series)[0]


def read_many(
    paths: Sequence[str], groups: tuple[type, ...] = ALL_GROUPS, series: SeriesPart | None = None
) -> list[list[Row]]:
    """Many results files' rows, a list per file: the files of one header typed in one pass."""
    # no cyclic collection while the rows are built (they hold no cycles): a collector walking the
    # million new row objects again and again doubled the time of a 100k-row read
    with collector_off():
        read = [read_records(path) for path in paths]
        out: list[list[Row]] = [[] for _ in paths]
        by_header: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, (names, _) in enumerate(read):
            by_header[tuple(names)].append(i)
        for header, files in by_header.items():
            reader = RowReader(list(header))
            rows = iter(reader.rows([cells for i in files for cells in read[i][1]], groups))
            for i in files:
                out[i] = list(itertools.islice(rows, len(read[i][1])))
        for path, found in zip(paths, out, strict=True):
            by_case = read_series(path, series) if series else {}
            for row in found:
                row.series = by_case.get(row.identity.case_id) or row.series
        return out
