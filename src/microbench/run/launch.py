"""`run --processes N`: N local processes joined by jax.distributed, for trying a multi-host run on one
machine. Each is a CPU-only JAX process (gloo collectives between them) running the same command; process
0 prints and writes the rows, the others keep quiet unless they fail."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from microbench.errors import UserError
from microbench.platform.processes import LAUNCHED, LAUNCHED_BY, free_port

OWN_OPTIONS = ("--processes",)
JOIN_OPTIONS = ("--coordinator", "--num-processes", "--process-id", "--multihost")


def without(argv: Sequence[str], options: Sequence[str]) -> list[str]:
    """argv less the named options and their values (`--opt V` and `--opt=V`)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in options:
            skip = "=" not in arg and name != "--multihost"
            continue
        out.append(arg)
    return out


def _import_path() -> str:
    """src/ and the repository root (torch_backend), as the running process found them."""
    roots = []
    for package in ("microbench", "torch_backend"):
        spec = importlib.util.find_spec(package)
        if spec and spec.origin:
            roots.append(os.path.dirname(os.path.dirname(spec.origin)))
    return os.pathsep.join(dict.fromkeys([*roots, os.environ.get("PYTHONPATH", "")]))


def launch_local(argv: Sequence[str], n: int) -> int:
    """Run `microbench <argv>` in n processes on this machine; the worst exit code wins."""
    if any(a.split("=", 1)[0] in JOIN_OPTIONS for a in argv):
        raise UserError("--processes starts its own job: leave out --coordinator/--process-id")
    command = without(argv, OWN_OPTIONS)
    port = free_port()
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": _import_path(),
        LAUNCHED: "1",  # each child dies with this launcher (processes.die_with_parent)
        LAUNCHED_BY: json.dumps([sys.argv[0], *argv]),  # what the user typed: the resume command's
    }
    children = []
    for i in range(n):
        join = [
            "--coordinator",
            f"127.0.0.1:{port}",
            "--num-processes",
            str(n),
            "--process-id",
            str(i),
        ]
        children.append(
            subprocess.Popen(
                [sys.executable, "-m", "microbench.cli", *command, *join],
                env=env,
                stdout=None if i == 0 else subprocess.DEVNULL,
            )
        )
    try:
        return max(child.wait() for child in children)
    except (
        BaseException
    ):  # Ctrl-C or SIGTERM (an exit) here: every worker stops too, then the launcher
        stop_all(children)
        raise


STOP_GRACE_S = 10.0


def stop_all(children: list[subprocess.Popen[bytes]]) -> None:
    """Each worker asked to stop as at Ctrl-C (it saves nothing itself: process 0 writes), then killed
    if it has not ended within STOP_GRACE_S (one waiting in a collective for a peer that left)."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    for child in children:
        try:
            child.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
