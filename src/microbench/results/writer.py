"""The one metric writer: CSV rows plus JSON lines with raw samples, appended whole as cases finish.

Also the atomic JSON writer used for every whole-file output (dashboard records, seed formats)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from microbench.errors import UserError
from microbench.results.columns import IDENTITY, STATS, upgrade
from microbench.results.records import Row, Series, row_from_record


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
            return str(int(value))  # counts (bytes, FLOPs) exactly: 134217728, not 1.34218e+08
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _drop_partial_last_line(path: Path) -> None:
    """A killed writer can leave a line without its newline; cut it so the file stays whole."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with open(path, "r+b") as f:
        f.truncate(cut)


def check_writable(path: str, key: str = "csv_path") -> None:
    """Refuse, before anything runs, an output path that cannot be written."""
    target = Path(path)
    if target.is_dir():
        raise UserError("output path is a directory, expected a file", key=f"{key} '{path}'")
    ancestor = target.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(
            f"cannot create the output directory: '{ancestor}' is a file", key=f"{key} '{path}'"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        raise UserError(f"output location is not writable ('{ancestor}')", key=f"{key} '{path}'")


class ResultFile:
    """One CSV (and its .jsonl twin), held by one run at a time (an exclusive lock beside it).

    Created on the first row, so a failed start leaves no CSV. An existing file is never replaced
    silently: it is continued with `resume` or replaced with `overwrite`, and refused otherwise.
    """

    def __init__(
        self,
        csv_path: str,
        columns: Sequence[str],
        config_id: str,
        resume: bool,
        overwrite: bool = False,
    ) -> None:
        self.csv_path = Path(csv_path)
        self.jsonl_path = self.csv_path.with_suffix(".jsonl")
        self.columns = list(columns)
        self.config_id = config_id
        self.done: set[str] = set()
        self._opened = False
        self._lock: int | None = None
        existing = [
            p for p in (self.csv_path, self.jsonl_path) if p.exists() and p.stat().st_size > 0
        ]
        if existing and not resume and not overwrite:
            raise UserError(
                "the results file exists; continue it with --resume, replace it with --overwrite, "
                "or choose another path",
                key=f"csv_path '{csv_path}'",
            )
        self._acquire()
        if resume and self.csv_path.exists():
            self._load_existing()

    def _acquire(self) -> None:
        """Refuse a file another run is writing (its process named), instead of interleaving rows."""
        lock_path = self.csv_path.with_name(self.csv_path.name + ".lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UserError(
                f"in use by another run (process {holder}); wait for it or choose another path",
                key=f"csv_path '{self.csv_path}'",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock = fd

    def close(self) -> None:
        """Release the lock (the lock file stays; a lock is released by the OS if the process dies)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _load_existing(self) -> None:
        for path in (self.csv_path, self.jsonl_path):  # junk is refused before anything is cut
            if path.exists():
                try:
                    path.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    raise UserError(
                        "cannot resume: the file is not a readable CSV (UnicodeDecodeError)",
                        key=f"--resume '{path}'",
                    ) from None
        _drop_partial_last_line(self.csv_path)
        _drop_partial_last_line(self.jsonl_path)
        try:
            with open(self.csv_path, newline="") as f:
                first = f.readline()
                if (
                    not first
                ):  # empty, or cut inside its header: nothing was finished, start it anew
                    return
                f.seek(0)
                reader = csv.DictReader(f)
                if reader.fieldnames and list(reader.fieldnames) != self.columns:
                    raise UserError(
                        "cannot resume: this results file has different columns, so it was written by a "
                        "different config or an earlier version; choose a new output path or drop --resume",
                        key=f"--resume '{self.csv_path}'",
                    )
                for row in reader:
                    if row.get("config_id") and row["config_id"] != self.config_id:
                        raise UserError(
                            f"cannot resume: this results file was written by a different config "
                            f"(config_id {row['config_id']}, this config {self.config_id})",
                            key=f"--resume '{self.csv_path}'",
                        )
                    self.done.add(row["case_id"])
        except (UnicodeDecodeError, csv.Error) as error:
            raise UserError(
                f"cannot resume: the file is not a readable CSV ({type(error).__name__})",
                key=f"--resume '{self.csv_path}'",
            ) from None
        self._repair_jsonl()
        self._opened = True  # append to what is there

    def _repair_jsonl(self) -> None:
        """Keep one JSON line per finished case: a run killed between its two writes leaves a JSON line
        whose CSV row is missing (the case runs again) or a line twice; the CSV is the record of what
        finished."""
        if not self.jsonl_path.exists():
            return
        kept: list[str] = []
        seen: set[str] = set()
        for line in self.jsonl_path.read_text().splitlines():
            try:
                case_id = json.loads(line).get("case_id")
            except (json.JSONDecodeError, AttributeError):
                continue
            if case_id in self.done and case_id not in seen:
                seen.add(case_id)
                kept.append(line)
        text = "".join(f"{line}\n" for line in kept)
        if text != self.jsonl_path.read_text():
            tmp = self.jsonl_path.with_name(self.jsonl_path.name + ".tmp")
            tmp.write_text(text)
            os.replace(tmp, self.jsonl_path)

    def _open(self) -> None:
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.csv_path, "w", newline="") as f:
            f.write(self._line(self.columns))
            f.flush()
            os.fsync(f.fileno())
        open(self.jsonl_path, "w").close()
        self._opened = True

    @staticmethod
    def _line(values: Iterable[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(list(values))
        return buf.getvalue()

    def append(self, row: Row) -> None:
        """Write the row and its JSON line, each in a single write, flushed to disk."""
        if not self._opened:
            self._open()
        record = row.as_dict()
        unknown = set(record) - set(self.columns)
        if unknown:
            raise ValueError(f"row has columns the file's header lacks: {sorted(unknown)}")
        line = self._line(_cell(record.get(c)) for c in self.columns)
        blob = json.dumps(_json_safe({**record, **row.series.as_json()}), default=str) + "\n"
        for path, text in ((self.jsonl_path, blob), (self.csv_path, line)):
            with open(path, "a", newline="") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        self.done.add(record["case_id"])


MAX_CELL = 1 << 24  # a cell may hold a long kernel list or error; 16 MiB is no results file's


def _readable(path: str) -> None:
    """A regular file, or a one-line error: a FIFO or a device would block or never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError("results file not found", file=path) from None
    except OSError as error:
        raise UserError(f"cannot read results: {error.strerror}", file=path) from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError("not a regular file (a directory, FIFO or device)", file=path)


def read_records(csv_path: str) -> tuple[list[str], list[dict[str, str]]]:
    """A results CSV's header and rows, in today's column names and units whichever version wrote
    them; anything that is not a results file of this harness is a one-line UserError."""
    _readable(csv_path)
    csv.field_size_limit(MAX_CELL)
    try:
        with open(csv_path, newline="", encoding="utf-8-sig") as f:  # a BOM from a spreadsheet
            reader = csv.reader(f)
            header = next(reader, [])
            raw = [dict(zip(header, cells, strict=False)) for cells in reader]
    except (UnicodeDecodeError, csv.Error) as error:
        raise UserError(f"cannot read results: {type(error).__name__}", file=csv_path) from None
    except OSError as error:
        raise UserError(f"cannot read results: {error.strerror}", file=csv_path) from None
    if len(set(header)) != len(header):
        twice = sorted({c for c in header if header.count(c) > 1})
        raise UserError(f"column {twice[0]!r} appears twice in the header", file=csv_path)
    names = list(upgrade(dict.fromkeys(header, "")))
    missing = [c for c in REQUIRED if c not in names]
    if header and missing:
        raise UserError(
            f"not a results file of this harness (no column {', '.join(missing)})", file=csv_path
        )
    return names, [upgrade(r) for r in raw]


REQUIRED = ("case_id", "status", "op", "backend", "time_median_s")


def param_names(header: Sequence[str]) -> list[str]:
    """The parameter columns: the writer puts them between the identity and statistics blocks."""
    start = len(IDENTITY)
    end = header.index(STATS[0]) if STATS[0] in header else len(header)
    return list(header[start:end])


def read_series(csv_path: str) -> dict[str, Series]:
    """Each case's raw series from the CSV's .jsonl twin ({} when there is none); a cut or foreign
    line leaves its case without series (compare falls back to percentiles)."""
    jsonl = Path(csv_path).with_suffix(".jsonl")
    if not jsonl.is_file():
        return {}
    out: dict[str, Series] = {}
    with open(jsonl, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "case_id" in record:
                out[str(record["case_id"])] = Series.from_json(record)
    return out


def read_rows(csv_path: str, series: bool = False) -> list[Row]:
    """A results file's rows, typed again (`series`: with their raw samples from the JSON lines)."""
    header, records = read_records(csv_path)
    params = param_names(header)
    by_case = read_series(csv_path) if series else {}
    return [row_from_record(r, params, by_case.get(r.get("case_id", ""))) for r in records]


def write_atomically(path: str, write: Callable[[IO[str]], None]) -> None:
    """Whole or nothing: written to a temporary name in the same directory, then renamed."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=Path(path).suffix)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json_atomically(path: str, data: Any) -> None:
    write_atomically(path, lambda f: json.dump(data, f, indent=2))
