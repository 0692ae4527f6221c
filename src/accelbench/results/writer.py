"""The one metric writer (CSV rows and JSON-lines samples, appended whole) and the atomic file writer."""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import io
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from accelbench.errors import UserError, visible
from accelbench.names import check_path_text
from accelbench.results.columns import header
from accelbench.results.records import Row, setting_columns


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


# what a refusal says of an output file's path, and of a folder's: the wrong kind, the place to make
REFUSED = {
    False: (
        "output path is a directory, expected a file",
        "the output directory",
        "output location",
    ),
    True: ("is a file, expected a folder", "the folder", "the folder"),
}


def check_writable(path: str, key: str = "csv_path", folder: bool = False) -> None:
    """Refuse, before anything runs, an output file (or `folder`: traces, dumps, metrics) that cannot
    be made and written."""
    check_path_text(path, key)
    target, where = Path(path), f"{key} '{path}'"
    wrong, made, place = REFUSED[folder]
    if target.exists() and target.is_dir() != folder:
        raise UserError(wrong, key=where)
    start = target if folder else target.parent
    ancestor = next(p for p in (start, *start.parents) if p.exists())  # the nearest that exists
    if not ancestor.is_dir():
        raise UserError(f"cannot create {made}: '{ancestor}' is a file", key=where)
    if not os.access(ancestor, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        raise UserError(f"{place} is not writable ('{ancestor}')", key=where)


def holder_of(fd: int) -> str:
    """The process holding a flock on this open file, from /proc/locks (Linux), else 'another run'."""
    info = os.fstat(fd)
    target = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    with contextlib.suppress(OSError), open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == target:
                return f"process {fields[4]}"
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
        why = f"cannot open it: {error.strerror}"
        if error.errno == errno.ELOOP:
            why = "is a symbolic link; name the results file itself"
        raise UserError(why, key=_named(path)) from None
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:  # another run created it just now: open what is there
        return _open_no_follow(path, create=False)
    except OSError as error:  # a folder that passes access() and still refuses (/proc, /sys, NFS)
        raise UserError(f"cannot create it: {error.strerror}", key=_named(path)) from None


def _named(path: Path) -> str:
    """The key of an error about one of a results file's two files (the CSV or its twin)."""
    return f"{'csv_path' if path.suffix != '.jsonl' else 'csv_path .jsonl twin'} '{path}'"


class OutputFailed(UserError):
    """The run cannot write what it measured (a full disk, a vanished folder): it stops, in one line."""

    exit_code = 1
    strerror: str | None = None  # the system's reason, where a refused write gave one

    @classmethod
    def refused(cls, error: OSError, path: str) -> OutputFailed:
        failed = cls(f"cannot write it: {error.strerror}", file=path)
        failed.strerror = error.strerror
        return failed


UNREADABLE = "the file is not a readable CSV"


class ResultFile:
    """One CSV and its .jsonl twin, held by one run at a time. The lock is a flock on the CSV's inode
    (opened without following links): another spelling of the file finds it taken, no lock file left."""

    def __init__(
        self,
        csv_path: str,
        columns: Sequence[str],
        config_id: str,
        resume: bool,
        overwrite: bool = False,
        asked: Mapping[tuple[str, str], set[Any]] | None = None,
    ) -> None:
        self.csv_path = Path(csv_path)
        # (benchmark, setting column) -> the values this run takes it with: a resumed row must agree
        self.asked = {at: {_cell(v) for v in values} for at, values in (asked or {}).items()}
        self.jsonl_path = self.csv_path.with_suffix(".jsonl")
        self.columns = list(columns)
        self.config_id = config_id
        self.done: set[str] = set()
        self._opened = False
        self._written = False
        self._fds: dict[Path, int] = {}
        self._created: set[Path] = set()
        key = f"csv_path '{csv_path}'"
        self._check_paths(key, resume, overwrite)
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
        """A run that stopped before its first row leaves no file it created."""
        for path, fd in self._fds.items():
            if path in self._created and not self._written and os.fstat(fd).st_size == 0:
                path.unlink(missing_ok=True)
            os.close(fd)
        self._fds = {}

    def _check_paths(self, key: str, resume: bool, overwrite: bool) -> None:
        if self.jsonl_path == self.csv_path:
            raise UserError(
                "the rows' file is a CSV; its JSON-lines twin takes the .jsonl name", key=key
            )
        pair = (self.csv_path, self.jsonl_path)
        if link := next((p for p in pair if p.is_symlink()), None):
            raise UserError(
                f"{link.name} is a symbolic link: refused (results are never written through one); "
                "choose another path",
                key=key,
            )
        existing = [p for p in pair if _size(p) > 0]
        if existing and not resume and not overwrite:
            which = existing[0].name if existing[0] != self.csv_path else "the results file"
            raise UserError(
                f"{which} exists; continue it with --resume, replace it with --overwrite, "
                "or choose another path",
                key=key,
            )
        if resume and _size(self.jsonl_path) > 0 and _size(self.csv_path) == 0:
            raise UserError(
                f"cannot resume: the CSV is missing but {self.jsonl_path.name} holds rows; restore "
                "the CSV or move the .jsonl away",
                key=key,
            )

    def _refused(self, why: str, path: Path | None = None) -> UserError:
        """Why the file cannot be resumed, keyed by the file (the CSV unless another is named)."""
        return UserError(f"cannot resume: {why}", key=f"--resume '{path or self.csv_path}'")

    def _load_existing(self) -> None:
        whole = {path: _read_all(fd) for path, fd in self._fds.items()}
        for path, data in whole.items():  # junk is refused before anything is cut
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                raise self._refused(f"{UNREADABLE} (UnicodeDecodeError)", path) from None
        # a killed writer can leave a line without its newline: cut, once every check has passed
        cut = {path: data[: data.rfind(b"\n") + 1] for path, data in whole.items()}
        text = cut[self.csv_path].decode("utf-8")
        kept = None  # stays None where the CSV is empty or cut inside its header: nothing finished
        if text:
            try:
                self._read_done(csv.DictReader(io.StringIO(text, newline="")))
            except csv.Error as error:
                raise self._refused(f"{UNREADABLE} ({type(error).__name__})") from None
            if self.done and _size(self.jsonl_path) == 0:
                raise self._refused(
                    f"{self.jsonl_path.name}, the raw samples of the rows in "
                    f"{self.csv_path.name}, is missing; restore it, or resume into a new file"
                )
            kept = self._kept_lines(cut[self.jsonl_path])
        for path, data in cut.items():
            if len(data) < len(whole[path]):
                os.ftruncate(self._fds[path], len(data))
        if kept is not None:
            self._repair_jsonl(cut[self.jsonl_path], kept)
            self._opened = True  # append to what is there

    def _read_done(self, reader: csv.DictReader) -> None:
        if reader.fieldnames and list(reader.fieldnames) != self.columns:
            raise self._refused(
                "this results file has different columns, so it was written by a different config "
                "or an earlier version; choose a new output path or drop --resume"
            )
        for row in reader:
            if row.get("config_id") and row["config_id"] != self.config_id:
                raise self._refused(
                    f"this results file was written by a different config "
                    f"(config_id {row['config_id']}, this config {self.config_id})"
                )
            self._check_settings(row)
            self.done.add(row["case_id"])

    def _check_settings(self, row: dict[str, str]) -> None:
        """A row of other run settings is another case: resuming would measure every case again."""
        for (benchmark, column), cells in self.asked.items():
            if row.get("benchmark") == benchmark and row.get(column, "") not in cells:
                name, asked = setting_columns()[column].name, " or ".join(sorted(cells))
                raise self._refused(
                    f"its rows of '{benchmark}' were taken with {name} "
                    f"{row[column] or 'unset'}, this run asks {asked or 'unset'}; "
                    "resume with the settings it started with, or write a new file"
                )

    def _kept_lines(self, text: bytes) -> dict[str, bytes]:
        """Each finished case's first JSON line; a row without one is refused (the line is written
        first, so no kill leaves one: a cut or foreign line does)."""
        kept: dict[str, bytes] = {}
        for line in text.splitlines():  # a cut line, or one of no JSON object, is dropped
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                if (case_id := json.loads(line).get("case_id")) in self.done:
                    kept.setdefault(case_id, line + b"\n")
        if lost := len(self.done) - len(kept):
            raise self._refused(
                f"{self.jsonl_path.name} holds no raw samples for {lost} of the {len(self.done)} "
                f"rows in {self.csv_path.name} (a cut or foreign line); restore it, or resume "
                "into a new file"
            )
        return kept

    def _repair_jsonl(self, text: bytes, kept: dict[str, bytes]) -> None:
        """One JSON line per case the CSV finished (a kill between the two writes leaves one too many),
        rewritten in place through the held file and never emptied first, so no kill loses a line."""
        fd = self._fds[self.jsonl_path]
        repaired = b"".join(kept.values())
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
        try:
            os.lseek(fd, 0, os.SEEK_END)
            _write_all(fd, text.encode())
        except OSError as error:
            raise OutputFailed(
                f"cannot write results: {error.strerror}; the rows before this case are saved",
                key=f"csv_path '{path}'",
            ) from None
        self._written = True
        if not _still_at(fd, path):  # rows written to a file nobody can find are lost rows
            self._made_again(path)

    def _made_again(self, path: Path) -> None:
        """A file removed while this run wrote it, made again from the held copy (never over another)."""
        held = self._fds[path]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            raise OutputFailed(
                f"was removed or replaced while this run wrote it ({error.strerror}); its rows so "
                "far are lost with it: rerun into a folder nothing cleans",
                key=f"csv_path '{path}'",
            ) from None
        _write_all(fd, _read_all(held))
        if path == self.csv_path:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._fds[path] = fd
        os.close(held)
        print(
            visible(
                f"warning: {path} was removed while this run wrote it: made again, every row "
                "so far in it"
            ),
            file=sys.stderr,
        )

    @staticmethod
    def _line(values: Iterable[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([visible(v) for v in values])
        return buf.getvalue()

    def append(self, row: Row) -> None:
        """Write the row and its JSON line, each in a single write, flushed to disk."""
        if not self._opened:
            self._open()
        record = row.as_dict()
        if unknown := set(record) - set(self.columns):
            raise ValueError(f"row has columns the file's header lacks: {sorted(unknown)}")
        line = self._line(_cell(record.get(c)) for c in self.columns)
        blob = json.dumps(_json_safe({**record, **row.series.as_json()}), default=str) + "\n"
        self._write(self.jsonl_path, blob)
        self._write(self.csv_path, line)
        self.done.add(record["case_id"])


def write_rows(path: str, rows: Sequence[Row], config_id: str = "") -> None:
    """Rows measured apart from a run's sinks (`bench()`, `ab`'s rounds) as a new results file."""
    names = dict.fromkeys(p for r in rows for p in r.params.as_dict())
    extras = dict.fromkeys(type(r.extras) for r in rows if r.extras is not None)
    out = ResultFile(path, header(names, extras), config_id, resume=False)
    try:
        for row in rows:
            out.append(row)
    finally:
        out.close()


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


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)


def _read_all(fd: int) -> bytes:
    """The whole file behind `fd`, from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    with open(fd, "rb", closefd=False) as f:
        return f.read()


def check_new_file(path: str, key: str, overwrite: bool) -> None:
    """A whole-file output replaces an existing regular file only with --overwrite."""
    check_writable(path, key=key)
    target = Path(path)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise UserError("exists and is not a regular file; name a new file", key=f"{key} '{path}'")
    if target.exists() and not overwrite:
        raise UserError(
            "exists; replace it with --overwrite or choose another path", key=f"{key} '{path}'"
        )


def write_atomically(path: str, write: Callable[[IO[Any]], object], binary: bool = False) -> None:
    """Whole or nothing: a temporary file beside it renamed over it (with a new file's permissions, not
    mkstemp's owner-only ones); a planted link is refused, and a refused write leaves the old file."""
    if os.path.islink(path):
        raise OutputFailed(
            "is a symbolic link: refused (an output is never written through one)", file=path
        )
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=Path(path).suffix)
    except OSError as error:
        raise OutputFailed.refused(error, path) from None
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
        raise OutputFailed.refused(error, path) from None
    except BaseException:
        os.unlink(tmp)
        raise


def write_json_atomically(path: str, data: Any) -> None:
    write_atomically(path, lambda f: json.dump(data, f, indent=2))
