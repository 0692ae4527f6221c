"""Elementwise compute ops in PyTorch, the twins of microbench/ops/pointwise.py."""

from __future__ import annotations

from typing import Any

from microbench.catalogue import Params
from torch_backend.arrays import Fn, register_array_op


def _add(p: Params, device: Any) -> tuple[Fn, str]:
    return (lambda x, y: {"out": x + y}), "eager"


register_array_op("add", _add)
