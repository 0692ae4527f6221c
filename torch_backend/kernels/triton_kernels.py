"""Triton kernels: GELU (exact and tanh), SiLU and LayerNorm forward, computing in fp32.

One pass over memory each: elementwise kernels read x once and write y once; LayerNorm keeps a
whole row in registers (hidden <= MAX_HIDDEN) so x is read once."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MAX_HIDDEN = 16384
OP_CODES = {"gelu": 0, "gelu_tanh": 1, "silu": 2}


@triton.jit
def _gelu_exact(x):
    """x * Phi(x) with erfc by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7). erf is odd, so with
    q = x/2 * erfc(|x|/sqrt2): GELU = x - q for x >= 0 and q for x < 0; one exp, one division, no erff
    (libdevice's erff made this kernel compute-bound: 61% of copy bandwidth on an H200)."""
    a = tl.abs(x) * 0.7071067811865476
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    q = 0.5 * x * poly * tl.exp(-a * a)
    return tl.where(x >= 0, x - q, q)


@triton.jit
def _activation_kernel(x_ptr, y_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    if OP == 0:  # exact GELU: x * Phi(x)
        y = _gelu_exact(x)
    elif OP == 1:  # tanh approximation; tanh(z) = 1 - 2 / (exp(2z) + 1)
        z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (2.0 - 2.0 / (tl.exp(2.0 * z) + 1.0))
    else:  # SiLU / Swish: x * sigmoid(x)
        y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, hidden, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < hidden
    x = tl.load(x_ptr + row * hidden + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / hidden
    centred = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / hidden + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    tl.store(
        y_ptr + row * hidden + cols, (centred * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask
    )


# (BLOCK, num_warps) per op, chosen by timing every candidate on an H200 at 64x2048x4096 bf16
# (bench/triton_configs.py; docs/results_gpu.md). Triton's autotuner picked differently from run to run
# (exact GELU 73-82% of copy bandwidth), so the choice is fixed here.
CONFIGS = {"gelu": (4096, 4), "gelu_tanh": (2048, 4), "silu": (2048, 4)}


def activation(x: torch.Tensor, op: str) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block, warps = CONFIGS[op]
    _activation_kernel[(triton.cdiv(n, block),)](
        x, y, n, OP=OP_CODES[op], BLOCK=block, num_warps=warps
    )
    return y


def layernorm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    hidden = x.shape[-1]
    if hidden > MAX_HIDDEN:
        raise ValueError(f"hidden {hidden} > {MAX_HIDDEN}: a row no longer fits in registers")
    x = x.contiguous()
    y = torch.empty_like(x)
    block = triton.next_power_of_2(hidden)
    warps = 4 if block <= 1024 else 8 if block <= 4096 else 16
    _layernorm_kernel[(x.numel() // hidden,)](
        x, weight, bias, y, hidden, eps, BLOCK=block, num_warps=warps
    )
    return y
