"""The backend registry: one row per backend (`register_backend` at run time too), which the planner,
session, runner, timers' `auto` and report read; nothing else lists backends."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelbench.registry import register_once


@dataclass(frozen=True)
class BackendInfo:
    name: str
    order: int  # cases run in this order: JAX before PyTorch (CUPTI, see docs/method.md)
    entry: str | Callable[[], object]  # "module:Class" of the backend object, or its factory
    implementations: str  # package whose modules register this backend's op implementations
    requires: str  # the module whose presence makes the backend available
    timers: str | None = None  # module registering the backend's own timers (found by discovery)
    install: str = ""  # what installs it where it is missing (the distribution's extra)
    # a module with setup(cases) and teardown(): what the backend decides from the whole run before
    # its first case (how its compiler works) and releases after its last; it imports no framework
    run_hooks: str | None = None

    @property
    def available(self) -> bool:
        return importlib.util.find_spec(self.requires) is not None

    def load(self) -> object:
        if callable(self.entry):
            return self.entry()
        module_name, cls = self.entry.split(":")
        return getattr(importlib.import_module(module_name), cls)()


BACKENDS: dict[str, BackendInfo] = {}


def register_backend(info: BackendInfo) -> BackendInfo:
    return register_once(BACKENDS, info.name, info, "backend")


# Once PyTorch's profiler (Kineto) has held CUPTI in a process, JAX's profiler gets no GPU events there,
# so JAX cases run first; the host-only backend sits between them.
register_backend(
    BackendInfo(
        "jax",
        0,
        "accelbench.jax_backend.backend:JaxBackend",
        "accelbench.ops",
        "jax",
        "accelbench.jax_backend.timers",
        "pip install 'accelbench[jax]' (a GPU: 'accelbench[gpu]', a TPU: 'accelbench[tpu]')",
    )
)
register_backend(
    BackendInfo("numpy", 1, "accelbench.numpy_backend:NumpyBackend", "accelbench.ops", "numpy")
)
register_backend(
    BackendInfo(
        "torch",
        2,
        "torch_backend.backend:TorchBackend",
        "torch_backend.ops",
        "torch",
        "torch_backend.timing",
        "pip install 'accelbench[torch]'",
        "torch_backend.compile_workers",
    )
)


def run_hooks(cases: list[Any]) -> list[Any]:
    """The run hooks of the backends these cases use, each module once."""
    names = {BACKENDS[b].run_hooks for b in {c.backend for c in cases} if b in BACKENDS}
    return [importlib.import_module(n) for n in sorted(n for n in names if n)]


def run_order(name: str) -> int:
    return BACKENDS[name].order if name in BACKENDS else len(BACKENDS)
