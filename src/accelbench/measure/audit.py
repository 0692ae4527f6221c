"""The audit of a timed loop: what the trace its timer already read says its timed windows held
besides the op's own kernels run one after another (docs/method.md, "The audit").

Each check is registered under its finding's name and returns that finding, with the figure its
threshold is judged on and the figure in words, or None; a clean loop has no finding. Framework-
neutral: the PyTorch CUPTI timer and the JAX trace reader hand it the per-kernel events they read for
the device time (an event needs `name`, `start_ns`, `duration_ns`, `end_ns` and `stream`); tests hand
it synthetic ones and real CPU traces.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

from accelbench.core.types import Finding
from accelbench.registry import register_once

GAP_NS = 2_000.0  # a gap between an iteration's kernels is idle time from this long (a device's own
# turnaround between queued kernels is about 1 µs; eager launches leave 4-10 µs)
IDLE_SHARE = 0.10  # ...and the iteration is launch-bound when such gaps are this much of its span
COPY = re.compile(r"memcpy\W*(htod|dtoh|h2d|d2h)", re.IGNORECASE)  # CUPTI's and XLA's names
# host calls that wait for the device (CUDA runtime and driver names, as CUPTI records them)
SYNCHRONISING = re.compile(r"^cu(da)?(Ctx|Device|Stream|Event)Synchronize|^cudaMemcpy(_v\d+)?$")


class Event(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def start_ns(self) -> float: ...
    @property
    def duration_ns(self) -> float: ...
    @property
    def end_ns(self) -> float: ...
    @property
    def stream(self) -> Hashable: ...


@dataclass(frozen=True)
class Loop:
    """What the audit reads of one timed loop, from the events its timer attributed."""

    iterations: Sequence[Sequence[Event]]  # each timed iteration's device events (device time)
    others: Sequence[Event] = ()  # the device's other events in the session, the harness's aside
    harness: Sequence[Event] = ()  # the harness's own kernels: the cache flush
    # per iteration, the synchronising host calls inside the timed call (the harness's own wait
    # after it excluded); None where the trace holds no host calls (JAX on a GPU)
    syncs: Sequence[Sequence[str]] | None = None


Check = Callable[[Loop], Finding | None]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        return register_once(CHECKS, name, fn, "audit check")

    return register


def findings(loop: Loop, names: Sequence[str] | None = None) -> tuple[Finding, ...]:
    """Every check's finding on the loop (those of `names`, where given), in registration order."""
    if not loop.iterations:
        return ()
    chosen = (CHECKS[n] for n in names) if names is not None else CHECKS.values()
    return tuple(found for fn in chosen if (found := fn(loop)) is not None)


def _us(ns: float) -> str:
    return f"{ns / 1e3:.3g} µs"


def _busy_ns(events: Sequence[Event]) -> float:
    """The time at least one of the events ran (their union)."""
    busy, end = 0.0, float("-inf")
    for e in sorted(events, key=lambda e: e.start_ns):
        if e.end_ns > end:
            busy += e.end_ns - max(e.start_ns, end)
            end = e.end_ns
    return busy


@check("streams")
def _streams(loop: Loop) -> Finding | None:
    """Kernels of one iteration on more than one stream: each stream's time, and how much of it ran
    at once (the device time, a sum of kernel times, counts that part once per stream)."""
    per = []
    for it in loop.iterations:
        streams: dict[Hashable, list[Event]] = {}
        for e in it:
            streams.setdefault(e.stream, []).append(e)
        per.append(streams)
    if max(map(len, per)) < 2:
        return None
    names = sorted({s for streams in per for s in streams}, key=str)
    each = {
        s: statistics.median(sum(e.duration_ns for e in p.get(s, ())) for p in per) for s in names
    }
    overlap = statistics.median(
        sum(map(_busy_ns, p.values())) - _busy_ns(it)
        for p, it in zip(per, loop.iterations, strict=True)
    )
    times = ", ".join(f"{s}: {_us(t)}" for s, t in each.items())
    counted = (
        f"{_us(overlap)} of it overlapped across streams, counted once per stream in the device "
        "time (their kernels' sum)"
        if overlap > 0
        else "none overlapped: the device time is their sum"
    )
    return Finding(
        "streams", len(names), f"{len(names)} streams per iteration ({times}); {counted}"
    )


