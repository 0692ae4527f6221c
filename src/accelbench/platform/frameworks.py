"""JAX and PyTorch, imported on first use.

Op modules name their framework at module level, but importing JAX or PyTorch costs seconds; planning,
listing and validating a config must not pay it (a bad config is answered in well under a second).
Each stand-in is a module object that imports the real module at its first attribute access and then
takes over its namespace, so later lookups are plain module attributes: torch.compile traces code that
uses it without a graph break (an importlib call on every lookup broke the graph). `sys.modules` is left
alone (a lazy placeholder module there broke PyTorch 2.11's own import on a GPU machine).
"""

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


# CUPTI, NVIDIA's tracing interface, serves one profiler a process, and XLA's tracer stops trying for
# good after one failed start: who took it from JAX here ("holder"), set where that is seen (a PyTorch
# GPU session; a JAX GPU trace without GPU events), so JAX's GPU timers refuse before they try.
CUPTI: dict[str, str] = {}
