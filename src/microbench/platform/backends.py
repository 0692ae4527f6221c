"""The backend registry: every backend's name, run order, entry point and implementation package.

The planner, the session and the runner read this table; nothing else lists backends.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class BackendInfo:
    name: str
    order: int  # cases run in this order: JAX before PyTorch (CUPTI, see docs/method.md)
    entry: str  # "module:Class" of the backend object
    implementations: str  # package whose modules register this backend's op implementations
    requires: str  # the module whose presence makes the backend available

    @property
    def available(self) -> bool:
        return importlib.util.find_spec(self.requires) is not None

    def load(self) -> object:
        module_name, cls = self.entry.split(":")
        return getattr(importlib.import_module(module_name), cls)()


# Once PyTorch's profiler (Kineto) has held CUPTI in a process, JAX's profiler gets no GPU events there,
# so JAX cases run first; the host-only backend sits between them.
BACKENDS: dict[str, BackendInfo] = {
    b.name: b
    for b in (
        BackendInfo("jax", 0, "microbench.jax_backend.backend:JaxBackend", "microbench.ops", "jax"),
        BackendInfo("numpy", 1, "microbench.numpy_backend:NumpyBackend", "microbench.ops", "numpy"),
        BackendInfo("torch", 2, "torch_backend.backend:TorchBackend", "torch_backend.ops", "torch"),
    )
}


def run_order(name: str) -> int:
    return BACKENDS[name].order if name in BACKENDS else len(BACKENDS)
