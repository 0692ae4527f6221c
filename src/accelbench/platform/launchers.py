"""Where a many-process job's shape comes from under `--multihost`: the launchers users have, each one
row (the variables that show it, and how they give this process's id, the process count and the
coordinator). The first whose variables are all set wins; none found leaves everything to
`jax.distributed.initialize()`'s own detection (a TPU pod, GKE's TPU variables). JAX's coordinator
needs a port of its own: beside a launcher's rendezvous port (torchrun's MASTER_PORT) it takes the next
one; `MICROBENCH_COORDINATOR` (HOST:PORT) overrides whatever a launcher gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

COORDINATOR = "MICROBENCH_COORDINATOR"
DEFAULT_PORT = 62111  # where a launcher names a host but no port (SLURM, Open MPI, GKE)

Env = Mapping[str, str]


@dataclass(frozen=True)
class Launcher:
    name: str
    shows: tuple[str, ...]  # every one of these set: this launcher started the process
    process_id: Callable[[Env], int]
    count: Callable[[Env], int]
    coordinator: Callable[[Env], str | None]  # None: jax.distributed finds it itself


def _host(env: Env, *names: str) -> str | None:
    """HOST:DEFAULT_PORT from the first of these variables that is set."""
    for name in names:
        if env.get(name):
            return f"{env[name].split(',')[0]}:{DEFAULT_PORT}"
    return None


def _jobset(env: Env) -> str | None:
    """A JobSet's first pod, by the headless service JobSet makes: <jobset>-<job>-0-0.<jobset>."""
    if not env.get("JOBSET_NAME"):
        return _host(env, "MASTER_ADDR")
    name, job = env["JOBSET_NAME"], env.get("REPLICATED_JOB_NAME", "workers")
    return f"{name}-{job}-0-0.{name}:{DEFAULT_PORT}"


LAUNCHERS: tuple[Launcher, ...] = (
    Launcher(
        "torchrun",
        ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"),
        lambda e: int(e["RANK"]),
        lambda e: int(e["WORLD_SIZE"]),
        lambda e: f"{e['MASTER_ADDR']}:{int(e['MASTER_PORT']) + 1}",
    ),
    Launcher(
        "slurm",
        ("SLURM_PROCID", "SLURM_NTASKS"),
        lambda e: int(e["SLURM_PROCID"]),
        lambda e: int(e["SLURM_NTASKS"]),
        lambda e: _host(e, "MASTER_ADDR"),  # else JAX's SLURM detection: the step's first node
    ),
    Launcher(
        "open-mpi",
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        lambda e: int(e["OMPI_COMM_WORLD_RANK"]),
        lambda e: int(e["OMPI_COMM_WORLD_SIZE"]),
        lambda e: _host(e, "MASTER_ADDR"),
    ),
    Launcher(
        "gke-indexed-job",
        ("JOB_COMPLETION_INDEX", "NUM_PROCESSES"),
        lambda e: int(e["JOB_COMPLETION_INDEX"]),
        lambda e: int(e["NUM_PROCESSES"]),
        _jobset,
    ),
)


@dataclass(frozen=True)
class Joined:
    """This process's place as a launcher gave it (all None: JAX's own detection)."""

    launcher: str
    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None


def detect(env: Env | None = None) -> Joined:
    env = os.environ if env is None else env
    for launcher in LAUNCHERS:
        if all(env.get(name) for name in launcher.shows):
            return Joined(
                launcher.name,
                env.get(COORDINATOR) or launcher.coordinator(env),
                launcher.count(env),
                launcher.process_id(env),
            )
    return Joined("jax", env.get(COORDINATOR))
