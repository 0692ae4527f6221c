"""Runs that never collide nor replace one another (as pytest-benchmark's autosave): a config's
results file names a series `out.csv`, `out.2.csv`, ..., each run with its record `out.<n>.run.json`.
`--resume` continues the latest run, `--overwrite` replaces it; `-o FILE` and URLs are not numbered."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from accelbench.core.case import Case
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, visible
from accelbench.names import portable_name
from accelbench.platform.environment import checkout, run_environment, timestamp
from accelbench.results.remote import is_url
from accelbench.results.writer import check_writable, write_atomically

RECORD = ".run.json"
NUMBERED = re.compile(r"^(?P<stem>.+)\.(?P<n>[0-9]+)$")


def series_of(path: str) -> str:
    """The series a results file is a run of: its path as run 1 names it (`out.3.csv`: `out.csv`)."""
    p = Path(path)
    match = NUMBERED.match(p.stem)
    return str(p.with_name(match["stem"] + p.suffix)) if match else str(p)


def numbered(path: str, n: int) -> str:
    """The file of run n of a series: the series' own name for run 1, `<stem>.<n><suffix>` after."""
    if n <= 1:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{n}{p.suffix}"))


def record_path(path: str, n: int) -> str:
    p = Path(numbered(path, n))
    return str(p.with_name(p.stem + RECORD))


def runs_of(path: str) -> dict[int, str]:
    """The runs of a series that left a results file: number -> file."""
    p = Path(path)
    found = {1: path} if p.is_file() else {}
    if p.parent.is_dir():
        for candidate in p.parent.glob(f"{p.stem}.*{p.suffix}"):
            match = NUMBERED.match(candidate.stem)
            if match and match["stem"] == p.stem and candidate.is_file():
                found[int(match["n"])] = str(candidate)
    return dict(sorted(found.items()))


