"""Host-device transfers in PyTorch, the twin of accelbench/ops/transfers.py. Pinned host memory comes
from PyTorch's caching host allocator; pageable memory is ordinary tensors. Every iteration writes a new
destination tensor, as the JAX twin and the reference do."""

from __future__ import annotations

from typing import Any

import numpy as np

from accelbench.catalogue import implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.errors import unsupported
from accelbench.measure.numerics import check_outputs, digest_rows
from accelbench.ops.transfers import SPEC, TransferParams, finish, make_inputs
from accelbench.platform.frameworks import torch
from torch_backend.arrays import compute_device
from torch_backend.devices import synchronizer
from torch_backend.tensors import to_numpy, to_torch


@implementation("host_device", "torch", "copy")
def torch_transfer(backend: Any, case: Case) -> Prepared:
    p = params_of(case, TransferParams)
    device = compute_device(case)
    pinned = p.host_memory == "pinned"
    if pinned and device.type != "cuda":
        raise unsupported("pinned host memory needs a CUDA device")
    host = make_inputs(p, np.random.default_rng(p.seed))
    cpu = to_torch(host["x"], torch.device("cpu"))
    if p.direction == "h2d":
        source = cpu.pin_memory() if pinned else cpu

        def call() -> Any:
            return source.to(device, non_blocking=pinned, copy=True)
    else:
        source = cpu.to(device)

        def call() -> Any:
            out = torch.empty(source.shape, dtype=source.dtype, pin_memory=pinned)
            return out.copy_(source, non_blocking=pinned)

    def fetch(out: Any, name: str, rows: np.ndarray) -> np.ndarray:
        return to_numpy(out[torch.as_tensor(rows)])

    return Prepared(
        call=call,
        sync=synchronizer(device),
        check=lambda out: check_outputs(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        digest=lambda out: digest_rows(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        implementation=f"copy:{p.host_memory}",
        device=device,
        finish=finish(p),
    )
