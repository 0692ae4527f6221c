"""The one metric writer: CSV rows plus JSON lines with raw samples, appended whole as cases finish.

Also the atomic JSON writer used for every whole-file output (dashboard records, seed formats)."""

from __future__ import annotations

import csv
import errno
import fcntl
import glob
import io
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from microbench.errors import UserError
from microbench.measure.garbage import collector_off
from microbench.results.columns import IDENTITY, STATS, upgrade
from microbench.results.records import ALL_GROUPS, Row, Series
from microbench.results.row_reader import RowReader


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
    check_path_text(path, key)
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


MAX_PATH = 4096  # PATH_MAX on Linux


def check_path_text(path: str, key: str) -> None:
    """A path no system call would take (a NUL inside, longer than PATH_MAX): one line, not an OSError."""
    if "\0" in path:
        raise UserError("a path cannot contain a NUL character", key=f"{key} {path!r}")
    if len(path) > MAX_PATH:
        raise UserError(f"the path is longer than {MAX_PATH} characters", key=key)


def check_directory(path: str, key: str) -> None:
    """An output folder (traces, dumps, metrics) that can be made and written, checked before the first
    case: a folder under a file, or where this user cannot write, is refused in one line."""
    check_path_text(path, key)
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UserError("is a file, expected a folder", key=f"{key} '{path}'")
    ancestor = target
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"cannot create the folder: '{ancestor}' is a file", key=f"{key} '{path}'")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"the folder is not writable ('{ancestor}')", key=f"{key} '{path}'")


def holder_of(fd: int) -> str:
    """The process holding a flock on this open file, from /proc/locks (Linux), else 'another run'."""
    info = os.fstat(fd)
    target = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == target:
                    return f"process {fields[4]}"
    except OSError:
        pass
    return "another process"


def _open_no_follow(path: Path, create: bool) -> tuple[int, bool]:
    """The file opened for writing without following a link, and whether this call created it."""
    flags = os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags), False
    except FileNotFoundError:
        if not create:
            raise
    except OSError as error:
        raise UserError(_why(error, "a symbolic link"), key=_named(path)) from None
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:  # another run created it just now: open what is there
        return _open_no_follow(path, create=False)
    except OSError as error:  # a folder that passes access() and still refuses (/proc, /sys, NFS)
        raise UserError(f"cannot create it: {error.strerror}", key=_named(path)) from None


def _named(path: Path) -> str:
    """The key of an error about one of a results file's two files (the CSV or its twin)."""
    return f"{'csv_path' if path.suffix != '.jsonl' else 'csv_path .jsonl twin'} '{path}'"


def _why(error: OSError, link: str) -> str:
    if error.errno == errno.ELOOP:
        return f"is {link}; name the results file itself"
    return f"cannot open it: {error.strerror}"


class OutputFailed(UserError):
    """The run cannot write what it measured (a full disk, a vanished folder): it stops, in one line."""

    exit_code = 1
    strerror: str | None = None  # the system's reason, where a refused write gave one


def _refused(error: OSError, path: str) -> OutputFailed:
    failed = OutputFailed(f"cannot write it: {error.strerror}", file=path)
    failed.strerror = error.strerror
    return failed


