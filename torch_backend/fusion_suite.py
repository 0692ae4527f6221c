"""The fusion suite: each pattern's unfused ops against a really fused version, on the same inputs.

Fused versions: torch.addmm / torch._addmm_activation (cuBLASLt epilogues), BatchNorm folded into the
conv weights, cuDNN's fused conv+bias+ReLU on CUDA (torch.compile elsewhere), a transposed-operand
matmul, torch.compile for scale+softmax, and scaled_dot_product_attention with its backend chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from microbench.errors import unsupported, wrong_result
from microbench.measurement import Measurement, Prepared, Timing
from microbench.numerics import TOLERANCE
from microbench.plan import Case
from microbench.registry import OpSpec
from torch_backend.kernel_count import count_kernels
from torch_backend.devices import peak_memory_mb, resolve_device, synchronizer
from torch_backend.tensors import relative_error, torch_dtype

SEED_NAMES = {"linear_bias": "Linear_Bias", "linear_bias_relu": "Linear_Bias_ReLU",
              "linear_bias_gelu": "Linear_Bias_GELU", "conv_relu": "Conv2d_ReLU", "conv_bn": "Conv2d_BatchNorm",
              "conv_bn_relu": "Conv2d_BatchNorm_ReLU", "qk": "QK^T", "qk_softmax": "QK^T_Softmax",
              "attention": "FullAttention"}
Fn = Callable[[], torch.Tensor]


def _linear(p: dict[str, Any], randn: Callable[..., torch.Tensor]) -> tuple[Fn, Fn, str, tuple]:
    x, w, b = randn(p["m"], p["k"]), randn(p["n"], p["k"]) / math.sqrt(p["k"]), randn(p["n"])
    act = {"linear_bias": lambda y: y, "linear_bias_relu": F.relu,
           "linear_bias_gelu": lambda y: F.gelu(y, approximate="tanh")}[p["pattern"]]

    def unfused() -> torch.Tensor:
        y = x @ w.t()
        y = y + b
        return act(y)

    if p["pattern"] == "linear_bias":
        return unfused, lambda: torch.addmm(b, x, w.t()), "torch.addmm", (p["m"], p["k"], p["n"])
    gelu = p["pattern"] == "linear_bias_gelu"
    return (unfused, lambda: torch._addmm_activation(b, x, w.t(), use_gelu=gelu),
            "torch._addmm_activation", (p["m"], p["k"], p["n"]))


def _conv(p: dict[str, Any], randn: Callable[..., torch.Tensor], device: torch.device) -> tuple[Fn, Fn, str, tuple]:
    c_in, c_out, r = p["in_channels"], p["out_channels"], p["kernel"]
    x = randn(p["batch"], c_in, p["size"], p["size"])
    w, b = randn(c_out, c_in, r, r) / math.sqrt(c_in * r * r), randn(c_out)
    mean, var = 0.1 * randn(c_out), 1 + 0.1 * randn(c_out).abs()
    gamma, beta, eps, pad = 1 + 0.1 * randn(c_out), 0.1 * randn(c_out), 1e-5, r // 2
    has_bn, has_relu = p["pattern"] != "conv_relu", p["pattern"] != "conv_bn"

    def unfused() -> torch.Tensor:
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
    if device.type == "cuda":
        fused = lambda: torch.cudnn_convolution_relu(x, w_f, b_f, (1, 1), (pad, pad), (1, 1), 1)  # noqa: E731
        return unfused, fused, "cudnn_convolution_relu" + ("+bn_folded" if has_bn else ""), tuple(x.shape)
    compiled = torch.compile(lambda: F.relu(F.conv2d(x, w_f, b_f, padding=pad)))
    return unfused, compiled, "torch.compile" + ("+bn_folded" if has_bn else ""), tuple(x.shape)


def _sdpa_backend(device: torch.device, dtype: torch.dtype) -> Any:
    from torch.nn.attention import SDPBackend
    if device.type == "cuda" and dtype == torch.float32:
        return SDPBackend.EFFICIENT_ATTENTION  # flash kernels take only half precision
    return SDPBackend.FLASH_ATTENTION


def _attention(p: dict[str, Any], randn: Callable[..., torch.Tensor], device: torch.device,
               dtype: torch.dtype) -> tuple[Fn, Fn, str, tuple]:
    shape = (p["batch"], p["heads"], p["seq"], p["head_dim"])
    q, k, v = randn(*shape), randn(*shape), randn(*shape)
    scale = 1.0 / math.sqrt(p["head_dim"])
    if p["pattern"] == "qk":
        return (lambda: q @ k.transpose(-2, -1).contiguous(), lambda: torch.matmul(q, k.transpose(-2, -1)),
                "matmul(transposed view)", shape)

    def scores_softmax() -> torch.Tensor:
        s = q @ k.transpose(-2, -1)
        s = s * scale
        return torch.softmax(s, dim=-1)

    if p["pattern"] == "qk_softmax":
        torch._dynamo.reset()
        return scores_softmax, torch.compile(scores_softmax), "torch.compile", shape
    from torch.nn.attention import sdpa_kernel
    backend = _sdpa_backend(device, dtype)

    def fused() -> torch.Tensor:
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v)

    return (lambda: scores_softmax() @ v), fused, f"sdpa:{backend.name.lower()}", shape


def build(spec: OpSpec, p: dict[str, Any], device: torch.device) -> tuple[Fn, Fn, str, tuple]:
    dtype = torch_dtype(p["dtype"])
    g = torch.Generator(device="cpu").manual_seed(p["seed"])

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g).to(device=device, dtype=dtype)

    if spec.name == "fusion_linear":
        return _linear(p, randn)
    if spec.name == "fusion_conv":
        return _conv(p, randn, device)
    return _attention(p, randn, device, dtype)


def _time(fn: Fn, device: torch.device, backend: Any, case: Case) -> Timing:
    def call() -> torch.Tensor:
        with torch.no_grad():
            return fn()
    prepared = Prepared(call=call, sync=synchronizer(device), fetch=lambda o, n, r: np.empty(0), inputs={})
    return backend.timer(device)(prepared, case.run.warmup, case.run.num_runs)


def measure_fusion(backend: Any, case: Case, spec: OpSpec) -> Measurement:
    p = case.params
    device = resolve_device(p["device"])
    unfused, fused, fused_impl, shape = build(spec, p, device)
    try:
        with torch.no_grad():
            expected, got = unfused(), fused()
    except RuntimeError as error:  # e.g. no flash kernel for this dtype/device
        raise unsupported(f"{fused_impl} cannot run here: {str(error).splitlines()[0][:200]}") from None
    err = relative_error(got, expected)
    tol = 2 * TOLERANCE[p["dtype"]]
    if not err <= tol:
        raise wrong_result(f"fused {fused_impl} differs from the unfused ops: relative error {err:.3g} > {tol:.3g}")
    t_unfused, t_fused = _time(unfused, device, backend, case), _time(fused, device, backend, case)
    k_unfused, k_fused = count_kernels(unfused, device), count_kernels(fused, device)
    mu, mf = float(np.median(t_unfused.samples_s)), float(np.median(t_fused.samples_s))
    flops, b_fused, b_unfused = spec.flops(p), spec.bytes(p), spec.extra["unfused_bytes"](p)
    verdict = (f"fused: {k_fused:g} vs {k_unfused:g} kernels" if k_fused < k_unfused
               else f"not fused: {k_fused:g} kernels, as many as unfused ({k_unfused:g})")
    extra = {"fusion_pattern": SEED_NAMES[p["pattern"]], "input_shape": "x".join(map(str, shape)),
             "unfused_latency_ms": mu * 1e3, "fused_latency_ms": mf * 1e3,
             "unfused_gflops": flops / mu / 1e9, "fused_gflops": flops / mf / 1e9,
             "unfused_bytes": b_unfused, "fused_bytes": b_fused, "speedup_factor": mu / mf,
             "memory_reduction": 1 - b_fused / b_unfused, "unfused_kernels": k_unfused, "fused_kernels": k_fused,
             "fusion_verdict": verdict, "fused_impl": fused_impl,
             "unfused_peak_memory_mb": peak_memory_mb(unfused, device),
             "fused_peak_memory_mb": peak_memory_mb(fused, device)}
    return Measurement(timing=t_fused, device=backend.device_info_for(device), max_rel_error=err, check="passed",
                       implementation=fused_impl, extra=extra)
