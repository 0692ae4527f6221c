"""Attention in PyTorch: F.scaled_dot_product_attention with grouped KV heads, on the first SDPA
backend (in `PREFERENCE` order) that accepts the case, named in the row."""

from __future__ import annotations

import math
from typing import Any

from accelbench.errors import unsupported
from accelbench.ops.attention import AttentionParams, outputs
from accelbench.platform.frameworks import torch
from torch_backend.arrays import Fn, register_array_op, vjp
from torch_backend.tensors import torch_dtype

PREFERENCE = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")


def sdpa(p: AttentionParams, backend: Any) -> Any:
    """(B, S, H, D) tensors in, (B, Sq, Hq, Dv) out; SDPA works on (B, H, S, D) views of them."""
    f, attention = torch.nn.functional, torch.nn.attention
    scale = 1.0 / math.sqrt(p.qk_head_dim)

    def attend(q: Any, k: Any, v: Any) -> Any:
        with attention.sdpa_kernel(backend):
            out = f.scaled_dot_product_attention(
                q.transpose(1, 2),
                k.transpose(1, 2),
                v.transpose(1, 2),
                is_causal=p.causal,
                scale=scale,
                enable_gqa=p.q_heads != p.kv_heads,
            )
        return out.transpose(1, 2)

    return attend


def choose_backend(p: AttentionParams, device: Any) -> tuple[Any, str]:
    """The first SDPA backend that runs this case on `device` (probed on a short sequence)."""
    dt, seq = torch_dtype(p.dtype), min(p.q_seq_len, 128)
    heads = (p.q_heads, p.qk_head_dim), (p.kv_heads, p.qk_head_dim), (p.kv_heads, p.v_head_dim)
    tensors = [torch.randn((1, seq, *h), dtype=dt, device=device) for h in heads]  # q, k, v
    for name in PREFERENCE:
        backend = getattr(torch.nn.attention.SDPBackend, name, None)
        if backend is None:
            continue
        try:
            with torch.no_grad():
                sdpa(p, backend)(*tensors)
        except RuntimeError:
            continue
        return backend, name.lower()
    raise unsupported("no SDPA backend runs this case")


def _attention(p: AttentionParams, device: Any) -> tuple[Fn, str]:
    backend, label = choose_backend(p, device)
    return outputs(sdpa(p, backend), p, vjp), f"sdpa:{label}"


register_array_op("tokamax_splash_attention", _attention)
