"""The torchao suite's model types, (m, k, n) = (tokens, in features, out features)."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from accelbench.errors import unsupported
from accelbench.ops.torchao import ACTIVATIONS, HEAD_DIM, MLP_RATIO

_ACTIVATION = {name.lower(): getattr(nn, name) for name in ACTIVATIONS}


def _linear(k: int, n: int) -> nn.Module:
    # layers named as the rows name their gradients (`linear.weight`)
    return nn.Sequential(OrderedDict(linear=nn.Linear(k, n, bias=False)))


def _ln_linear(k: int, n: int, activation: str) -> nn.Module:
    layers = OrderedDict(norm=nn.LayerNorm(k), linear=nn.Linear(k, n, bias=False))
    return nn.Sequential(OrderedDict(layers, activation=_ACTIVATION[activation]()))


class TransformerBlock(nn.Module):
    """Pre-norm self-attention (SDPA, heads of 128) and a 4x GELU MLP; hidden size k, output size k."""

    def __init__(self, hidden: int, mlp_ratio: int = MLP_RATIO) -> None:
        super().__init__()
        self.heads = hidden // HEAD_DIM
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.proj = nn.Linear(hidden, hidden, bias=False)
        self.fc1 = nn.Linear(hidden, mlp_ratio * hidden, bias=False)
        self.fc2 = nn.Linear(mlp_ratio * hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens, hidden = x.shape
        # (1, heads, tokens, head_dim): SDPA's flash/efficient kernels need 4-D inputs (3-D falls back to math)
        q, k, v = (
            self.qkv(self.norm1(x))
            .view(1, tokens, 3, self.heads, hidden // self.heads)
            .permute(2, 0, 3, 1, 4)
        )
        attn = F.scaled_dot_product_attention(q, k, v)[0].transpose(0, 1).reshape(tokens, hidden)
        x = x + self.proj(attn)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def _transformer_block(k: int, n: int) -> nn.Module:
    if k % HEAD_DIM:
        raise unsupported(
            f"transformer_block needs k divisible by the head size {HEAD_DIM}, got k={k}"
        )
    return TransformerBlock(k)


MODELS: dict[str, Callable[[int, int], nn.Module]] = {
    "linear": _linear,
    "transformer_block": _transformer_block,
    **{f"ln_linear_{act}": functools.partial(_ln_linear, activation=act) for act in _ACTIVATION},
}


def create_model(model_type: str, k: int, n: int) -> nn.Module:
    if model_type not in MODELS:
        raise unsupported(f"model_type '{model_type}' is not defined in torch_backend/models.py")
    return MODELS[model_type](k, n)
