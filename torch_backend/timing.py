"""CUDA-event timing per iteration, with the L2 cache flushed between samples for cold numbers."""

from __future__ import annotations

import time

import torch

from microbench.measure.timers import gc_paused, warm_up
from microbench.measure.types import Kernel, Prepared, Timing


def l2_flush_buffer(device: torch.device) -> torch.Tensor:
    """A buffer twice the L2 size; zeroing it evicts the op's data from L2."""
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20) or (64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.int32, device=device)


def cuda_events(prepared: Prepared, warmup: int, n: int, flush_l2: bool = True) -> Timing:
    """Device time of each iteration between two events; the flush happens outside that window."""
    device = torch.device("cuda", torch.cuda.current_device())
    warm_up(prepared, warmup)
    flush = l2_flush_buffer(device) if flush_l2 else None
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    wall: list[float] = []
    torch.cuda.synchronize()
    with gc_paused():
        for i in range(n):
            if flush is not None:
                flush.zero_()
            t0 = time.perf_counter()
            starts[i].record()
            out = prepared.call()
            ends[i].record()
            ends[i].synchronize()
            wall.append(time.perf_counter() - t0)
            del out
    samples = [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends, strict=True)]
    return Timing(
        samples_s=samples,
        source="cuda_events",
        wall_samples_s=wall,
        kernels=kernel_breakdown(prepared),
    )


def kernel_breakdown(prepared: Prepared, iterations: int = 5) -> list[Kernel]:
    """Kernel names, launches per iteration and shares from a short profiled pass (after timing)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iterations):
            out = prepared.call()
            prepared.sync(out)
            del out
    rows = []
    for avg in prof.key_averages():
        device_us = getattr(avg, "device_time_total", None)
        if device_us is None:
            device_us = getattr(avg, "cuda_time_total", 0.0)
        if device_us and avg.count:
            rows.append((avg.key, avg.count, device_us))
    total = sum(r[2] for r in rows) or 1.0
    kernels = [
        Kernel(name, count / iterations, us / count * 1e-6, us / total) for name, count, us in rows
    ]
    return sorted(kernels, key=lambda k: -k.share)
