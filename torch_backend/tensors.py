"""Moving arrays between numpy (ml_dtypes) and torch without changing a single bit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from accelbench.errors import unsupported, wrong_result
from accelbench.measure.numerics import TOLERANCE
from accelbench.platform.dtypes import dtype
from accelbench.platform.frameworks import torch

TORCH_DTYPES = ("float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "int8")
_BITS = {1: np.uint8, 2: np.int16}  # raw bits by itemsize (torch reads no uint16 from numpy)


def torch_dtype(name: str) -> Any:
    name = dtype(name).name
    if name not in TORCH_DTYPES:
        raise unsupported(f"PyTorch has no unpacked {name} tensors")
    return getattr(torch, name)


def to_torch(array: np.ndarray, device: Any) -> Any:
    name = np.dtype(array.dtype).name
    target = torch_dtype(name)
    # always a copy: a tensor aliasing the host array would let in-place ops corrupt the reference inputs
    if name in ("float32", "float16", "int8"):
        return torch.from_numpy(np.ascontiguousarray(array)).to(device, copy=True)
    raw = np.ascontiguousarray(array).view(_BITS[array.dtype.itemsize])
    return torch.from_numpy(raw).view(target).to(device, copy=True)


def seeded_normal(seed: int, device: Any, dt: Any) -> tuple[Callable[..., Any], Any]:
    """randn(*shape) drawn on the CPU from `seed` (the same on every device), as `dt` on `device`."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    return (lambda *shape: torch.randn(*shape, generator=g).to(device=device, dtype=dt)), g


def take_rows(tensor: Any, rows: np.ndarray) -> Any:
    """tensor[rows], also for packed fp4, which has no indexing kernels (rows are of bytes there)."""
    index = torch.as_tensor(rows, device=tensor.device)
    if tensor.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        return tensor.view(torch.uint8)[index].view(tensor.dtype)
    return tensor[index]


def _unpack_fp4(t: Any) -> np.ndarray:
    """Two e2m1 codes per byte, the first in the low nibble, as ml_dtypes float4_e2m1fn values."""
    packed = t.view(torch.uint8).numpy()
    codes = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(*packed.shape[:-1], -1)
    return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn)


def to_numpy(tensor: Any) -> np.ndarray:
    t = tensor.detach().cpu().contiguous()
    if t.dtype in (torch.float32, torch.float16, torch.float64):
        return t.numpy()
    if t.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        return _unpack_fp4(t)
    bits = t.view(torch.int16 if t.element_size() == 2 else torch.uint8).numpy()
    return bits.view(dtype(str(t.dtype)).numpy)  # bfloat16 and fp8: ml_dtypes


def within(err: float, tol: float, differs: str) -> float:
    """`err`, or `wrong_result` saying what `differs` past the tolerance."""
    if not err <= tol:
        raise wrong_result(f"{differs}: relative error {err:.3g} > {tol:.3g}")
    return err


def close_to(dtype_name: str, differs: str) -> Callable[[Any, Any], float]:
    """check(out, expected): the relative error, within twice the dtype's tolerance (`within`)."""
    tol = 2 * TOLERANCE[dtype_name]
    return lambda out, expected: within(relative_error(out, expected), tol, differs)


def relative_error(actual: Any, expected: Any) -> float:
    """||actual - expected|| / ||expected||, computed where the tensors live (no host copy); NaN stays NaN."""
    a = actual.double() if actual.numel() < (1 << 24) else actual.float()
    e = expected.to(actual.device).to(a.dtype)
    if a.shape != e.shape:
        return float("inf")
    denom = torch.linalg.vector_norm(e, dtype=torch.float64).item()
    diff = torch.linalg.vector_norm(a - e, dtype=torch.float64).item()
    return diff / denom if denom > 0 else diff
