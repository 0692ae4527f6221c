"""JAX and PyTorch, imported on first use.

Op modules name their framework at module level, but importing JAX or PyTorch costs seconds; planning,
listing and validating a config must not pay it (a bad config is answered in well under a second).
The stand-ins below import the real module at their first attribute access and leave `sys.modules`
alone until then (a lazy placeholder module there broke PyTorch 2.11's own import on a GPU machine).
"""

from __future__ import annotations

import importlib
from typing import Any


class OnFirstUse:
    """A module imported at the first attribute access; afterwards a plain delegation."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


jax: Any = OnFirstUse("jax")
torch: Any = OnFirstUse("torch")
