"""Where a `--multihost` job's shape comes from: one row per launcher (the variables giving this
process's id and the count, and how the coordinator is found); the first whose variables are all set
wins, else `jax.distributed.initialize()` detects it (a TPU pod, GKE). JAX's coordinator takes the port
after a launcher's rendezvous port; `MICROBENCH_COORDINATOR` (HOST:PORT) overrides. Every value is
checked here, naming its variable: a job that cannot form is one line, not a traceback or a hang."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from accelbench.errors import UserError
from accelbench.limits import MAX_PROCESSES

COORDINATOR = "MICROBENCH_COORDINATOR"
DEFAULT_PORT = 62111  # where a launcher names a host but no port (SLURM, Open MPI, GKE)
RESOLVE_WAIT_S = 60.0  # how long a coordinator's name may take to resolve (a JobSet's first pod)
REACH_WAIT_S = 300.0  # how long process 0 may take to listen (JAX's own initialization timeout)

Env = Mapping[str, str]
Address = tuple[str, str]  # HOST:PORT, and the variables it was made from (what an error names)


@dataclass(frozen=True)
class Launcher:
    name: str
    rank: str  # the variable of this process's id
    size: str  # the variable of the process count
    coordinator: Callable[[Env], Address | None]  # None: jax.distributed finds it itself
    also: tuple[str, ...] = ()  # set as well, where this launcher started the process


def whole(env: Env, name: str, low: int, high: int) -> int:
    """A variable's whole number, within [low, high], or one line naming it."""
    text = env[name].strip()
    if not (text.isascii() and text.isdigit() and low <= int(text) <= high):
        raise UserError(f"must be a whole number from {low} to {high:,}, got {text!r}", key=name)
    return int(text)


def _torchrun(env: Env) -> Address:
    port = whole(env, "MASTER_PORT", 1, 65534)  # JAX's coordinator takes the next port
    return f"{env['MASTER_ADDR']}:{port + 1}", "MASTER_ADDR/MASTER_PORT"


def _master(env: Env) -> Address | None:
    host = env.get("MASTER_ADDR")
    return (f"{host.split(',')[0]}:{DEFAULT_PORT}", "MASTER_ADDR") if host else None


def _jobset(env: Env) -> Address | None:
    """A JobSet's first pod, by the headless service JobSet makes: <jobset>-<job>-0-0.<jobset>."""
    if not env.get("JOBSET_NAME"):
        return _master(env)
    name, job = env["JOBSET_NAME"], env.get("REPLICATED_JOB_NAME", "workers")
    return f"{name}-{job}-0-0.{name}:{DEFAULT_PORT}", "JOBSET_NAME"


LAUNCHERS: tuple[Launcher, ...] = (
    Launcher("torchrun", "RANK", "WORLD_SIZE", _torchrun, ("MASTER_ADDR", "MASTER_PORT")),
    # SLURM without MASTER_ADDR: JAX's SLURM detection (the step's first node)
    Launcher("slurm", "SLURM_PROCID", "SLURM_NTASKS", _master),
    Launcher("open-mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", _master),
    Launcher("gke-indexed-job", "JOB_COMPLETION_INDEX", "NUM_PROCESSES", _jobset),
)


def checked_address(text: str, where: str) -> str:
    """HOST:PORT with a port from 1 to 65535 (an IPv6 host in brackets), or one line naming `where`."""
    host, _, port = text.strip().rpartition(":")
    if not host.strip("[]") or not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise UserError(f"must be HOST:PORT (a port from 1 to 65535), got {text!r}", key=where)
    return text.strip()


@dataclass(frozen=True)
class Joined:
    """This process's place as a launcher gave it (all None: JAX's own detection)."""

    launcher: str
    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    where: str = COORDINATOR  # the variables the coordinator came from


def detect(env: Env | None = None) -> Joined:
    env = os.environ if env is None else env
    for launcher in LAUNCHERS:
        if all(env.get(name) for name in (launcher.rank, launcher.size, *launcher.also)):
            count = whole(env, launcher.size, 1, MAX_PROCESSES)
            rank = whole(env, launcher.rank, 0, count - 1)  # an id outside the job: no job forms
            found = (env[COORDINATOR], COORDINATOR) if env.get(COORDINATOR) else None
            address, where = found or launcher.coordinator(env) or (None, COORDINATOR)
            address = checked_address(address, where) if address else None
            return Joined(launcher.name, address, count, rank, where)
    given = env.get(COORDINATOR)
    return Joined("jax", checked_address(given, COORDINATOR) if given else None)


def check_job(coordinator: str | None, count: int | None, index: int | None, where: str) -> None:
    """A job these can form (`where`: the variables the coordinator came from), or one line."""
    if count is not None and index is not None and index >= count:
        raise UserError(f"is {index}: a job of {count} processes has ids 0 to {count - 1}",
                        key="--process-id")  # fmt: skip
    if coordinator is not None:
        reach(checked_address(coordinator, where), where, index)


def reach(address: str, where: str, process_id: int | None) -> None:
    """The coordinator resolves within RESOLVE_WAIT_S and (seen from a process not 0) answers within
    REACH_WAIT_S, or one line naming the address's variables (JAX itself aborts natively)."""
    host, port = address.rpartition(":")[0].strip("[]"), int(address.rpartition(":")[2])
    waits = [(RESOLVE_WAIT_S, "does not resolve", lambda: _resolves(host))]
    if process_id:
        waits.append((REACH_WAIT_S, "does not answer", lambda: _answers(host, port)))
    for wait_s, says, ready in waits:
        deadline = time.monotonic() + wait_s
        while not ready():
            if time.monotonic() >= deadline:
                raise UserError(
                    f"the coordinator {address!r} {says} (waited {wait_s:g} s)", key=where
                )
            time.sleep(1.0)


def _resolves(host: str) -> bool:
    return _succeeds(lambda: socket.getaddrinfo(host, None))


def _answers(host: str, port: int) -> bool:
    return _succeeds(lambda: socket.create_connection((host, port), timeout=2.0).close())


def _succeeds(attempt: Callable[[], object]) -> bool:
    try:
        attempt()
    except (OSError, UnicodeError):
        return False
    return True
