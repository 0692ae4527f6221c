"""Device kernels attributed to timed iterations, and the per-kernel breakdown of a row.

Framework-neutral: the PyTorch CUPTI timer feeds it profiler events; tests feed it synthetic lists.
Each iteration runs inside a host-side window that ends after the device has finished (the loop blocks
on the outputs), on the clock the profiler shares between host and device, so a kernel belongs to the
window its execution lies in. Kernels outside every window (cache flushes, other work) are not counted.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from microbench.measure.types import Kernel


class AttributionError(Exception):
    """Kernels cannot be attributed to iterations (never silently replaced by host time)."""


@dataclass(frozen=True)
class KernelEvent:
    name: str
    start_ns: float
    duration_ns: float
    stream: int = 0

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass
class IterationKernels:
    kernels: list[KernelEvent] = field(default_factory=list)

    @property
    def total_ns(self) -> float:
        """Device time: the iteration's kernel durations summed (overlapping streams count twice)."""
        return sum(k.duration_ns for k in self.kernels)

    @property
    def span_ns(self) -> float:
        """Device span: first kernel start to last kernel end (gaps between kernels included)."""
        return max(k.end_ns for k in self.kernels) - min(k.start_ns for k in self.kernels)


def attribute(
    windows: Sequence[tuple[float, float]], kernels: Sequence[KernelEvent]
) -> list[IterationKernels]:
    """One IterationKernels per window, each holding the kernels that ran entirely inside it."""
    ordered = sorted(windows)
    if any(a_end > b_start for (_, a_end), (b_start, _) in zip(ordered, ordered[1:], strict=False)):
        raise AttributionError("iteration windows overlap; the loop must block between iterations")
    iterations = [IterationKernels() for _ in ordered]
    starts = [w[0] for w in ordered]
    for kernel in kernels:
        index = _window_of(kernel, ordered, starts)
        if index is not None:
            iterations[index].kernels.append(kernel)
    empty = [i for i, it in enumerate(iterations) if not it.kernels]
    if empty:
        raise AttributionError(
            f"{len(empty)} of {len(iterations)} iterations have no device kernels "
            f"(first: iteration {empty[0]}); the profiler recorded none for them"
        )
    return iterations


def _window_of(
    kernel: KernelEvent, windows: list[tuple[float, float]], starts: list[float]
) -> int | None:

    index = bisect.bisect_right(starts, kernel.start_ns) - 1
    if index < 0:
        return None
    start, end = windows[index]
    if kernel.start_ns >= start and kernel.end_ns <= end:
        return index
    if kernel.start_ns < end < kernel.end_ns:
        raise AttributionError(f"kernel {kernel.name} ran past the end of its iteration's window")
    return None


def breakdown(iterations: Sequence[object]) -> list[Kernel]:
    """Each kernel's launches per iteration, mean duration and share of device time, largest first.

    Takes anything with `total_ns` and `kernels` (each with `name` and `duration_ns`)."""
    total = sum(it.total_ns for it in iterations) or 1.0  # type: ignore[attr-defined]
    durations: dict[str, list[float]] = defaultdict(list)
    for it in iterations:
        for k in it.kernels:  # type: ignore[attr-defined]
            durations[k.name].append(k.duration_ns)
    kernels = [
        Kernel(name, len(d) / len(iterations), sum(d) / len(d) * 1e-9, sum(d) / total)
        for name, d in durations.items()
    ]
    return sorted(kernels, key=lambda k: -k.share)
