"""Device choice, synchronisation and peak-memory measurement shared by the PyTorch suites."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from accelbench.platform.frameworks import torch

_warned: set[str] = set()


def resolve_device(requested: str) -> Any:
    """The device a case runs on; a missing GPU falls back to the CPU with a warning (once)."""
    available = {
        "cuda": torch.cuda.is_available(),
        "mps": getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available(),
        "xpu": hasattr(torch, "xpu") and torch.xpu.is_available(),
        "cpu": True,
    }
    if available.get(requested):
        return torch.device(requested)
    if requested not in _warned:
        _warned.add(requested)
        print(
            f"warning: device '{requested}' is not available here; running on the CPU instead "
            f"(rows say device_kind/platform cpu)",
            file=sys.stderr,
        )
    return torch.device("cpu")


def synchronizer(device: Any) -> Callable[..., None]:
    """A sync(out) for Prepared: waits for the device's queued work (a no-op on the CPU)."""
    if device.type == "cuda":
        return lambda out=None: torch.cuda.synchronize(device)
    return lambda out=None: None


def peak_memory_bytes(call: Callable[[], Any], device: Any) -> int | None:
    """Peak allocation during one call minus what was held before it (CUDA only; None elsewhere)."""
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    with torch.no_grad():
        out = call()
    torch.cuda.synchronize(device)
    del out
    return int(torch.cuda.max_memory_allocated(device) - before)
