"""How many kernels one call launches, counted with the profiler: device kernel events on CUDA, top-level
operator calls on a CPU (a compiled region counts as one), the closest CPU analogue of a launch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelbench.platform.frameworks import torch
from torch_backend import profiling

SKIP = ("ProfilerStep", "[memory]", "cudaDeviceSynchronize", "cudaStreamSynchronize")


def count_kernels(fn: Callable[[], Any], device: Any, calls: int = 3) -> float:
    with profiling.recording(device) as prof, torch.no_grad():
        for _ in range(calls):
            fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    events = prof.function_events
    if device.type == "cuda":
        kernels = [
            e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
        ]
    else:
        kernels = [e for e in events if e.cpu_parent is None and not e.name.startswith(SKIP)]
    return len(kernels) / calls
