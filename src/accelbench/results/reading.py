"""Results read back: a results CSV's cells in today's column names and units (`read_records`), its
rows typed again (`read_rows`, through row_reader), its JSON-lines series (`read_series`), and which
files a user's arguments name (`expand_results`: files, folders of them, shell patterns)."""

from __future__ import annotations

import csv
import glob
import itertools
import json
import os
import stat
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from accelbench.errors import UserError, visible
from accelbench.measure.garbage import collector_off
from accelbench.results.columns import IDENTITY, STATS, upgrade
from accelbench.results.records import ALL_GROUPS, Row, Series
from accelbench.results.row_reader import RowReader

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
    """A results CSV's header and rows of cells, in today's column names and units whichever version
    wrote them; anything that is not a results file of this harness is a one-line UserError."""
    check_readable(csv_path)
    csv.field_size_limit(MAX_CELL)
    try:
        with open(csv_path, newline="", encoding="utf-8-sig") as f:  # a BOM from a spreadsheet
            reader = csv.reader(f)
            header = next(reader, [])
            rows = list(reader)
    except UnicodeDecodeError:
        raise UserError(
            f"not UTF-8 text (byte {_first_bad_byte(csv_path)}): a results file is a UTF-8 CSV",
            file=csv_path,
        ) from None
    except csv.Error as error:
        raise UserError(f"cannot read results: {type(error).__name__}", file=csv_path) from None
    except OSError as error:
        raise UserError(f"cannot read results: {error.strerror}", file=csv_path) from None
    if len(set(header)) != len(header):
        twice = sorted({c for c in header if header.count(c) > 1})
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


def _first_bad_byte(path: str) -> int:
    """Where a file stops being UTF-8 (the text reader's error counts from its buffer, not the file)."""
    with open(path, "rb") as f:
        try:
            f.read().decode("utf-8")
        except UnicodeDecodeError as error:
            return error.start
    return 0


REQUIRED = ("case_id", "status", "op", "backend", "time_median_s")


def _is_results_file(path: Path) -> bool:
    """A regular CSV whose header has this harness's required columns (a jax-bench summary.csv or a
    torchao runner CSV beside it is not one)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader([f.readline()]), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return all(c in header for c in REQUIRED)


def expand_results(refs: Sequence[str], key: str) -> list[str]:
    """Results files from what a command line names: files, folders (every results CSV in them) and
    shell patterns (`runs/*/r.csv`). A folder or pattern that holds none is a one-line error."""
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


def param_names(header: Sequence[str]) -> list[str]:
    """The parameter columns: the writer puts them between the identity and statistics blocks (a file
    written before an identity column existed lacks it)."""
    start = 1 + max((i for i, name in enumerate(header) if name in IDENTITY), default=-1)
    end = header.index(STATS[0]) if STATS[0] in header else len(header)
    return list(header[start:end])


@dataclass(slots=True)
class SeriesLine(Series):
    """What `read_series` decodes of a JSON line: its case and series, the row's copy skipped unread."""

    case_id: str = ""


@dataclass(slots=True)
class SamplesLine:
    """A JSON line's case and per-iteration samples only: what compare's intervals need, decoded in
    half the time of the whole series."""

    case_id: str = ""
    samples_s: list[float] = field(default_factory=list)


SeriesPart = Literal["all", "samples"]
_DECODERS: dict[SeriesPart, msgspec.json.Decoder[Any]] = {
    "all": msgspec.json.Decoder(SeriesLine),
    "samples": msgspec.json.Decoder(SamplesLine),
}


def read_series(csv_path: str, part: SeriesPart = "all") -> dict[str, Series]:
    """Each case's raw series from the CSV's .jsonl twin ({} when there is none); a cut or foreign
    line leaves its case without series (compare falls back to percentiles)."""
    jsonl = Path(csv_path).with_suffix(".jsonl")
    if not jsonl.is_file():
        return {}
    decoder = _DECODERS[part]
    out: dict[str, Series] = {}
    with open(jsonl, "rb") as f:
        for line in f:
            try:
                decoded = decoder.decode(line)
                series = decoded if part == "all" else Series(samples_s=decoded.samples_s)
                out[decoded.case_id] = series.checked()
                continue
            except msgspec.MsgspecError:  # a foreign value, NaN spelt out, a cut line: the slow way
                pass
            try:
                record = json.loads(line)
            except ValueError:  # a cut line (a killed run) or not JSON at all
                continue
            if isinstance(record, dict) and "case_id" in record:
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
    """A results file's rows, typed again (`series`: with their raw series from the JSON lines, all
    of it or the samples only; `groups`: the row groups a reader needs, the others at defaults)."""
    # no cyclic collection while the rows are built (they hold no cycles): a collector walking the
    # million new row objects again and again doubled the time of a 100k-row read
    with collector_off():
        header, rows = read_records(csv_path)
        by_case = read_series(csv_path, series) if series else {}
        return RowReader(header, param_names(header)).rows(rows, by_case, groups)


def read_many(paths: Sequence[str], groups: tuple[type, ...] = ALL_GROUPS) -> list[list[Row]]:
    """Many results files' rows (without series), a list per file: the files of one header are
    typed in one pass (a history of 2,000 one-row runs read them 2,000 times over before)."""
    with collector_off():
        read = [read_records(path) for path in paths]
        out: list[list[Row]] = [[] for _ in paths]
        by_header: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, (names, _) in enumerate(read):
            by_header[tuple(names)].append(i)
        for header, files in by_header.items():
            reader = RowReader(list(header), param_names(header))
            rows = iter(reader.rows([cells for i in files for cells in read[i][1]], groups=groups))
            for i in files:
                out[i] = list(itertools.islice(rows, len(read[i][1])))
        return out
