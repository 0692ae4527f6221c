"""Many processes, one JAX program: jax.distributed start-up (the coordinator from the environment on
a TPU pod or GKE job, else from the command line; gloo on CPU) and per-device results gathered to
process 0, which alone writes rows."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import NoReturn

import numpy as np

from accelbench.errors import UserError, first_line
from accelbench.platform import processes


def initialize(
    coordinator: str | None = None, num_processes: int | None = None, process_id: int | None = None
) -> None:
    """Join the job (every argument None: detect a TPU pod or GKE job) and record this process's place."""
    import jax

    # CPU devices of several processes talk through gloo (a no-op where it is the default)
    with contextlib.suppress(Exception):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator, num_processes=num_processes, process_id=process_id
        )
    except (ValueError, RuntimeError) as error:
        raise UserError(f"cannot join the multi-process job: {first_line(error)}") from None
    processes.configure(jax.process_index(), jax.process_count())


def leave(code: int, verbose: bool) -> NoReturn:
    """Leave the job in order and exit with `code`. JAX logs its cancelled watches natively to the end
    (`WatchTasksAsync failed ... CANCELLED`, on GPUs): stderr from the shutdown on is held (shown under
    -v or on failure) and the native teardown skipped; every row and file was closed before."""
    import jax

    sys.stdout.flush()
    sys.stderr.flush()
    saved, held = os.dup(2), tempfile.TemporaryFile()
    os.dup2(held.fileno(), 2)
    failed = False
    try:
        jax.distributed.shutdown()
    except Exception:  # a peer already gone: what it says is shown
        failed = True
    sys.stderr.flush()
    os.dup2(saved, 2)
    if failed or verbose:
        held.seek(0)
        os.write(2, held.read())
    os._exit(code)


def gather_devices(local: dict[str, list[float]]) -> dict[str, list[float]]:
    """Every process's per-device samples, as 'p<process>/<device>' where there are several."""
    import jax

    if jax.process_count() == 1:
        return local
    from jax.experimental import multihost_utils

    names = sorted(local)
    n = min((len(local[k]) for k in names), default=0)
    mine = np.array([local[k][:n] for k in names], np.float64).reshape(len(names), n)
    everyone = np.asarray(multihost_utils.process_allgather(mine))  # (processes, devices, n)
    return {  # every process has as many local devices
        f"p{proc}/{name}": [float(v) for v in block[row]]
        for proc, block in enumerate(everyone)
        for row, name in enumerate(names)
    }


def device_key(global_id: int, per_device: dict[str, list[float]]) -> str:
    """The key `gather_devices` gives the device of this global id ('GPU:1', 'p1/TPU:0')."""
    import jax

    from accelbench.jax_backend.xplane import TraceError

    device = jax.devices()[global_id]
    local = [d.id for d in jax.devices() if d.process_index == device.process_index].index(
        device.id
    )
    prefix = f"p{device.process_index}/" if jax.process_count() > 1 else ""
    found = [k for k in per_device if k.startswith(prefix) and k.rsplit(":", 1)[-1] == str(local)]
    if not found:
        raise TraceError(f"device {global_id} has no events of the case in the trace")
    return found[0]


def from_process_0(flags: list[bool]) -> list[bool]:
    """Process 0's flags in every process: which cases a resumed job has done (only it reads rows)."""
    import jax

    if jax.process_count() == 1 or not flags:
        return flags
    from jax.experimental import multihost_utils

    shared = multihost_utils.broadcast_one_to_all(np.array(flags, np.bool_))
    return [bool(v) for v in np.asarray(shared)]


def gather_max(value: float) -> float:
    """The largest of every process's value (e.g. the worst check error)."""
    import jax

    if jax.process_count() == 1:
        return value
    from jax.experimental import multihost_utils

    return float(np.max(np.asarray(multihost_utils.process_allgather(np.float64(value)))))