class ResultFile:
    """One CSV and its .jsonl twin, held by one run at a time.

    The lock is the CSV itself (flock on its inode, opened without following links): a second spelling
    of the file (`./x.csv`, a hard link) finds it taken, and no lock file is left behind. A file this run
    created and never wrote a row to is removed when it closes. An existing file is never replaced
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
        self._written = False
        self._fds: dict[Path, int] = {}
        self._created: set[Path] = set()
        key = f"csv_path '{csv_path}'"
        if self.jsonl_path == self.csv_path:
            raise UserError(
                "the rows' file is a CSV; its JSON-lines twin takes the .jsonl name", key=key
            )
        existing = [p for p in (self.csv_path, self.jsonl_path) if _size(p) > 0]
        if existing and not resume and not overwrite:
            raise UserError(
                "the results file exists; continue it with --resume, replace it with --overwrite, "
                "or choose another path",
                key=key,
            )
        if resume and _size(self.jsonl_path) > 0 and _size(self.csv_path) == 0:
            raise UserError(
                f"cannot resume: the CSV is missing but {self.jsonl_path.name} holds rows; restore "
                "the CSV or move the .jsonl away",
                key=key,
            )

        try:
            self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UserError(f"cannot create its folder: {error.strerror}", key=key) from None
        try:
            for path in (self.csv_path, self.jsonl_path):
                fd, created = _open_no_follow(path, create=True)
                self._fds[path] = fd
                if created:
                    self._created.add(path)
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise UserError(
                        "not a regular file (a FIFO, device or folder)", key=_named(path)
                    )
            try:
                fcntl.flock(self._fds[self.csv_path], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = holder_of(self._fds[self.csv_path])
                raise UserError(
                    f"in use by another run ({holder}); wait for it or choose another path", key=key
                ) from None
            if resume and _size(self.csv_path) > 0:
                self._load_existing()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the file (the OS releases the lock if the process dies); a file this run created
        and never wrote to is removed, so a run that stopped before its first row leaves nothing."""
        for path, fd in self._fds.items():
            if path in self._created and not self._written and os.fstat(fd).st_size == 0:
                path.unlink(missing_ok=True)
            os.close(fd)
        self._fds = {}

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
            with open(self.csv_path, newline="", encoding="utf-8") as f:
                if not f.readline():  # empty, or cut inside its header: nothing was finished
                    return
                f.seek(0)
                self._read_done(csv.DictReader(f))
            if self.done and _size(self.jsonl_path) == 0:
                raise UserError(
                    f"cannot resume: {self.jsonl_path.name}, the raw samples of the rows in "
                    f"{self.csv_path.name}, is missing; restore it, or resume into a new file",
                    key=f"--resume '{self.csv_path}'",
                )
        except (UnicodeDecodeError, csv.Error) as error:
            raise UserError(
                f"cannot resume: the file is not a readable CSV ({type(error).__name__})",
                key=f"--resume '{self.csv_path}'",
            ) from None
        self._repair_jsonl()
        self._opened = True  # append to what is there

    def _read_done(self, reader: csv.DictReader) -> None:
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

    def _repair_jsonl(self) -> None:
        """Keep one JSON line per finished case: a run killed between its two writes leaves a JSON line
        whose CSV row is missing (the case runs again) or a line twice; the CSV is the record of what
        finished. Rewritten in place, through the file this run holds (never a path a link could
        redirect), and never emptied first: the usual repair (a torn last line) only cuts the end, and
        any other overwrites the start before cutting, so a kill or a full disk midway loses no line."""
        fd = self._fds[self.jsonl_path]
        os.lseek(fd, 0, os.SEEK_SET)
        text = _read_all(fd)
        kept: list[bytes] = []
        seen: set[str] = set()
        for line in text.splitlines():
            try:
                case_id = json.loads(line).get("case_id")
            except (ValueError, AttributeError):  # cut, not JSON, or not UTF-8
                continue
            if case_id in self.done and case_id not in seen:
                seen.add(case_id)
                kept.append(line)
        repaired = b"".join(line + b"\n" for line in kept)
        if repaired == text:
            return
        if not text.startswith(repaired):
            os.pwrite(fd, repaired, 0)  # no longer than what is there: it needs no new space
        os.ftruncate(fd, len(repaired))
        os.fsync(fd)

    def _open(self) -> None:
        """The first row: the header written (any earlier content replaced: --overwrite)."""
        for path in (self.csv_path, self.jsonl_path):
            os.ftruncate(self._fds[path], 0)
        self._write(self.csv_path, self._line(self.columns))
        self._opened = True

    def _write(self, path: Path, text: str) -> None:
        """Append whole and flush to disk; a write the disk refuses stops the run, in one line."""
        fd = self._fds[path]
        data = text.encode()
        try:
            os.lseek(fd, 0, os.SEEK_END)
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        except OSError as error:
            raise OutputFailed(
                f"cannot write results: {error.strerror}; the rows before this case are saved",
                key=f"csv_path '{path}'",
            ) from None
        self._written = True
        if not _still_at(fd, path):  # rows written to a file nobody can find are lost rows
            raise OutputFailed(
                "the results file was removed or replaced while this run wrote it, so its rows are "
                "not on disk under this name; rerun (with -o to a folder nothing cleans)",
                key=f"csv_path '{path}'",
            )

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
        self._write(self.jsonl_path, blob)
        self._write(self.csv_path, line)
        self.done.add(record["case_id"])


def _still_at(fd: int, path: Path) -> bool:
    """Whether the file this run writes through `fd` is still the one at `path`."""
    held = os.fstat(fd)
    try:
        there = path.lstat()
    except OSError:
        return False
    return held.st_nlink > 0 and (there.st_ino, there.st_dev) == (held.st_ino, held.st_dev)


def _size(path: Path) -> int:
    """A file's size without following a link (a link counts as existing)."""
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


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
    except (UnicodeDecodeError, csv.Error) as error:
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
        elif any(c in ref for c in "*?["):
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
    """A JSON line's case and per-iteration samples only: what compare's rank test needs, decoded in
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


def check_new_file(path: str, key: str, overwrite: bool) -> None:
    """A whole-file output (JSON records) follows the rows' rule: an existing file is replaced only
    with --overwrite, and never when it is a link, a device or anything but a regular file."""
    check_writable(path, key=key)
    target = Path(path)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise UserError("exists and is not a regular file; name a new file", key=f"{key} '{path}'")
    if target.exists() and not overwrite:
        raise UserError(
            "exists; replace it with --overwrite or choose another path", key=f"{key} '{path}'"
        )


def write_atomically(path: str, write: Callable[[IO[Any]], object], binary: bool = False) -> None:
    """Whole or nothing: written to a temporary name in the same directory, then renamed (with the
    permissions a new file gets here, not the temporary file's owner-only ones). A link planted at the
    path is refused, never written through nor replaced. A disk that is full or a folder that refuses
    is OutputFailed, in one line; the file before it is left as it was."""
    if os.path.islink(path):
        raise OutputFailed(
            "is a symbolic link: refused (an output is never written through one)", file=path
        )
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=Path(path).suffix)
    except OSError as error:
        raise _refused(error, path) from None
    try:
        opened = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", newline="", encoding="utf-8")
        with opened as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as error:
        os.unlink(tmp)
        raise _refused(error, path) from None
    except BaseException:
        os.unlink(tmp)
        raise


def write_json_atomically(path: str, data: Any) -> None:
    write_atomically(path, lambda f: json.dump(data, f, indent=2))
