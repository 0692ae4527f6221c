"""How Inductor compiles, decided from what a run holds (issue 53). A handful of small graphs compile
faster in this process than through Inductor's pool of compile workers, which takes seconds to start
and is waited for at exit: fewer than POOL_FROM compiled cases, and no max-autotune, compile in process
(TORCHINDUCTOR_COMPILE_THREADS=1); a larger sweep keeps the pool. A TORCHINDUCTOR_COMPILE_THREADS the
user set is theirs and stands. The run's environment record keeps the value (env_flags). Importing this
module imports no part of PyTorch."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

THREADS = "TORCHINDUCTOR_COMPILE_THREADS"
POOL_FROM = 16  # compiled cases from which the pool's start-up is paid back
AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")


def compiles(case: Any) -> bool:
    """A torch case that runs torch.compile (an array op's compile implementation, a model's mode)."""
    implementation = str(case.implementation or "")
    mode = case.params.get("compile_mode") if hasattr(case.params, "get") else None
    return case.backend == "torch" and (
        implementation.startswith("compile") or mode not in (None, "", "off")
    )


def in_process(cases: Sequence[Any]) -> bool | None:
    """Whether this run's compiled cases compile in this process (None: it compiles nothing)."""
    compiled = [c for c in cases if compiles(c)]
    if not compiled:
        return None
    autotune = any(c.params.get("compile_mode") in AUTOTUNE_MODES for c in compiled)
    return len(compiled) < POOL_FROM and not autotune


_restore: list[Any] = []  # what setup changed, put back by teardown (a library caller's process)


def setup(cases: Sequence[Any]) -> None:
    """Before the run's first case: in process, unless the user chose."""
    if THREADS in os.environ or not in_process(cases):
        return
    os.environ[THREADS] = "1"
    _restore.append(lambda: os.environ.pop(THREADS, None))
    config: Any = sys.modules.get("torch._inductor.config")  # already imported (a library caller)
    if config is not None:
        before = config.compile_threads
        config.compile_threads = 1
        _restore.append(lambda: setattr(config, "compile_threads", before))


def teardown() -> None:
    """After the run's last case: the pool, if one was started, shut down now rather than waited on
    at the interpreter's exit."""
    pool = sys.modules.get("torch._inductor.async_compile")
    shutdown = getattr(pool, "shutdown_compile_workers", None)
    if shutdown is not None:
        shutdown()
    while _restore:
        _restore.pop()()
