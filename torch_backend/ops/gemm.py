"""The GEMM family in PyTorch. fp8 GEMMs run on torch._scaled_mm where the GPU has fp8 tensor cores
(SM89+), elsewhere on a labelled fallback (fp32 upcast, matmul, same scaling: `fp32_fallback`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from accelbench.errors import unsupported
from accelbench.ops.common import TINY
from accelbench.ops.gemm import NO_GEMM, GemmParams, GeneralizedParams, b_as_kn, epilogue
from accelbench.platform.dtypes import DType, dtype
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op
from torch_backend.devices import capability
from torch_backend.tensors import torch_dtype


def is_fp8(t: Any) -> bool:
    return t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)


def quantize(
    x: Any, dim: int, qmax: float = 448.0, cast: Callable[[Any], Any] | None = None
) -> tuple[Any, Any]:
    """Dynamic absmax quantization along `dim`: values (fp8 e4m3 unless `cast`), fp32 scales."""
    x32 = x.float()
    scale = x32.abs().amax(dim=dim, keepdim=True).clamp(min=TINY) / qmax
    scaled = x32 / scale
    return (cast(scaled) if cast else scaled.to(torch.float8_e4m3fn)), scale


class Gemms:
    """GEMM kernels chosen once per device: fp8 tensor cores or the labelled fallback."""

    def __init__(self, device: Any) -> None:
        self.fp8 = capability(device) >= (8, 9)  # fp8 tensor cores
        self.one = torch.ones((), dtype=torch.float32, device=device)
        self.label = "scaled_mm" if self.fp8 else "fp32_fallback"

    def fp8_mm(self, a: Any, b: Any, sa: Any | None, sb: Any | None, out_dtype: Any) -> Any:
        """(a @ b) * sa * sb with fp32 accumulation; b is (K,N); sa (M,1)/scalar, sb (1,N)/scalar."""
        if not self.fp8:
            out = a.float() @ b.float()
            return (out * sa * sb if sa is not None else out).to(out_dtype)
        if a.dtype == torch.float8_e5m2 and b.dtype == torch.float8_e5m2:
            raise unsupported("torch._scaled_mm has no e5m2 x e5m2 kernel")
        b_col = b if b.stride(0) == 1 else b.t().contiguous().t()  # cuBLAS wants B column-major
        if sa is not None and sa.dim() > 0 and out_dtype != torch.bfloat16:
            out = torch._scaled_mm(a, b_col, self.one, self.one, out_dtype=torch.float32)
            return (out * sa * sb).to(out_dtype)
        return torch._scaled_mm(
            a,
            b_col,
            self.one if sa is None else sa,
            self.one if sb is None else sb,
            out_dtype=out_dtype,
        )

    def mm(self, a: Any, b: Any, out_dtype: Any) -> Any:
        if is_fp8(a):
            return self.fp8_mm(a, b, None, None, out_dtype)
        if a.device.type == "cpu" and a.dtype in (torch.bfloat16, torch.float16):
            # CPU half GEMMs may not accumulate in fp32
            return (a.float() @ b.float()).to(out_dtype)
        return torch.mm(a, b).to(out_dtype)


P = TypeVar("P", GemmParams, GeneralizedParams)


def gemm_op(
    build: Callable[[P, Gemms], Fn], inputs: Callable[[Any], DType] = lambda p: p.input_dtype
) -> Callable[[P, Any], tuple[Fn, str]]:
    """An array op whose implementation label names the GEMM kernel when its `inputs` are fp8."""

    def make(p: P, device: Any) -> tuple[Fn, str]:
        g = Gemms(device)
        return build(p, g), g.label if inputs(p).peak_family == "fp8" else "eager"

    return make


def _plain(p: GemmParams, g: Gemms) -> Fn:
    odt = torch_dtype(p.output_dtype.name)
    return lambda a, b: {"out": g.mm(a, b_as_kn(b, p), odt)}


def _scaled(p: GemmParams, g: Gemms) -> Fn:
    return lambda a, b, sa, sb: {"out": g.fp8_mm(a, b_as_kn(b, p), sa, sb, torch.bfloat16)}


def _accum(p: GemmParams, g: Gemms) -> Fn:
    return lambda a, b, sa, sb, acc: {
        "out": acc.add_(g.fp8_mm(a, b_as_kn(b, p), sa, sb, torch.float32))
    }


register_array_op(
    ("gemm_multiple_run", "gemm_simple", "gemm_simple_with_dtype", "gemm_throttling"),
    gemm_op(_plain),
)
register_array_op("gemm", gemm_op(_scaled))
register_array_op("gemm_accum", gemm_op(_accum))


def _generalized(p: GeneralizedParams, g: Gemms) -> Fn:
    """gemm_generalized: the GEMM accumulated in fp32 (int32 for int8), then alpha, beta C and the
    scales in fp32, rounded once to out_dtype; a transposed fp8 A is laid out row-major first
    (torch._scaled_mm takes no other), which is part of what a transposed operand costs."""
    if p.in_dtype in NO_GEMM:
        raise unsupported(NO_GEMM[p.in_dtype])
    odt = torch_dtype(p.out_dtype)

    def operands(a: Any, b: Any) -> tuple[Any, Any]:
        a_ = a.t() if p.transpose_a else a
        if is_fp8(a_) and a_.stride(1) != 1:
            a_ = a_.contiguous()
        return a_, b.t() if p.transpose_b else b

    def product(a: Any, b: Any, out_dtype: Any) -> Any:
        if a.dtype == torch.int8:  # exact in fp32 for these magnitudes; _int_mm only on CUDA
            if a.device.type == "cuda":
                return torch._int_mm(a, b.contiguous()).to(out_dtype)
            return (a.float() @ b.float()).to(out_dtype)
        return g.mm(a, b, out_dtype)

    def fn(a: Any, b: Any, *rest: Any) -> dict[str, Any]:
        a_, b_ = operands(a, b)
        if p.plain:
            return {"out": product(a_, b_, odt)}
        out = epilogue(p, product(a_, b_, torch.float32), rest, lambda c: c.float())
        return {"out": out.to(odt)}

    return fn


register_array_op("gemm_generalized", gemm_op(_generalized, lambda p: dtype(p.in_dtype)))
