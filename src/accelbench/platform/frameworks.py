"""JAX and PyTorch imported on first use: op modules name them at module level, but planning and
validating must not pay seconds of import. A stand-in takes over the real module's namespace at its
first attribute access, so torch.compile traces later lookups without a graph break; `sys.modules` is
left alone (a lazy placeholder there broke PyTorch 2.11's own import on a GPU machine)."""

from __future__ import annotations

import importlib
import types
from typing import Any


class OnFirstUse(types.ModuleType):
    """A module imported at the first attribute access; afterwards it holds the real module's names."""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(
            {k: v for k, v in vars(module).items() if k not in ("__name__", "__spec__")}
        )
        return getattr(module, attr)


jax: Any = OnFirstUse("jax")
torch: Any = OnFirstUse("torch")


# CUPTI serves one profiler a process, and XLA's tracer stops trying after one failed start: who took it
# from JAX ("holder": a PyTorch session that keeps it, or a JAX GPU trace without GPU events), so JAX's
# GPU timers refuse first; "pending": PyTorch frees it after each session (the holder if still taken).
CUPTI: dict[str, str] = {}
