"""The quantization family in PyTorch, the twins of microbench/ops/quantize.py."""

from __future__ import annotations

from typing import Any

from microbench.catalogue import Params
from microbench.ops.quantize import VARIANTS, Variant
from microbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.ops.gemm import quantize
from torch_backend.tensors import torch_dtype


def builder(v: Variant) -> Any:
    def build(p: Params, device: Any) -> tuple[Fn, str]:
        qdt = torch_dtype(p["qdtype"])
        if v.static:
            scale = float(torch.tensor(p["scale"], dtype=torch.float32))
            return lambda x: {
                "q": ((x.t() if v.transpose else x).float() / scale).to(qdt).contiguous()
            }, "eager"

        def fn(x: Any) -> dict[str, Any]:
            q, s = quantize(x.t() if v.transpose else x, 1, qdt)
            return {"q": q.contiguous(), "scale": s}

        return fn, "eager"

    return build


for _name, _variant in VARIANTS.items():
    register_array_op(_name, builder(_variant))
