"""Device kernels attributed to timed iterations, and a row's per-kernel breakdown. A kernel belongs to
the host window its launch happened in (they share a correlation id): iterations may overlap on the
device, and no clock is shared between host and device. Kernels launched outside every window
(flushes, other work) are not counted."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from accelbench.core.types import Kernel


class AttributionError(Exception):
    """Kernels cannot be attributed to iterations (never silently replaced by host time)."""


@dataclass(frozen=True)
class KernelEvent:
    """A device event as a timer read it (a CUDA kernel, a TPU op, a CPU thunk): the audit's unit."""

    name: str
    start_ns: float
    duration_ns: float
    stream: Hashable = 0  # the line it is on: a CUDA stream, a trace's device line or host thread
    correlation: int = -1  # the id the kernel shares with its launch on the host
    op_correlation: int = -1  # the id of the framework op that issued the launch
    stats: dict[str, Any] = field(default_factory=dict, compare=False)  # a trace event's statistics

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns

    @property
    def keys(self) -> tuple[tuple[str, int], tuple[str, int]]:
        """The records that place it (`Launch`): its runtime call's, then its op's."""
        return ("launch", self.correlation), ("op", self.op_correlation)


@dataclass(frozen=True)
class Launch:
    """A host-side launch (cudaLaunchKernel, a memset, a graph launch...) and when it was issued."""

    correlation: int
    host_ns: float
    kind: str = "launch"  # "launch": a runtime call (kernel.correlation); "op": a framework op (op_correlation)


@dataclass
class IterationKernels:
    kernels: list[KernelEvent] = field(default_factory=list)
    module_ns: float | None = None  # a TPU module execution's own duration (its kernels: its ops)
    start_ns: float | None = None  # ...and start (the thermal levels' window)

    @property
    def total_ns(self) -> float:
        """Device time: a TPU module's duration, else its kernels' summed (overlaps count twice)."""
        summed = sum(k.duration_ns for k in self.kernels)
        return summed if self.module_ns is None else self.module_ns

    @property
    def span_ns(self) -> float:
        """Device span: first kernel start to last kernel end (gaps between kernels included)."""
        if not self.kernels:
            return self.total_ns
        return max(k.end_ns for k in self.kernels) - min(k.start_ns for k in self.kernels)


def launched_in(
    ranges: Sequence[tuple[float, float]], launches: Sequence[Launch]
) -> dict[tuple[str, int], int]:
    """Each launch issued inside one of the sorted, disjoint host ranges, by its key: that range's index."""
    starts = [r[0] for r in ranges]
    placed: dict[tuple[str, int], int] = {}
    for launch in launches:
        at = bisect.bisect_right(starts, launch.host_ns) - 1
        if at >= 0 and launch.host_ns <= ranges[at][1]:
            placed[(launch.kind, launch.correlation)] = at
    return placed


def attribute(
    windows: Sequence[tuple[float, float]],
    launches: Sequence[Launch],
    kernels: Sequence[KernelEvent],
    executed_inside: bool = False,
    harness: Sequence[tuple[float, float]] = (),
) -> list[IterationKernels]:
    """Per window, the kernels launched inside it. `executed_inside` (blocked): a kernel whose launch
    record was lost (5 of 100 on an H200) is placed by where it ran. `harness`: the flush's host ranges;
    a kernel either record places in one is never an iteration's (an H100's cold loops, issue 63)."""
    ordered = sorted(windows)
    if any(a_end > b_start for (_, a_end), (b_start, _) in zip(ordered, ordered[1:], strict=False)):
        raise AttributionError(
            "iteration windows overlap on the host; each must close before the next"
        )
    starts = [w[0] for w in ordered]
    window_of = launched_in(ordered, launches)
    ours = launched_in(sorted(harness), launches)
    iterations = [IterationKernels() for _ in ordered]
    for kernel in kernels:
        if not ours.keys().isdisjoint(kernel.keys):
            continue
        # the runtime call's record; where it was lost, the op that issued it
        index = next((window_of[key] for key in kernel.keys if key in window_of), None)
        if index is None and executed_inside:  # its launch record was lost: where did it run?
            at = bisect.bisect_right(starts, kernel.start_ns) - 1
            index = at if at >= 0 and kernel.end_ns <= ordered[at][1] else None
        if index is not None:
            iterations[index].kernels.append(kernel)
    empty = [i for i, it in enumerate(iterations) if not it.kernels]
    if empty:
        raise AttributionError(
            f"{len(empty)} of {len(iterations)} iterations have no device kernels "
            f"(first: iteration {empty[0]}); the profiler recorded none for them"
        )
    return iterations


def breakdown(iterations: Sequence[IterationKernels]) -> list[Kernel]:
    """Each kernel's launches per iteration, mean duration and share of device time, largest first."""
    total = sum(it.total_ns for it in iterations) or 1.0
    durations: dict[str, list[float]] = defaultdict(list)
    for it in iterations:
        for k in it.kernels:
            durations[k.name].append(k.duration_ns)
    kernels = [
        Kernel(name, len(d) / len(iterations), sum(d) / len(d) * 1e-9, sum(d) / total)
        for name, d in durations.items()
    ]
    return sorted(kernels, key=lambda k: -k.share)
