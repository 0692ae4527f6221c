"""The device-to-device copy and the STREAM kernels in PyTorch, the twins of accelbench/ops/memory.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelbench.ops.memory import STREAM_SCALAR, CopyParams, StreamParams
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.tensors import torch_dtype


def _copy(p: CopyParams, device: Any) -> tuple[Fn, str]:
    return (lambda x: {"out": x.clone()}), "eager"


register_array_op("single_device_hbm_copy", _copy)


# STREAM in PyTorch: each kernel one ATen op (triad as add with alpha: one kernel, not two)
STREAM_TORCH: dict[str, Callable[..., Any]] = {
    "copy": lambda s, x: x.clone(),
    "scale": lambda s, x: torch.mul(x, s),
    "add": lambda s, x, y: torch.add(x, y),
    "triad": lambda s, x, y: torch.add(x, y, alpha=s),
    "read_only": lambda s, x: torch.amax(x).reshape(1),
}


def _stream(p: StreamParams, device: Any) -> tuple[Fn, str]:
    if p.op_type == "write_only":  # nothing read: the scalar written to every element
        dt = torch_dtype(p.dtype)
        return (
            lambda: {"out": torch.full((p.size,), STREAM_SCALAR, dtype=dt, device=device)}
        ), "eager"
    kernel = STREAM_TORCH[p.op_type]
    return (lambda *arrays: {"out": kernel(STREAM_SCALAR, *arrays)}), "eager"


register_array_op("hbm_bandwidth", _stream)