@check("idle_gaps")
def _idle(loop: Loop) -> Finding | None:
    """Gaps of GAP_NS or more between an iteration's kernels, as a share of its span: the device
    waited for the host's launches, and the device time (which leaves gaps out) understates wall."""
    shares, gaps = [], []
    for it in loop.iterations:
        ordered = sorted(it, key=lambda e: e.start_ns)
        first, end, idle = ordered[0].start_ns, ordered[0].end_ns, 0.0
        for e in ordered[1:]:
            if e.start_ns - end >= GAP_NS:
                idle += e.start_ns - end
                gaps.append(e.start_ns - end)
            end = max(end, e.end_ns)
        shares.append(idle / (end - first) if end > first else 0.0)
    share = statistics.median(shares)
    if share < IDLE_SHARE:
        return None
    return Finding(
        "idle_gaps",
        share,
        f"{share:.0%} of the median iteration's span idle in {len(gaps) / len(shares):.3g} gaps "
        f"of {_us(GAP_NS)} or more (median {_us(statistics.median(gaps))}, largest "
        f"{_us(max(gaps))}): launch-bound, the device time leaves the gaps out",
    )


@check("harness_overlap")
def _harness(loop: Loop) -> Finding | None:
    """A harness kernel (the cache flush) running while timed kernels ran: their figure is then the
    flush's too. As a share of the loop's device time."""
    timed = [e for it in loop.iterations for e in it]
    overlap = _busy_ns(timed) + _busy_ns(loop.harness) - _busy_ns([*timed, *loop.harness])
    if overlap < 1:  # under a nanosecond: the sums' rounding, not an overlap
        return None
    device = sum(e.duration_ns for e in timed)
    return Finding(
        "harness_overlap",
        overlap / device,
        f"the harness's cache flush ran {_us(overlap)} during timed kernels "
        f"({overlap / device:.1%} of the device time)",
    )


@check("host_copies")
def _copies(loop: Loop) -> Finding | None:
    """Host<->device copies inside the timed call: data crossing the host link is timed with the op."""
    copies = [[e for e in it if COPY.search(e.name)] for it in loop.iterations]
    count = sum(map(len, copies))
    if not count:
        return None
    per = count / len(copies)
    time = statistics.median(sum(e.duration_ns for e in c) for c in copies)
    return Finding(
        "host_copies",
        per,
        f"{per:.3g} host<->device copies per iteration inside the timed call ({_us(time)} of its "
        "device time in the median iteration)",
    )


@check("host_sync")
def _sync(loop: Loop) -> Finding | None:
    """Synchronising host calls inside the timed call: the host waits for the device mid-call, so
    what it launches after starts late."""
    if loop.syncs is None:
        return None
    calls = Counter(name for it in loop.syncs for name in it)
    if not calls:
        return None
    per = sum(calls.values()) / len(loop.syncs)
    named = ", ".join(f"{name} x{n}" for name, n in calls.most_common())
    return Finding(
        "host_sync", per, f"{per:.3g} synchronising host calls per iteration ({named} in all)"
    )


@check("kernels_vary")
def _vary(loop: Loop) -> Finding | None:
    """Iterations that launched other kernels than the rest: a compile, autotuning or a lazy
    initialisation inside the timed loop."""
    signatures = [tuple(sorted(e.name for e in it)) for it in loop.iterations]
    common = Counter(signatures).most_common(1)[0][0]
    unlike = [i for i, s in enumerate(signatures) if s != common]
    if not unlike:
        return None
    first = signatures[unlike[0]]
    new, gone = (
        ", ".join(sorted(set(a) - set(b))[:3]) or "none"
        for a, b in ((first, common), (common, first))
    )
    return Finding(
        "kernels_vary",
        len(unlike) / len(signatures),
        f"{len(unlike)} of {len(signatures)} iterations launched other kernels than the rest "
        f"(first: iteration {unlike[0]}, {len(first)} kernels against {len(common)}: {new} in "
        f"place of {gone})",
    )


@check("foreign")
def _foreign(loop: Loop) -> Finding | None:
    """Device events of no timed call while the loop ran: another thread's or process's work, or
    kernels whose launch the profiler did not record; none is in the device time."""
    start = min(e.start_ns for it in loop.iterations for e in it)
    end = max(e.end_ns for it in loop.iterations for e in it)
    inside = [e for e in loop.others if e.start_ns < end and e.end_ns > start]
    if not inside:
        return None
    return Finding(
        "foreign",
        len(inside),
        f"{len(inside)} device events of no timed call ran during the timed loop "
        f"({_us(sum(e.duration_ns for e in inside))}; first: {inside[0].name[:60]})",
    )
