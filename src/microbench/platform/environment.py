"""Where and with what a run happened: the environment columns of every row."""

from __future__ import annotations

import datetime as _dt
import functools
import socket
import subprocess
import uuid
from pathlib import Path


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def new_run_id() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]
    )


def base_environment(run_id: str) -> dict[str, str]:
    return {"run_id": run_id, "host": socket.gethostname(), "git_commit": git_commit()}


def timestamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
