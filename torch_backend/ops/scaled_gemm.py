"""The quantized GEMMs in PyTorch. Each runs the kernel this device and shape allow (`kernel`), named in
the row's `implementation`: torch._scaled_mm with per-tensor or per-row/column scales, Hopper's
block-scaled scaled_mm for DeepSeek-V3 blocks, SM100's MX scaled_mm; elsewhere a labelled fallback that
dequantizes to fp32 (or to bf16 for MX, whose power-of-two scales make that exact) and runs one GEMM.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from accelbench.ops.common import FP8, TINY
from accelbench.ops.gemm import GemmParams
from accelbench.ops.scaled_gemm import RECIPES, STATIC_SCALE, Block, Scaling, block_dims
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.devices import capability
from torch_backend.ops.gemm import Gemms

QMAX = FP8.max  # a plain float: torch.compile cannot trace ml_dtypes


def block_quantize(x: Any, block: Block, s: Scaling) -> tuple[Any, Any]:
    """(e4m3 values zero-padded to whole blocks, float32 scales (rows, cols) of blocks). No fp32 copy
    of x is made: the reduction reads bf16 and the division promotes as it goes."""
    br, bc = block_dims(tuple(x.shape), block)
    rows, cols = -(-x.shape[0] // br), -(-x.shape[1] // bc)
    pad_rows, pad_cols = rows * br - x.shape[0], cols * bc - x.shape[1]
    if pad_rows or pad_cols:
        x = torch.nn.functional.pad(x, (0, pad_cols, 0, pad_rows))
    blocks = x.reshape(rows, br, cols, bc)
    if s.static:
        scale = torch.full((rows, cols), STATIC_SCALE, dtype=torch.float32, device=x.device)
    else:
        amax = torch.linalg.vector_norm(blocks, ord=math.inf, dim=(1, 3), dtype=torch.float32)
        scale = amax.clamp(min=TINY) / QMAX
        scale = torch.exp2(torch.ceil(torch.log2(scale))) if s.pow2 else scale
    q = (blocks / scale[:, None, :, None]).clamp_(-QMAX, QMAX)
    return q.reshape(rows * br, cols * bc).to(torch.float8_e4m3fn), scale


def quantize_b(b: Any, p: GemmParams, s: Scaling) -> tuple[Any, Any]:
    """B as (K,N) e4m3 and its scales. Stored (N,K), it is quantized as stored and handed over as a
    column-major view, the layout the fp8 GEMMs want, so no transposing copy is made."""
    if p.layout == "kn":
        return block_quantize(b, s.b_block, s)
    q, scale = block_quantize(b, (s.b_block[1], s.b_block[0]), s)
    return q.t(), scale.t()


def expand(q: Any, scale: Any, dtype: Any) -> Any:
    """Dequantized values: each block of q times its scale, in `dtype`."""
    r, c = q.shape[0] // scale.shape[0], q.shape[1] // scale.shape[1]
    full = scale.to(dtype).repeat_interleave(r, dim=0).repeat_interleave(c, dim=1)
    return q.to(dtype) * full


def _scaled(s: Scaling, g: Gemms) -> Callable[..., Any]:
    def run(qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
        if s.static:  # one scale per tensor: _scaled_mm's tensorwise mode takes 0-d scales
            sa, sb = sa.reshape(()), sb.reshape(())
        if s.separate_dequant:
            acc = g.fp8_mm(qa, qb, None, None, torch.float32)
            return (acc * sa * sb).to(torch.bfloat16)
        return g.fp8_mm(qa, qb, sa, sb, torch.bfloat16)

    return run


def _blockwise(qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
    f = torch.nn.functional
    return f.scaled_mm(
        qa,
        qb.t().contiguous().t(),  # B column-major
        sa.t().contiguous().t(),  # A's scales M-major
        f.ScalingType.BlockWise1x128,
        sb.t().contiguous().t(),  # B's scales K-block-major
        f.ScalingType.BlockWise128x128,
        output_dtype=torch.bfloat16,
    )


def _mx(qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
    from torchao.prototype.mx_formats.utils import to_blocked

    e8m0 = torch.float8_e8m0fnu
    scale_b = sb.t().contiguous()  # one scale per (column of B, 32 of K)
    return torch._scaled_mm(
        qa,
        qb.t().contiguous().t(),
        to_blocked(sa.to(e8m0)),
        to_blocked(scale_b.to(e8m0)),
        out_dtype=torch.bfloat16,
    )


def _dequant(dtype: Any) -> Callable[..., Any]:
    def run(qa: Any, sa: Any, qb: Any, sb: Any) -> Any:
        return (expand(qa, sa, dtype) @ expand(qb, sb, dtype)).to(torch.bfloat16)

    return run


def kernel(s: Scaling, p: GemmParams, device: Any) -> tuple[Callable[..., Any], str]:
    """The GEMM on quantized operands for this device and shape, and its label."""
    if not s.k_block:
        g = Gemms(device)
        return _scaled(s, g), g.label
    if s.pow2:  # SM100's MX scaled_mm
        if capability(device) >= (10, 0) and p.k % 32 == 0 and p.m % 128 == 0 and p.n % 128 == 0:
            return _mx, "scaled_mm:mx"
        return _dequant(torch.bfloat16), "bf16_dequant_fallback"
    # Hopper's cuBLAS block-scaled fp8 GEMM, which wants whole 128-blocks and k-blocks in fours
    blockwise = hasattr(getattr(torch.nn.functional, "ScalingType", None), "BlockWise128x128")
    if blockwise and capability(device)[0] == 9 and p.k % 512 == 0 and p.n % 128 == 0:
        return _blockwise, "scaled_mm:blockwise"
    return _dequant(torch.float32), "fp32_dequant_fallback"


def builder(s: Scaling) -> Callable[[GemmParams, Any], tuple[Fn, str]]:
    def build(p: GemmParams, device: Any) -> tuple[Fn, str]:
        gemm, label = kernel(s, p, device)

        def fn(a: Any, b: Any) -> dict[str, Any]:
            qa, sa = block_quantize(a, s.a_block, s)
            qb, sb = quantize_b(b, p, s)
            return {"out": gemm(qa, sa, qb, sb)[:, : p.n]}

        return fn, label

    return build


for _name, (_scaling, _doc) in RECIPES.items():
    register_array_op(_name, builder(_scaling))
