"""rope in PyTorch (the twin of accelbench/ops/rope.py): the same real-arithmetic complex product."""

from __future__ import annotations

from typing import Any

from accelbench.ops.rope import RopeParams, rotate
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op


def _rope(p: RopeParams, device: Any) -> tuple[Fn, str]:
    def fn(x: Any, f: Any) -> dict[str, Any]:
        out = rotate(x, f, lambda parts, dim: torch.stack(parts, dim))
        return {"out": out.reshape(-1, p.head_dim)}  # rows of head_dim, a free view

    return fn, "eager"


register_array_op("rope", _rope)