def _alive(record: Path) -> bool:
    """Whether the run that wrote this record may still be running (so its number is taken)."""
    claimed = read_record(record)
    if claimed is None or claimed.pid is None or claimed.host != socket.gethostname():
        return True  # unreadable, or another machine's: leave it alone
    try:
        os.kill(claimed.pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (or a pid no system has)
        return False
    except PermissionError:  # another user's process
        pass
    return True


@dataclass(frozen=True)
class Assigned:
    cases: list[Case]
    number: int  # 0: not numbered (an explicit -o file or URL outputs)
    record: str | None
    created: bool = False  # this run wrote the record (and removes it if the run never starts)
    made: tuple[str, ...] = ()  # folders this run created for it, deepest first

    def abandon(self) -> None:
        """The run was refused before its first case: leave nothing behind."""
        if self.created and self.record:
            Path(self.record).unlink(missing_ok=True)
        for folder in self.made:
            try:
                os.rmdir(folder)  # only while empty: a file put there since is kept
            except OSError:
                break


def _claim(series: list[str], n: int, run: dict[str, Any]) -> bool:
    """Create run n's record exclusively (two runs never share a number), taking over a record whose
    run died before writing a row; every path is checked first, so a refused run writes nothing."""
    target = record_path(series[0], n)
    body = {**run, "files": [numbered(p, n) for p in series]}
    for file in (*body["files"], target):
        check_writable(file)
    text = json.dumps(
        {**body, "pid": os.getpid(), "host": socket.gethostname()}, indent=1, default=str
    )
    try:  # the number is this run's once the empty record exists (read meanwhile: not abandoned)
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    except FileExistsError:
        if Path(numbered(series[0], n)).exists() or _alive(Path(target)):
            return False  # not abandoned
    except OSError as error:  # a folder the permission check passed that still refuses (/sys)
        raise UserError(f"cannot write the run's record: {error.strerror}", file=target) from None
    write_atomically(target, lambda f: print(text, file=f, end=""))
    return True


def assign(
    cases: list[Case],
    options: RunOptions,
    config_path: str,
    run_id: str,
    command_line: bool = False,
) -> Assigned:
    """The cases with their results files numbered for this run (`command_line`: a one-off run)."""
    series = sorted({c.outputs.csv_path for c in cases})
    if options.output or any(is_url(p) for p in series):
        return Assigned(cases, 0, None)
    # the latest run that left rows (a claimed number whose run died before its first row is free)
    latest = max((n for path in series for n in runs_of(path)), default=0)
    made = _missing_folders(record_path(series[0], 1))
    stem = Path(config_path).stem
    body = {
        "run_id": run_id,
        "name": options.name,
        "started": timestamp(),
        "config": None if command_line else config_key(config_path),
        "one_off": " ".join(options.one_off) if command_line else None,
        # the name as the user gave it, where the results' files carry its portable form
        "named_from": None if stem == portable_name(stem) else recordable(stem),
        "config_id": cases[0].config_id if cases else "",
        # a run of some of the config's cases (--only/--skip): compare then keeps to its cases
        "selection": {"only": list(options.only), "skip": list(options.skip)}
        if options.only or options.skip
        else None,
        "environment": run_environment(),
        # the code under test: the config's checkout, else the caller's (a one-off, bench())
        "tested": checkout(os.path.dirname(os.path.abspath(config_path)))
        if os.path.isfile(config_path)
        else checkout(os.getcwd()),
    }
    again = options.resume or options.overwrite  # the latest run's number; else the next free one
    number = max(latest, 1) if again else latest + 1
    while not (created := _claim(series, number, body)) and not again:
        number += 1
    out = [
        dataclasses.replace(
            c, outputs=dataclasses.replace(c.outputs, csv_path=numbered(c.outputs.csv_path, number))
        )
        for c in cases
    ]
    return Assigned(out, number, record_path(series[0], number), created, made)


def recordable(text: str) -> str:
    """Text as a record keeps it: a byte of a file name that is not UTF-8 spelt `\\udce9`, which JSON
    can hold (a lone surrogate makes the record unreadable) and a later run of the same file matches."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def config_key(path: str) -> str:
    """A config as the store keys its runs: its real path, so a link to a config (configs/quickstart.yaml
    links to the packaged copy) and the file itself are one config whose runs are one series."""
    return recordable(os.path.realpath(path))


def _missing_folders(path: str) -> tuple[str, ...]:
    """The folders above `path` that do not exist yet, deepest first."""
    above = Path(os.path.abspath(path)).parents
    return tuple(str(p) for p in itertools.takewhile(lambda p: not p.exists(), above))


class _Git(msgspec.Struct):
    commit: str | None = None
    date: str | None = None


class _Environment(msgspec.Struct):
    git: _Git | None = None
    git_commit: str | None = None  # an earlier record's spelling


class RunRecord(msgspec.Struct):
    """What a run's record is read for, typed: a field of another type makes the record unreadable."""

    name: str | None = None
    started: str | None = None
    config: str | None = None
    one_off: str | None = None
    host: str | None = None
    pid: int | None = None
    selection: dict[str, Any] | None = None
    files: list[str] | None = None
    environment: _Environment | None = None
    tested: _Git | None = None
    run_id: str | None = None
    published: str | None = None  # where `microbench publish` put it: its files lie beside it

    @property
    def commit(self) -> str | None:
        env = self.environment or _Environment()
        return (env.git.commit if env.git else None) or env.git_commit

    @property
    def code(self) -> _Git:
        """The code under test's commit and date, else the harness's."""
        env = self.environment
        own = env.git if env and env.git else _Git(self.commit)
        return self.tested if self.tested and self.tested.commit else own


class StoredRun(RunRecord):
    """One run of a series: its record, with its number and its results files that hold rows."""

    files: list[str] = []
    number: int = 0

    @property
    def rows(self) -> int:
        return sum(_rows_in(f) for f in self.files)

    @property
    def series(self) -> str:
        """The series it is a run of: its first file, as run 1 names it."""
        return series_of(self.files[0]) if self.files else ""

    @property
    def source(self) -> str:
        """What ran: the config, or the one-off command."""
        return self.config or (f"--run {self.one_off}" if self.one_off else "")

    def as_json(self) -> dict[str, Any]:
        """As `runs --json` lists it (`tested`, `date`: the code under test's)."""
        keys = ("number", "files", "name", "started", "config", "commit", "host", "selection")
        return {k: getattr(self, k) for k in (*keys, "rows", "one_off")} | {
            "tested": self.code.commit,
            "date": self.code.date,
        }


MAX_RECORD_BYTES = 1 << 20  # a record is a few kB; anything larger was not written by a run
_DECODE_RECORD = msgspec.json.Decoder(RunRecord)


def read_record(path: Path | str) -> RunRecord | None:
    """A run's record, or None where it cannot be one (a FIFO or device is never read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
            return None
        return _DECODE_RECORD.decode(os.read(fd, MAX_RECORD_BYTES + 1))
    except (OSError, msgspec.MsgspecError, RecursionError):
        return None
    finally:
        os.close(fd)


def _read_or_warn(path: Path | str) -> RunRecord | None:
    """A record read where the store lists runs: one that is there and unreadable is named."""
    found = read_record(path)
    if found is not None and not any(msgspec.structs.astuple(found)):
        found = None  # JSON with none of a record's fields: another program's file
    if found is None and os.path.lexists(path):
        print(
            f"warning: {visible(str(path))}: not a run record (a folder, a special file or not one "
            "of this program's JSON records): passed over",
            file=sys.stderr,
        )
    return found


def _rows_in(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return max(0, sum(1 for _ in f) - 1)
    except OSError:
        return 0


def _stored(n: int, files: list[str], record: RunRecord) -> StoredRun:
    config = config_key(record.config) if record.config else None
    return StoredRun(
        **msgspec.structs.asdict(record) | {"files": files, "config": config}, number=n
    )


def stored_runs(paths: list[str], config: str | None = None) -> list[StoredRun]:
    """Every run of these series that left rows, oldest first (`config`: only that config's runs)."""
    series = [runs_of(p) for p in paths]  # each folder listed once: the work grows with the runs
    mine = config_key(config) if config else None
    out = []
    for n in sorted({n for runs in series for n in runs}):
        files = [f for runs in series if (f := runs.get(n))]
        record = _read_or_warn(record_path(paths[0], n)) or RunRecord()
        record.config = record.config or (None if record.one_off else mine)
        run = _stored(n, files, record)
        if config is None or run.config == mine and not run.one_off:
            out.append(run)
    return out


def runs_under(folder: str) -> list[StoredRun]:
    """Every stored run whose record lies under `folder` (any config or one-off), oldest first."""
    found = []
    for record in Path(folder).rglob(f"*{RECORD}"):
        data = _read_or_warn(record)
        if data is None or not data.files:
            continue
        held = [at for f in data.files if (at := _held(record, f, data.published))]
        if held:
            stem = record.name[: -len(RECORD)]
            match = NUMBERED.match(stem)
            found.append(_stored(int(match["n"]) if match else 1, held, data))
    return sorted(found, key=lambda r: (r.started or "", r.number))


def _held(record: Path, name: str, published: str | None) -> str | None:
    """A file a record names: where it says, else beside the record (a folder copied from another
    machine); a published run's record names its files beside itself only."""
    beside = record.parent / Path(name).name
    for path in (beside,) if published else (Path(name), beside):
        if path.is_file():
            return str(path)
    return None


def find_run(runs: list[StoredRun], ref: str) -> StoredRun | None:
    """A run by its number or its --name (the latest of that name); `latest`: the last."""
    if ref.isascii() and ref.isdigit():
        return next((r for r in runs if r.number == int(ref)), None)
    named = next((r for r in reversed(runs) if r.name == ref), None)
    return named or (runs[-1] if ref == "latest" and runs else None)
