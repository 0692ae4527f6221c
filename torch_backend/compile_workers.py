"""How Inductor compiles, decided from what a run holds (issue 53). The harness's compiled cases are
one graph each, compiled one after another: Inductor's pool of compile workers only adds its start and
its wait at exit (docs/overhead.md). So a run compiles in process (TORCHINDUCTOR_COMPILE_THREADS=1)
unless a case asks for max-autotune, whose candidate kernels the pool compiles in parallel, or the user
set the variable. Importing this module imports no part of PyTorch."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from accelbench.ops.torchao import TorchaoModelParams

THREADS = "TORCHINDUCTOR_COMPILE_THREADS"
AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")


def _mode(case: Any) -> str:
    """A model case's compile mode (off for the others: an array op compiles by implementation)."""
    return case.params.compile_mode if isinstance(case.params, TorchaoModelParams) else "off"


def compiles(case: Any) -> bool:
    """A torch case that runs torch.compile (an array op's compile implementation, a model's mode)."""
    implementation = str(case.implementation or "")
    return case.backend == "torch" and (
        implementation.startswith("compile") or _mode(case) != "off"
    )


def in_process(cases: Sequence[Any]) -> bool | None:
    """Whether this run's compiled cases compile in this process (None: it compiles nothing)."""
    compiled = [c for c in cases if compiles(c)]
    if not compiled:
        return None
    return not any(_mode(c) in AUTOTUNE_MODES for c in compiled)


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
    """After the run's last case: the compile pool, if any, shut down now, not at exit."""
    pool = sys.modules.get("torch._inductor.async_compile")
    shutdown = getattr(pool, "shutdown_compile_workers", None)
    if shutdown is not None:
        shutdown()
    while _restore:
        _restore.pop()()
