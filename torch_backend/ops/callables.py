"""A PyTorch callable given to `accelbench.bench()` (see accelbench/ops/callables.py): called as it is,
eager or compiled, on the device its first tensor lives on."""

from __future__ import annotations

from typing import Any

from accelbench.catalogue import implementation
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.ops.callables import OP, call_of, prepared
from accelbench.platform.frameworks import torch
from torch_backend.devices import default_device, synchronizer


@implementation(OP, "torch", "eager")
def torch_callable(backend: Any, case: Case) -> Prepared:
    call = call_of(case)
    tensors = [a for a in call.arg_sets[0] if isinstance(a, torch.Tensor)]
    device = tensors[0].device if tensors else default_device()
    return prepared(call, synchronizer(device), "eager", device=device)
