"""This process's place in a many-process run (jax.distributed, or the local launcher): only process 0
writes rows. Set once at start-up; a single process is process 0 of 1."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from accelbench.platform import interrupt

_index, _count = 0, 1


def configure(index: int, count: int) -> None:
    global _index, _count
    _index, _count = index, count


def count() -> int:
    return _count


def primary() -> bool:
    return _index == 0


def free_port() -> int:
    """A TCP port free on this host now, for a job's coordinator or a process group's rendezvous."""
    import socket  # here: `--help` needs none

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PR_SET_PDEATHSIG = 1
LAUNCHED = "MICROBENCH_LAUNCHED"  # a worker of `run --processes N`: its index
LAUNCHED_BY = "MICROBENCH_LAUNCHED_BY"  # the launcher's own command line (JSON), for messages
LAUNCHER_PIPE = "MICROBENCH_LAUNCHER_PIPE"  # a pipe's read end; at its end: the launcher is gone
STOP_GRACE_S = 10.0  # a worker asked to stop that has not, within this, is ended


def watch_launcher() -> None:
    """A worker of `run --processes N` ends with its launcher, even SIGKILLed: a read of its never-written
    pipe returns at its death; the run stops as at Ctrl-C, ended STOP_GRACE_S later if stuck in a
    collective (jax.distributed takes SIGTERM for preemption: a parent-death signal is not enough)."""
    fd = os.environ.pop(LAUNCHER_PIPE, "")  # this process's alone, not its children's
    if not fd.isdigit():
        return

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(int(fd), 1):
                pass
        if os.environ.get(LAUNCHED) == "0":  # said once (a worker may not have joined yet)
            print("\nerror: the launcher of this job ended: stopping", file=sys.stderr, flush=True)
        interrupt.request(signal.SIGTERM)
        time.sleep(STOP_GRACE_S)
        os._exit(128 + signal.SIGTERM)

    threading.Thread(target=watch, name="launcher-watch", daemon=True).start()


def die_with_parent() -> None:
    """Linux: SIGTERM when the parent dies (a launcher killed outright leaves no worker behind)."""
    import ctypes  # here: `--help` needs none

    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
