"""Runs that never collide and never replace one another, in the spirit of pytest-benchmark's autosave.

A config's results file is the name of a series of runs: the first run writes `out.csv`, the next
`out.2.csv`, then `out.3.csv`, ... (each with its `.jsonl` twin), all the run's files under one number.
Each run leaves one record, `out.run.json` / `out.<n>.run.json`, written when it starts: when, which
config, which files, and the machine it ran on (structured: CPU model, Python, package versions, commit).
The latest run is the highest number. `--resume` continues the latest run and `--overwrite` replaces it;
`-o FILE` names one exact file and keeps today's rules (refused when it exists). URL outputs are not
numbered: a bucket is listed by no one here, so they keep the same rules as `-o`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microbench.core.case import Case
from microbench.core.options import RunOptions
from microbench.platform.environment import run_environment, timestamp
from microbench.results.remote import is_url
from microbench.results.writer import check_writable, write_atomically

RECORD = ".run.json"
NUMBERED = re.compile(r"^(?P<stem>.+)\.(?P<n>[0-9]+)$")


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


def _latest(paths: list[str]) -> int:
    """The latest run that left rows (a claimed number whose run died before its first row is free)."""
    return max((n for path in paths for n in runs_of(path)), default=0)


def _alive(record: Path) -> bool:
    """Whether the run that wrote this record may still be running (so its number is taken)."""
    try:
        claimed = json.loads(record.read_text(encoding="utf-8"))
        pid, host = int(claimed["pid"]), claimed["host"]
    except (OSError, ValueError, KeyError, TypeError):
        return True  # unreadable: leave it alone
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
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


def _claim(path: str, n: int, body: dict[str, Any], take_over: bool = False) -> bool:
    """Create run n's record exclusively: two runs started at once never share a number. A record
    whose run died before writing a row is taken over. Every path of the run is checked first, so a
    refused run writes nothing."""
    target = record_path(path, n)
    for file in (*body["files"], target):
        check_writable(file)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    text = json.dumps(
        {**body, "pid": os.getpid(), "host": socket.gethostname()}, indent=1, default=str
    )
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        abandoned = not Path(numbered(path, n)).exists() and not _alive(Path(target))
        if not (take_over or abandoned):
            return False
        write_atomically(target, lambda f: print(text, file=f, end=""))
        return True
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return True


def assign(
    cases: list[Case],
    options: RunOptions,
    config_path: str,
    run_id: str,
    command_line: bool = False,
) -> Assigned:
    """The cases with their results files numbered for this run (see the module's docstring). A run
    of `run --run NAME` (`command_line`) records its command, not a config: it is its own series."""
    series = sorted({c.outputs.csv_path for c in cases})
    if options.output or any(is_url(p) for p in series):
        return Assigned(cases, 0, None)
    latest = _latest(series)
    made = _missing_folders(record_path(series[0], 1))
    body = {
        "run_id": run_id,
        "name": options.name,
        "started": timestamp(),
        "config": None if command_line else os.path.abspath(config_path),
        "one_off": " ".join(options.one_off) if command_line else None,
        "config_id": cases[0].config_id if cases else "",
        # a run of some of the config's cases (--only/--skip): compare then keeps to its cases
        "selection": {"only": list(options.only), "skip": list(options.skip)}
        if options.only or options.skip
        else None,
        "environment": run_environment(),
    }
    if options.resume or options.overwrite:
        number = max(latest, 1)
        created = _claim(
            series[0], number, {**body, "files": [numbered(p, number) for p in series]}
        )
    else:
        number, created = latest + 1, False
        while not created:
            created = _claim(
                series[0], number, {**body, "files": [numbered(p, number) for p in series]}
            )
            number += 0 if created else 1
    renamed = {p: numbered(p, number) for p in series}
    out = [
        dataclasses.replace(
            c, outputs=dataclasses.replace(c.outputs, csv_path=renamed[c.outputs.csv_path])
        )
        for c in cases
    ]
    return Assigned(out, number, record_path(series[0], number), created, made)


def _missing_folders(path: str) -> tuple[str, ...]:
    """The folders above `path` that do not exist yet, deepest first."""
    missing = []
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return tuple(missing)


@dataclass(frozen=True)
class StoredRun:
    """One run of a series, as its record and files tell it."""

    number: int
    files: tuple[str, ...]  # its results files that hold rows
    name: str | None = None
    started: str | None = None
    config: str | None = None
    commit: str | None = None
    host: str | None = None
    selection: dict[str, Any] | None = None
    rows: int = 0
    one_off: str | None = None  # `run --run NAME --field value`: the command, in place of a config

    @property
    def selected(self) -> bool:
        return bool(self.selection)

    @property
    def series(self) -> str:
        """The series it is a run of: its first file, as run 1 names it."""
        if not self.files:
            return ""
        path = Path(self.files[0])
        match = NUMBERED.match(path.stem)
        return str(path.with_name(match["stem"] + path.suffix)) if match else str(path)

    @property
    def source(self) -> str:
        """What ran: the config, or the one-off command."""
        return self.config or (f"--run {self.one_off}" if self.one_off else "")


def _record(path: str, n: int) -> dict[str, Any]:
    return _read_record(Path(record_path(path, n)))


def _read_record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _rows_in(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return max(0, sum(1 for _ in f) - 1)
    except OSError:
        return 0


def _commit(record: dict[str, Any]) -> str | None:
    """The commit the run's record holds (`environment.git.commit`; `git_commit` before that)."""
    env = record.get("environment")
    if not isinstance(env, dict):
        return None
    git = env.get("git")
    found = git.get("commit") if isinstance(git, dict) else env.get("git_commit")
    return found if isinstance(found, str) else None


def _text(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def _stored(n: int, files: tuple[str, ...], record: dict[str, Any]) -> StoredRun:
    selection = record.get("selection")
    return StoredRun(
        n,
        files,
        _text(record, "name"),
        _text(record, "started"),
        _text(record, "config"),
        _commit(record),
        _text(record, "host"),
        selection if isinstance(selection, dict) else None,
        sum(_rows_in(f) for f in files),
        _text(record, "one_off"),
    )


def stored_runs(paths: list[str], config: str | None = None) -> list[StoredRun]:
    """Every run of these series that left rows, oldest first (`config`: only the runs of that
    config, not one-off runs filed under the same name)."""
    numbers = sorted({n for p in paths for n in runs_of(p)})
    out = []
    for n in numbers:
        files = tuple(f for p in paths if (f := runs_of(p).get(n)))
        run = _stored(n, files, _record(paths[0], n))
        if config is None or run.config in (None, os.path.abspath(config)) and not run.one_off:
            out.append(run)
    return out


def runs_under(folder: str) -> list[StoredRun]:
    """Every stored run whose record lies under `folder` (any config or one-off), oldest first."""
    found = []
    for record in Path(folder).rglob(f"*{RECORD}"):
        if not record.is_file():
            continue
        data = _read_record(record)
        files = data.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            continue
        held = tuple(f for f in files if Path(f).is_file())
        if held:
            stem = record.name[: -len(RECORD)]
            match = NUMBERED.match(stem)
            found.append(_stored(int(match["n"]) if match else 1, held, data))
    return sorted(found, key=lambda r: (r.started or "", r.number))


def find_run(runs: list[StoredRun], ref: str) -> StoredRun | None:
    """A run by its number or its --name (the latest of that name)."""
    if ref.isascii() and ref.isdigit():
        return next((r for r in runs if r.number == int(ref)), None)
    return next((r for r in reversed(runs) if r.name == ref), None)
