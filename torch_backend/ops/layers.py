"""SwiGLU and RMSNorm in PyTorch, twins of accelbench/ops/layers.py (backward through `vjp`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelbench.ops.layers import EPS, LAYERS, LayerParams
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op, vjp
from torch_backend.tensors import torch_dtype


def swiglu(x: Any) -> Any:
    a, b = x.float().chunk(2, dim=1)
    return (torch.nn.functional.silu(a) * b).to(x.dtype)


def sigmoid(x: Any) -> Any:
    return torch.sigmoid(x.float()).to(x.dtype)


def rmsnorm(x: Any, gamma: Any, out: Any) -> Any:
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(dim=1, keepdim=True) + EPS) * gamma).to(out)


def _rms_fwd(p: LayerParams) -> Fn:
    out = torch_dtype(p.dtype)
    return lambda x, gamma: {"out": rmsnorm(x, gamma, out)}


BODIES: dict[str, Callable[[LayerParams], Fn]] = {
    "swiglu_fwd": lambda p: lambda x: {"out": swiglu(x)},
    "swiglu_bwd": lambda p: lambda x, dy: {"out": vjp(swiglu, (x,), dy)[0]},
    "rmsnorm_fwd": _rms_fwd,
    "rmsnorm_bwd": lambda p: (
        lambda x, gamma, dy: {"out": vjp(lambda x: rmsnorm(x, gamma, x.dtype), (x,), dy)[0]}
    ),
    "inference_rmsnorm": _rms_fwd,
    "sigmoid_bwd": lambda p: lambda x, dy: {"out": vjp(sigmoid, (x,), dy)[0]},
}


def builder(body: Callable[[LayerParams], Fn]) -> Callable[[LayerParams, Any], tuple[Fn, str]]:
    return lambda p, device: (body(p), "eager")


for _name in LAYERS:
    register_array_op(_name, builder(BODIES[_name]))
