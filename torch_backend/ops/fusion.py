"""The fusion suite: each pattern's unfused ops against a really fused version, on the same inputs
(cuBLASLt epilogues, BatchNorm folded into the conv, cuDNN's conv+bias+ReLU or Inductor, SDPA)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from accelbench.catalogue import OpSpec, get_spec, implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared, Timing
from accelbench.errors import first_line, unsupported
from accelbench.ops.fusion import (
    CONV_STAGES,
    AttentionFusionParams,
    ConvFusionParams,
    FusionExtras,
    FusionParams,
    LinearFusionParams,
    unfused_bytes,
)
from accelbench.platform.frameworks import torch
from torch_backend.devices import peak_memory_bytes, resolve_device, synchronizer
from torch_backend.profiling import count_kernels
from torch_backend.tensors import close_to, seeded_normal, torch_dtype

SEED_NAMES = {
    "linear_bias": "Linear_Bias",
    "linear_bias_relu": "Linear_Bias_ReLU",
    "linear_bias_gelu": "Linear_Bias_GELU",
    "conv_relu": "Conv2d_ReLU",
    "conv_bn": "Conv2d_BatchNorm",
    "conv_bn_relu": "Conv2d_BatchNorm_ReLU",
    "qk": "QK^T",
    "qk_softmax": "QK^T_Softmax",
    "attention": "FullAttention",
}
Fn = Callable[[], Any]
Built = tuple[Fn, Fn, str, tuple]  # the unfused and fused calls, the fused one's name, the shape


# per linear pattern: the activation of the unfused chain, and the fused call (addmm's epilogues)
LINEAR = {
    "linear_bias": (lambda y: y, lambda b, x, wt: torch.addmm(b, x, wt), "torch.addmm"),
    "linear_bias_relu": (
        lambda y: torch.relu(y),
        lambda b, x, wt: torch._addmm_activation(b, x, wt),
        "torch._addmm_activation",
    ),
    "linear_bias_gelu": (
        lambda y: torch.nn.functional.gelu(y, approximate="tanh"),
        lambda b, x, wt: torch._addmm_activation(b, x, wt, use_gelu=True),
        "torch._addmm_activation",
    ),
}


def _linear(p: LinearFusionParams, randn: Callable[..., Any], device: Any, dtype: Any) -> Built:
    x, w, b = randn(p.m, p.k), randn(p.n, p.k) / math.sqrt(p.k), randn(p.n)
    act, fused, name = LINEAR[p.pattern]

    def unfused() -> Any:
        y = x @ w.t()
        y = y + b
        return act(y)

    return unfused, lambda: fused(b, x, w.t()), name, (p.m, p.k, p.n)


def _conv(p: ConvFusionParams, randn: Callable[..., Any], device: Any, dtype: Any) -> Built:
    F = torch.nn.functional
    c_in, c_out, r = p.in_channels, p.out_channels, p.kernel
    x = randn(p.batch, c_in, p.size, p.size)
    w, b = randn(c_out, c_in, r, r) / math.sqrt(c_in * r * r), randn(c_out)
    mean, var = 0.1 * randn(c_out), 1 + 0.1 * randn(c_out).abs()
    gamma, beta, eps, pad = 1 + 0.1 * randn(c_out), 0.1 * randn(c_out), 1e-5, r // 2
    has_bn, has_relu = CONV_STAGES[p.pattern]

    def unfused() -> Any:
        y = F.conv2d(x, w, b, padding=pad)
        if has_bn:
            y = F.batch_norm(y, mean, var, gamma, beta, training=False, eps=eps)
        return F.relu(y) if has_relu else y

    if has_bn:  # fold once, outside any timing: w' = w * g/sqrt(v+eps), b' = (b - mean) * g/sqrt(v+eps) + beta
        scale = gamma / torch.sqrt(var + eps)
        w_f, b_f = w * scale.view(-1, 1, 1, 1), (b - mean) * scale + beta
    else:
        w_f, b_f = w, b
    if not has_relu:
        return unfused, lambda: F.conv2d(x, w_f, b_f, padding=pad), "bn_folded_conv", tuple(x.shape)
    folded = "+bn_folded" if has_bn else ""
    if device.type == "cuda":
        fused = lambda: torch.cudnn_convolution_relu(x, w_f, b_f, (1, 1), (pad, pad), (1, 1), 1)  # noqa: E731
        return unfused, fused, f"cudnn_convolution_relu{folded}", tuple(x.shape)
    compiled = torch.compile(lambda: F.relu(F.conv2d(x, w_f, b_f, padding=pad)))
    return unfused, compiled, f"torch.compile{folded}", tuple(x.shape)


def _attention(
    p: AttentionFusionParams, randn: Callable[..., Any], device: Any, dtype: Any
) -> Built:
    shape = (p.batch, p.heads, p.seq, p.head_dim)
    q, k, v = randn(*shape), randn(*shape), randn(*shape)
    scale = 1.0 / math.sqrt(p.head_dim)

    def scores_softmax() -> Any:
        s = q @ k.transpose(-2, -1)
        s = s * scale
        return torch.softmax(s, dim=-1)

    def qk() -> tuple[Fn, Fn, str]:
        return (
            lambda: q @ k.transpose(-2, -1).contiguous(),
            lambda: torch.matmul(q, k.transpose(-2, -1)),
            "matmul(transposed view)",
        )

    def qk_softmax() -> tuple[Fn, Fn, str]:
        torch._dynamo.reset()
        return scores_softmax, torch.compile(scores_softmax), "torch.compile"

    def attention() -> tuple[Fn, Fn, str]:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        # the flash kernels take only half precision: fp32 on a GPU runs the efficient kernel
        fp32_gpu = device.type == "cuda" and dtype == torch.float32
        backend = SDPBackend.EFFICIENT_ATTENTION if fp32_gpu else SDPBackend.FLASH_ATTENTION

        def fused() -> Any:
            with sdpa_kernel([backend]):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)

        return (lambda: scores_softmax() @ v), fused, f"sdpa:{backend.name.lower()}"

    patterns = {"qk": qk, "qk_softmax": qk_softmax, "attention": attention}
    return (*patterns[p.pattern](), shape)


# each family's builder reads its own parameter class (the op's declared one)
FAMILIES: dict[str, Callable[..., Built]] = {
    "fusion_linear": _linear,
    "fusion_conv": _conv,
    "fusion_attention": _attention,
}


def _inputs_and_fns(spec: OpSpec, p: FusionParams, device: Any) -> Built:
    dtype = torch_dtype(p.dtype)
    randn, _ = seeded_normal(p.seed, device, dtype)
    return FAMILIES[spec.name](p, randn, device, dtype)


@implementation(tuple(FAMILIES), "torch", "fused")
def prepare_fusion(backend: Any, case: Case) -> Prepared:
    """The fused version is the op; the unfused chain is its companion and its reference."""
    spec, p = get_spec(case.op), params_of(case, FusionParams)
    device = resolve_device(p.device)
    unfused_fn, fused_fn, fused_impl, shape = _inputs_and_fns(spec, p, device)
    unfused, fused = torch.no_grad()(unfused_fn), torch.no_grad()(fused_fn)
    try:
        expected = unfused()
        fused()
    except RuntimeError as error:  # e.g. no flash kernel for this dtype/device
        raise unsupported(f"{fused_impl} cannot run here: {first_line(error, 200)}") from None
    close = close_to(p.dtype, f"fused {fused_impl} differs from the unfused ops")

    def finish(t_fused: Timing, companions: dict[str, Timing]) -> FusionExtras:
        k_unfused, k_fused = count_kernels(unfused, device), count_kernels(fused, device)
        mu, mf = companions["unfused"].median_s, t_fused.median_s
        flops, b_fused, b_unfused = spec.flops(p), spec.bytes(p), unfused_bytes(spec.name, p)
        verdict = (
            f"fused: {k_fused:g} vs {k_unfused:g} kernels"
            if k_fused < k_unfused
            else f"not fused: {k_fused:g} kernels, as many as unfused ({k_unfused:g})"
        )
        return FusionExtras(
            fusion_pattern=SEED_NAMES[p.pattern],
            input_shape="x".join(map(str, shape)),
            unfused_latency_s=mu,
            fused_latency_s=mf,
            unfused_gflop_per_s=flops / mu / 1e9,
            fused_gflop_per_s=flops / mf / 1e9,
            unfused_bytes=round(b_unfused),
            fused_bytes=round(b_fused),
            speedup_ratio=mu / mf,
            memory_reduction_pct=100 * (1 - b_fused / b_unfused),
            unfused_kernels_per_iter=k_unfused,
            fused_kernels_per_iter=k_fused,
            fusion_verdict=verdict,
            fused_impl=fused_impl,
            unfused_peak_memory_bytes=peak_memory_bytes(unfused, device),
            fused_peak_memory_bytes=peak_memory_bytes(fused, device),
        )

    sync = synchronizer(device)
    return Prepared(
        call=fused,
        sync=sync,
        check=lambda got: close(got, expected),
        implementation=fused_impl,
        device=device,
        companions={"unfused": Prepared(call=unfused, sync=sync, device=device)},
        finish=finish,
    )
