"""`run --processes N`: N local processes joined by jax.distributed; process 0 writes the rows. Each
gets one NVIDIA GPU (CUDA_VISIBLE_DEVICES), or is a CPU-only JAX process (gloo collectives). One that
ends badly stops the others within seconds, in one line naming it."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from accelbench.errors import UserError
from accelbench.platform.gpu_monitor import cuda_visible
from accelbench.platform.processes import (
    LAUNCHED,
    LAUNCHED_BY,
    LAUNCHER_PIPE,
    STOP_GRACE_S,
    free_port,
)

JOIN_OPTIONS = ("--coordinator", "--num-processes", "--process-id", "--multihost")


def worker_argv(argv: Sequence[str]) -> list[str]:  # less `--processes N` (`--processes=N`)
    out: list[str] = []
    value = False  # the argument after a bare --processes: its N (argparse has read it as one)
    for arg in argv:
        named = arg.split("=", 1)[0] == "--processes"
        if not (named or value):
            out.append(arg)
        value = named and "=" not in arg
    return out


def _import_path() -> str:
    specs = [importlib.util.find_spec(package) for package in ("accelbench", "torch_backend")]
    roots = [os.path.dirname(os.path.dirname(s.origin)) for s in specs if s and s.origin]
    return os.pathsep.join(dict.fromkeys([*roots, os.environ.get("PYTHONPATH", "")]))


def gpus() -> int:
    """NVIDIA GPUs this process may use, from their device files (no framework imported)."""
    if os.environ.get("JAX_PLATFORMS") == "cpu":
        return 0
    present = len(glob.glob("/dev/nvidia[0-9]*"))
    visible = cuda_visible()
    return present if visible is None else min(present, len(visible))


def _placed(env: dict[str, str], i: int, devices: int) -> dict[str, str]:
    if not devices:
        return {**env, "JAX_PLATFORMS": "cpu"}
    ids = cuda_visible() or [str(d) for d in range(devices)]
    return {**env, "CUDA_VISIBLE_DEVICES": ids[i]}


FORCED_CPU_DEVICES = re.compile(r"--xla_force_host_platform_device_count=([0-9]+)")


def job_devices(n: int) -> int:
    """The devices n processes hold together: a GPU each, or each its CPU's (as XLA_FLAGS forces)."""
    forced = FORCED_CPU_DEVICES.search(os.environ.get("XLA_FLAGS", ""))
    return n * (int(forced.group(1)) if forced and not gpus() else 1)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def launch_local(argv: Sequence[str], n: int, plan: Callable[[int], object]) -> int:
    """`microbench <argv>` in n processes, the worst exit code winning; first, at most one per GPU
    (or core) and the config planned here (`plan`), so a bad one is said once."""
    if any(a.split("=", 1)[0] in JOIN_OPTIONS for a in argv):
        raise UserError("--processes starts its own job: leave out --coordinator/--process-id")
    devices, cores = gpus(), _cores()
    if n > (devices or cores):
        what = (
            f"one process per GPU, and this host has {devices}: give at most {devices} (or "
            "JAX_PLATFORMS=cpu for CPU processes)"
            if devices
            else f"one process per CPU core, and this host has {cores}: give at most {cores}"
        )
        raise UserError(what, key="--processes")
    with contextlib.redirect_stderr(io.StringIO()):
        plan(job_devices(n))
    command = worker_argv(argv)
    port = free_port()
    watched, held = os.pipe()  # the workers read; this process holds the write end until it ends
    env = {
        **os.environ,
        "PYTHONPATH": _import_path(),
        LAUNCHER_PIPE: str(watched),  # each worker ends with this launcher
        LAUNCHED_BY: json.dumps([sys.argv[0], *argv]),  # what the user typed: the resume command's
    }
    children = []
    for i in range(n):
        join = [f"--coordinator=127.0.0.1:{port}", f"--num-processes={n}", f"--process-id={i}"]
        children.append(
            subprocess.Popen(
                [sys.executable, "-m", "accelbench.cli", *command, *join],
                env={**_placed(env, i, devices), LAUNCHED: str(i)},
                stdout=None if i == 0 else subprocess.DEVNULL,
                pass_fds=(watched,),
            )
        )
    try:
        return _wait(children)
    except BaseException:  # Ctrl-C or SIGTERM here: every worker stops too, then the launcher
        stop_all(children)
        raise


NORMAL_ENDS = (0, 1, 3)  # every case ran (some failed or were unsupported): the others end too


def _code(returned: int) -> int:  # as a shell gives it (killed by signal s: 128 + s)
    return 128 - returned if returned < 0 else returned


def _wait(children: list[subprocess.Popen[bytes]]) -> int:
    """The worst code. One ending badly stops the others at once; after one ends normally the others
    get STOP_GRACE_S (a peer may wait in a collective for one that left)."""
    first_end: float | None = None
    while True:
        codes = [child.poll() for child in children]
        if all(c is not None for c in codes):
            return max(_code(c) for c in codes if c is not None)
        ended = [(i, c) for i, c in enumerate(codes) if c is not None]
        bad = [(i, c) for i, c in ended if c not in NORMAL_ENDS]
        first_end = first_end or (time.monotonic() if ended else None)
        late = first_end is not None and time.monotonic() - first_end > STOP_GRACE_S
        if bad or late:
            i, c = (bad or ended)[0]
            why = "" if bad else f", and the others had not ended {STOP_GRACE_S:g} s later"
            print(
                f"error: process {i} of {len(children)} ended with exit code {_code(c)}{why}; "
                "stopping the others",
                file=sys.stderr,
                flush=True,
            )
            stop_all(children)
            return max(_code(child.returncode) for child in children)
        time.sleep(0.1)


def stop_all(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGINT to each worker (process 0 writes), then a kill past STOP_GRACE_S."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    for child in children:
        try:
            child.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
