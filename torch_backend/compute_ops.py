"""The Ironwood compute ops in PyTorch, the parity twins of microbench.jax_backend.compute_ops.

fp8 GEMMs run on torch._scaled_mm where the GPU has fp8 tensor cores (SM89+). Elsewhere they
run an explicit fallback (upcast to fp32, matmul, same scaling), labelled `fp32_fallback`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from microbench.errors import unsupported
from microbench.ops.compute import TINY
from microbench.registry import Params
from torch_backend.tensors import torch_dtype

Fn = Callable[..., dict[str, torch.Tensor]]
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def has_fp8_tensor_cores(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 9)


def quantize(x: torch.Tensor, dim: int, qdtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Dynamic absmax quantization along `dim`: fp8 values and fp32 dequantization scales."""
    x32 = x.float()
    scale = x32.abs().amax(dim=dim, keepdim=True).clamp(min=TINY) / torch.finfo(qdtype).max
    return (x32 / scale).to(qdtype), scale


def _b_kn(b: torch.Tensor, p: Params) -> torch.Tensor:
    """B as a (K,N) operand; for (N,K) storage this is a free, column-major view."""
    return b if p["layout"] == "kn" else b.t()


class Gemms:
    """GEMM kernels chosen once per device: fp8 tensor cores or the labelled fallback."""

    def __init__(self, device: torch.device) -> None:
        self.fp8 = has_fp8_tensor_cores(device)
        self.device = device
        self.one = torch.ones((), dtype=torch.float32, device=device)

    @property
    def label(self) -> str:
        return "scaled_mm" if self.fp8 else "fp32_fallback"

    def fp8_mm(self, a: torch.Tensor, b_kn: torch.Tensor, sa: torch.Tensor | None, sb: torch.Tensor | None,
               out_dtype: torch.dtype) -> torch.Tensor:
        """(a @ b_kn) * sa * sb with fp32 accumulation; sa (M,1)/scalar, sb (1,N)/scalar."""
        if self.fp8:
            if a.dtype == torch.float8_e5m2 and b_kn.dtype == torch.float8_e5m2:
                raise unsupported("torch._scaled_mm has no e5m2 x e5m2 kernel")
            b_col = b_kn if b_kn.stride(0) == 1 else b_kn.t().contiguous().t()  # cuBLAS wants B column-major
            rowwise = sa is not None and sa.dim() > 0
            if rowwise and out_dtype != torch.bfloat16:
                out = torch._scaled_mm(a, b_col, self.one, self.one, out_dtype=torch.float32)
                return (out * sa * sb).to(out_dtype)
            return torch._scaled_mm(a, b_col, sa if sa is not None else self.one,
                                    sb if sb is not None else self.one, out_dtype=out_dtype)
        out = a.float() @ b_kn.float()
        if sa is not None:
            out = out * sa * sb
        return out.to(out_dtype)

    def mm(self, a: torch.Tensor, b_kn: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        if a.dtype in FP8:
            return self.fp8_mm(a, b_kn, None, None, out_dtype)
        if a.device.type == "cpu" and a.dtype in (torch.bfloat16, torch.float16):
            return (a.float() @ b_kn.float()).to(out_dtype)  # CPU half GEMMs may not accumulate in fp32
        return torch.mm(a, b_kn).to(out_dtype)


def build(name: str, p: Params, g: Gemms) -> Fn:
    bf16 = torch.bfloat16
    if name in ("gemm_multiple_run", "gemm_simple"):
        return lambda a, b: {"out": g.mm(a, _b_kn(b, p), bf16)}
    if name == "gemm_simple_with_dtype":
        odt = torch_dtype(p["out_dtype"])
        return lambda a, b: {"out": g.mm(a, _b_kn(b, p), odt)}
    if name == "gemm":
        return lambda a, b, sa, sb: {"out": g.fp8_mm(a, _b_kn(b, p), sa, sb, bf16)}
    if name == "gemm_accum":
        def accum(a: Any, b: Any, sa: Any, sb: Any, acc: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"out": acc.add_(g.fp8_mm(a, _b_kn(b, p), sa, sb, torch.float32))}
        return accum
    if name == "gemm_fp8_rowwise":
        def rowwise(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
            qa, sa = quantize(a, 1, torch.float8_e4m3fn)
            qb, sb = quantize(_b_kn(b, p), 0, torch.float8_e4m3fn)
            return {"out": g.fp8_mm(qa, qb, sa, sb, bf16)}
        return rowwise
    if name == "add":
        return lambda x, y: {"out": x + y}
    if name in ("quantization", "transpose_quantization"):
        qdt = torch_dtype(p["qdtype"])
        transpose = name.startswith("transpose")

        def quant(x: torch.Tensor) -> dict[str, torch.Tensor]:
            q, s = quantize(x.t() if transpose else x, 1, qdt)
            return {"q": q.contiguous(), "scale": s}
        return quant
    if name.endswith("static_scaling"):
        qdt = torch_dtype(p["qdtype"])
        transpose = name.startswith("transpose")
        scale = float(torch.tensor(p["scale"], dtype=torch.float32))
        return lambda x: {"q": ((x.t() if transpose else x).float() / scale).to(qdt).contiguous()}
    raise KeyError(name)
