"""The device-to-device copy in PyTorch, the twin of microbench/ops/memory.py."""

from __future__ import annotations

from typing import Any

from microbench.catalogue import Params
from torch_backend.arrays import Fn, register_array_op


def _copy(p: Params, device: Any) -> tuple[Fn, str]:
    return (lambda x: {"out": x.clone()}), "eager"


register_array_op("single_device_hbm_copy", _copy)
