"""The quantization family in PyTorch. fp4 (e2m1) values have no unpacked PyTorch dtype: they are
rounded with torchao's MX-format kernel and packed two to a byte (`torch.float4_e2m1fn_x2`, the first
element in the low nibble), the layout the block-scaled fp4 GEMMs consume.
"""

from __future__ import annotations

from typing import Any

from accelbench.errors import unsupported
from accelbench.ops.quantize import VARIANTS, QuantizeParams, StaticQuantizeParams, Variant
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.ops.gemm import quantize
from torch_backend.tensors import torch_dtype

FP4 = "float4_e2m1fn"


def fp4_packed(x32: Any) -> Any:
    """fp32 values (already within +-6) rounded to e2m1 and packed in pairs along the last axis."""
    try:
        from torchao.prototype.mx_formats.kernels import f32_to_f4_unpacked, pack_uint4
    except ImportError as error:
        raise unsupported(f"fp4 quantization in PyTorch needs torchao ({error})") from None
    return pack_uint4(f32_to_f4_unpacked(x32.contiguous())).view(torch.float4_e2m1fn_x2)


def builder(v: Variant) -> Any:
    def build(p: QuantizeParams, device: Any) -> tuple[Fn, str]:
        limit, fp4 = dtype(p.qdtype).max, dtype(p.qdtype).name == FP4
        if fp4 and (p.m if v.transpose else p.n) % 2:
            raise unsupported("packed fp4 needs an even row length")
        qdtype = None if fp4 else torch_dtype(p.qdtype)
        cast = fp4_packed if qdtype is None else (lambda t: t.to(qdtype))
        label = "torchao_fp4_pack" if fp4 else "eager"
        if isinstance(p, StaticQuantizeParams):
            scale = float(torch.tensor(p.scale, dtype=torch.float32))
            return lambda x: {
                "q": cast(
                    ((x.t() if v.transpose else x).float() / scale).clamp(-limit, limit)
                ).contiguous()
            }, label

        def fn(x: Any) -> dict[str, Any]:
            q, s = quantize(x.t() if v.transpose else x, 1, limit, cast)
            return {"q": q.contiguous(), "scale": s}

        return fn, label

    return build


for _name, _variant in VARIANTS.items():
    register_array_op(_name, builder(_variant))
