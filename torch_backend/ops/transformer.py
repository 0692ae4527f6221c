"""transformer_layer_moe in PyTorch on one device (the twin of accelbench/ops/transformer.py)."""

from __future__ import annotations

from typing import Any

from accelbench.errors import unsupported
from accelbench.ops.transformer import EPS, TransformerParams, devices_for
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op


def _layer(p: TransformerParams, device: Any) -> tuple[Fn, str]:
    if devices_for(p) > 1:
        raise unsupported("the PyTorch twin runs on one device (tp = cp = 1)")

    def fn(x: Any, w1: Any, w2: Any, w3: Any, w4: Any) -> dict[str, Any]:
        n = torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), eps=EPS).to(x.dtype)
        h = x + (n @ w1) @ w2
        return {"out": h + (h @ w3) @ w4}

    return fn, "eager"


register_array_op("transformer_layer_moe", _layer)
