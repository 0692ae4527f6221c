"""Elementwise compute ops in PyTorch: bf16/fp16/fp32 run PyTorch's own kernels (fp32 inside, one
rounding); PyTorch has no fp8 arithmetic kernels, so fp8 inputs are upcast to fp32 and the result
rounded back (eager runs that as separate kernels, torch.compile fuses them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelbench.ops.pointwise import ADD, OPS, SIGMOID, SILU_MUL, Pointwise, PointwiseParams
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.tensors import torch_dtype

MATH: dict[Pointwise, Callable[..., Any]] = {
    ADD: lambda x, y: x + y,
    SILU_MUL: lambda x, y: torch.nn.functional.silu(x) * y,
    SIGMOID: lambda x: torch.sigmoid(x),
}


def builder(math: Callable[..., Any]) -> Callable[[PointwiseParams, Any], tuple[Fn, str]]:
    def build(p: PointwiseParams, device: Any) -> tuple[Fn, str]:
        out = torch_dtype(p.dtype)
        if out.itemsize > 1:
            return (lambda *xs: {"out": math(*xs)}), "eager"
        return (lambda *xs: {"out": math(*(x.float() for x in xs)).to(out)}), "eager"

    return build


for _name, (_op, _) in OPS.items():
    register_array_op(_name, builder(MATH[_op]))
