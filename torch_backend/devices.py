"""Device choice, synchronisation and peak-memory measurement shared by the PyTorch suites."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
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


def default_device(index: int = 0) -> Any:
    """GPU `index` where there are GPUs, else the CPU."""
    return torch.device("cuda", index) if torch.cuda.is_available() else torch.device("cpu")


def capability(device: Any) -> tuple[int, int]:
    """The CUDA compute capability (SM major, minor); (0, 0) for any other device."""
    return torch.cuda.get_device_capability(device) if device.type == "cuda" else (0, 0)


def synchronizer(device: Any) -> Callable[..., None]:
    """A sync(out) for Prepared: waits for the device's queued work (a no-op on the CPU)."""
    if device.type == "cuda":
        return lambda out=None: torch.cuda.synchronize(device)
    return lambda out=None: None


@dataclass(frozen=True)
class PeakMemory:
    """One call's device memory through CUDA's caching allocator, each over what was held before it
    (torchao's own profiling reports allocated, active and reserved peaks)."""

    allocated_bytes: int
    reserved_bytes: int

    @property
    def fragmentation_bytes(self) -> int:
        """Reserved beyond the peak allocation: block rounding and splits the allocator held unused."""
        return max(self.reserved_bytes - self.allocated_bytes, 0)


def memory_peaks(call: Callable[[], Any], device: Any) -> PeakMemory | None:
    """Peak allocation and reservation over one call, the cache emptied first (None off CUDA)."""
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    allocated, reserved = torch.cuda.memory_allocated(device), torch.cuda.memory_reserved(device)
    with torch.no_grad():
        out = call()
    torch.cuda.synchronize(device)
    del out
    return PeakMemory(
        int(torch.cuda.max_memory_allocated(device) - allocated),
        int(torch.cuda.max_memory_reserved(device) - reserved),
    )


def peak_memory_bytes(call: Callable[[], Any], device: Any) -> int | None:
    """Peak allocation during one call minus what was held before it (CUDA only; None elsewhere)."""
    peaks = memory_peaks(call, device)
    return peaks.allocated_bytes if peaks else None
