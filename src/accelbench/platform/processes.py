"""This process's place in a many-process run (jax.distributed, or the local launcher): only process 0
writes rows. Set once at start-up; a single process is process 0 of 1."""

from __future__ import annotations

import ctypes
import signal
import socket

_index, _count = 0, 1


def configure(index: int, count: int) -> None:
    global _index, _count
    _index, _count = index, count


def index() -> int:
    return _index


def count() -> int:
    return _count


def primary() -> bool:
    return _index == 0


def free_port() -> int:
    """A TCP port free on this host now, for a job's coordinator or a process group's rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PR_SET_PDEATHSIG = 1
LAUNCHED = "MICROBENCH_LAUNCHED"  # set to 1 in the workers of `run --processes N`
LAUNCHED_BY = "MICROBENCH_LAUNCHED_BY"  # the launcher's own command line (JSON), for messages


def die_with_parent() -> None:
    """Linux: this process is sent SIGTERM when the process that started it dies, so a launcher or a
    runner killed outright (SIGKILL) leaves no worker behind; elsewhere nothing is done."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError, TypeError):
        pass
