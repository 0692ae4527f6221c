"""A suite's results read back (`suite collect`, and `suite submit` at its end): each config folder's
latest summary.csv, gathered per category as the reference's aggregator does, and the report's
header. Reading neither hangs nor fills memory: regular files only, at most MAX_BYTES of each; a
summary.csv that is empty, binary or malformed is named and passed over."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accelbench.errors import UserError, visible

# upstream's categories, each known by what its benchmarks are called (first match wins)
CATEGORIES = (
    ("collectives", ("all_gather", "all_reduce", "all_to_all", "reduce_scatter", "ppermute")),
    ("hbm", ("hbm",)),
    ("host_device", ("host_to_device", "device_to_host")),
    ("device_to_device", ("device_to_device",)),
    ("gemm", ("gemm",)),
)
AGGREGATED = "aggregated_results"
JOB_FOLDER = ".job"  # no config's folder can take it (portable_name never starts one with a dot)
SUMMARY = re.compile(r"summary(\.(\d+))?\.csv")
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}")
MAX_BYTES = 64 << 20
MAX_DEPTH = 16


@dataclass
class Collected:
    root: str
    run_id: str | None
    tables: dict[str, Any] = field(default_factory=dict)  # config folder -> its summary (DataFrame)
    said: dict[str, str] = field(default_factory=dict)  # config folder -> why it has no table
    submitted: dict[str, Any] = field(default_factory=dict)  # the run's .job/submitted.json


def collect_run(path: str, run_id: str | None = None) -> Collected:
    """The run `run_id` under `path` (default: the latest), or `path` itself where it holds none."""
    import fsspec

    key = f"suite collect '{path}'"
    try:
        fs, root = fsspec.core.url_to_fs(path)
        if not fs.isdir(root):
            raise UserError("is not a folder (a bucket path, or a suite's output)", key=key)
        runs = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(root, detail=False))
    except (ImportError, ValueError, OSError) as error:
        raise UserError(f"cannot read it: {error}", key=key) from None
    runs = [r for r in runs if RUN_ID.fullmatch(r)]
    if run_id is not None and run_id not in runs:
        raise UserError(
            f"holds no run {run_id!r} (latest: {', '.join(runs[-3:]) or 'none'})", key=key
        )
    chosen = run_id or (runs[-1] if runs else None)
    found = Collected(f"{root.rstrip('/')}/{chosen}" if chosen else root.rstrip("/"), chosen)
    found.submitted = _submitted(fs, found.root)
    _read_summaries(fs, found)
    missing = "no summary.csv: its JobSet failed or measured nothing (its pod log)"
    for folder in found.submitted.get("configs", {}):
        if folder not in found.tables:
            found.said.setdefault(folder, missing)
    if not found.tables and not found.said:
        raise UserError("holds no summary.csv of a suite's run", key=key)
    return found


def _submitted(fs: Any, root: str) -> dict[str, Any]:
    try:
        with fs.open(f"{root}/{JOB_FOLDER}/submitted.json", "rb") as f:
            data = json.loads(f.read(MAX_BYTES))
    except Exception:  # no submission record (a local suite run), or one that cannot be read
        return {}
    return data if isinstance(data, dict) else {}


def _read_summaries(fs: Any, found: Collected) -> None:
    """Each config folder's latest summary.csv (summary.N.csv is run N); one unread is said."""
    latest: dict[str, tuple[int, str, dict[str, Any]]] = {}
    for name, info in fs.find(found.root, maxdepth=MAX_DEPTH, detail=True).items():
        folder, _, file = name[len(found.root) + 1 :].rpartition("/")
        match = SUMMARY.fullmatch(file)
        if not match or folder.split("/")[0] in (JOB_FOLDER, AGGREGATED):
            continue
        number = int(match.group(2) or 1)
        if folder not in latest or number > latest[folder][0]:
            latest[folder] = (number, name, info)
    for folder, (_, name, info) in sorted(latest.items()):
        try:
            found.tables[folder or "."] = _table(fs, name, info)
        except ValueError as error:  # pandas' parser and decoding errors are ValueErrors too
            why = f"{name.rsplit('/', 1)[-1]} passed over: {' '.join(str(error).split())[:200]}"
            print(visible(f"warning: {name}: {why}"), file=sys.stderr)
            found.said[folder or "."] = why


def _table(fs: Any, name: str, info: dict[str, Any]) -> Any:
    import pandas as pd

    if info.get("type") != "file":
        raise ValueError("not a regular file (a link to a device, a pipe)")
    if (info.get("size") or 0) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES >> 20} MiB")
    with fs.open(name, "rb") as f:
        text = f.read(MAX_BYTES).decode("utf-8")
    if not text.strip():
        raise ValueError("empty")
    return pd.read_csv(io.StringIO(text))


def category(folder: str, frame: Any) -> str | None:
    names = frame["name_given"].dropna().astype(str).unique() if "name_given" in frame else []
    said = " ".join([folder, *names]).lower().replace("-", "_")
    return next((c for c, parts in CATEGORIES if any(p in said for p in parts)), None)


def aggregated(found: Collected) -> dict[str, str]:
    """`aggregated_results/<category>.csv`: every config's rows of a category, its folder first."""
    import pandas as pd

    frames: dict[str, list[Any]] = {}
    for folder, frame in found.tables.items():
        if (cat := category(folder, frame)) is not None:
            frames.setdefault(cat, []).append(frame.assign(config=folder)[["config", *frame]])
    return {
        f"{AGGREGATED}/{cat}.csv": pd.concat(parts, ignore_index=True).to_csv(index=False)
        for cat, parts in frames.items()
    }


def header(found: Collected) -> list[str]:
    """The run, the wheel's commit and branch, the rows' JAX and libtpu, the configs measured."""
    s = found.submitted
    versions = {
        column: sorted({str(v) for f in found.tables.values() if column in f for v in f[column].dropna()})
        for column in ("jax_version", "libtpu_version", "git_commit")
    }  # fmt: skip
    commit = s.get("commit") or ", ".join(versions["git_commit"]) or "unknown"
    total = len(found.tables) + len(found.said)
    return [
        f"run: {found.run_id or s.get('run_id') or '-'}",
        f"commit: {commit}" + (f" (branch {s['branch']})" if s.get("branch") else ""),
        f"JAX: {', '.join(versions['jax_version']) or 'unknown'}",
        f"libtpu: {', '.join(versions['libtpu_version']) or 'none'}",
        f"configs measured: {len(found.tables)} of {total}",
    ]


def publish(destination: str, files: Mapping[str, str | bytes], key: str) -> None:
    """Files (name -> content) under a URL (fsspec) or a local folder (atomically, no planted link)."""
    from accelbench.results.remote import filesystem, is_url
    from accelbench.results.writer import check_writable, write_atomically

    if not is_url(destination):
        check_writable(destination, key, folder=True)
        for name, data in files.items():
            write_atomically(f"{destination}/{name}", _writing(data), isinstance(data, bytes))
        return
    fs = filesystem(destination, key)
    try:
        for name, data in files.items():
            target = f"{destination.rstrip('/')}/{name}"
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.pipe_file(target, data.encode() if isinstance(data, str) else data)
    except Exception as error:  # the store's own error, whatever its library calls it
        raise UserError(f"cannot write {destination}: {error}", key=key) from None


def _writing(data: str | bytes) -> Callable[[Any], object]:
    return lambda f: f.write(data)
