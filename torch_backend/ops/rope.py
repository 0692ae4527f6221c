"""rope in PyTorch (the twin of accelbench/ops/rope.py): the same real-arithmetic complex product."""

from __future__ import annotations

from typing import Any

from accelbench.ops.rope import RopeParams, rotate
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op


def _rope(p: RopeParams, device: Any) -> tuple[Fn, str]:
    # rows of head_dim, a free view
    return (lambda x, f: {"out": rotate(x, f, torch.stack).reshape(-1, p.head_dim)}), "eager"


register_array_op("rope", _rope)
