"""The audit of a timed loop: what the trace its timer already read says its timed windows held
besides the op's own kernels run one after another (docs/method.md, "The audit"). Framework-neutral:
timers hand it the per-kernel events they read (`KernelEvent`); tests hand it synthetic ones."""

from __future__ import annotations

import functools
import operator
import re
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from accelbench.core.types import Finding
from accelbench.measure.attribution import KernelEvent
from accelbench.registry import register_once

GAP_NS = 2_000.0  # a gap between an iteration's kernels is idle time from this long (a device's own
# turnaround between queued kernels is about 1 µs; eager launches leave 4-10 µs)
IDLE_SHARE = 0.10  # ...and the iteration is launch-bound when such gaps are this much of its span
COPY = re.compile(r"memcpy\W*(htod|dtoh|h2d|d2h)", re.IGNORECASE)  # CUPTI's and XLA's names, first
# host calls that wait for the device (CUDA runtime and driver names, as CUPTI records them)
SYNCHRONISING = re.compile(r"^cu(da)?(Ctx|Device|Stream|Event)Synchronize|^cudaMemcpy(_v\d+)?$")


Events = Sequence[KernelEvent]


@dataclass(frozen=True)
class Loop:
    """What the audit reads of one timed loop, from the events its timer attributed."""

    iterations: Sequence[Events]  # each timed iteration's device events (device time)
    others: Events = ()  # the device's other events in the session, the harness's aside
    harness: Events = ()  # the harness's own kernels: the cache flush
    # per iteration, the synchronising host calls inside the timed call (the harness's own wait
    # after it excluded); None where the trace holds no host calls (JAX on a GPU)
    syncs: Sequence[Sequence[str]] | None = None

    @functools.cached_property
    def table(self) -> Table:
        """The iterations' events as arrays, read once for every check (docs/results_gpu.md)."""
        return Table(self.iterations)


START, DURATION, NAME, STREAM = map(
    operator.attrgetter, ("start_ns", "duration_ns", "name", "stream")
)


class Table:
    """Every timed event of a loop as arrays in iteration order, and each iteration's figures: its
    span (first start to last end), its idle gaps and what tells its kernels and streams apart."""

    def __init__(self, iterations: Sequence[Events]) -> None:
        flat = [e for it in iterations for e in it]
        counts = np.fromiter(map(len, iterations), np.int64, len(iterations))
        self.first = np.concatenate(([0], np.cumsum(counts)[:-1]))  # each iteration's first event
        self.index = np.repeat(np.arange(len(counts)), counts)
        self.start = np.fromiter(map(START, flat), float, len(flat))
        self.end = self.start + np.fromiter(map(DURATION, flat), float, len(flat))
        self.span_start = np.minimum.reduceat(self.start, self.first)
        self.span_end = np.maximum.reduceat(self.end, self.first)
        self.names = np.fromiter(map(hash, map(NAME, flat)), np.int64, len(flat))
        self.streams = np.fromiter(map(hash, map(STREAM, flat)), np.int64, len(flat))
        self.flat, self.count = flat, len(counts)

    @functools.cached_property
    def gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Every gap of GAP_NS or more between an iteration's kernels in start order (after the
        latest end so far), and the iteration each is in."""
        order = np.lexsort((self.start, self.index))
        index, start = self.index[order], self.start[order] - self.start.min()
        lift = index * (self.end.max() - self.start.min() + 1)  # each iteration above the last
        latest = np.maximum.accumulate(self.end[order] - self.start.min() + lift) - lift
        gap = start[1:] - latest[:-1]
        wide = (gap >= GAP_NS) & (index[1:] == index[:-1])
        return gap[wide], index[1:][wide]

    def during(self, events: Events) -> list[KernelEvent]:
        """The events that ran while an iteration did (between its first start and its end)."""
        if not events:
            return []
        order = np.argsort(self.span_start)
        starts, ends = self.span_start[order], self.span_end[order]
        begin = np.fromiter(map(START, events), float, len(events))
        finish = begin + np.fromiter(map(DURATION, events), float, len(events))
        at = np.searchsorted(starts, finish) - 1  # the last span begun before the event ended
        meet = (at >= 0) & (ends[np.maximum(at, 0)] > begin)
        return [e for e, m in zip(events, meet.tolist(), strict=True) if m]


Check = Callable[[Loop], tuple[float, str] | None]  # a finding's value and detail, or None
CHECKS: dict[str, Check] = {}  # by the finding's name


def check(name: str) -> Callable[[Check], Check]:
    return lambda fn: register_once(CHECKS, name, fn, "audit check")


def findings(loop: Loop, names: Sequence[str] | None = None) -> tuple[Finding, ...]:
    """Every check's finding on the loop (those of `names`, where given), in registration order."""
    if not loop.iterations:
        return ()
    chosen = names if names is not None else CHECKS
    return tuple(Finding(n, *found) for n in chosen if (found := CHECKS[n](loop)))


def _us(ns: float) -> str:
    return f"{ns / 1e3:.3g} µs"


def _busy_ns(events: Events) -> float:
    """The time at least one of the events ran (their union)."""
    busy, end = 0.0, float("-inf")
    for e in sorted(events, key=START):
        if e.end_ns > end:
            busy += e.end_ns - max(e.start_ns, end)
            end = e.end_ns
    return busy


@check("streams")
def _streams(loop: Loop) -> tuple[float, str] | None:
    """Kernels of one iteration on more than one stream: each stream's time, and how much of it ran
    at once (the device time, a sum of kernel times, counts that part once per stream)."""
    if not (loop.table.streams != loop.table.streams[0]).any():  # one stream in all
        return None
    per = []
    for it in loop.iterations:
        streams: dict[Hashable, list[KernelEvent]] = {}
        for e in it:
            streams.setdefault(e.stream, []).append(e)
        per.append(streams)
    if max(map(len, per)) < 2:  # several streams, never two in one iteration
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
    return len(names), f"{len(names)} streams per iteration ({times}); {counted}"


@check("idle_gaps")
def _idle(loop: Loop) -> tuple[float, str] | None:
    """Gaps of GAP_NS or more between an iteration's kernels, as a share of its span: the device
    waited for the host's launches, and the device time (which leaves gaps out) understates wall."""
    table = loop.table
    gap, index = table.gaps
    idle = np.bincount(index, weights=gap, minlength=table.count).astype(float)
    span = table.span_end - table.span_start
    share = float(np.median(np.divide(idle, span, out=np.zeros_like(idle), where=span > 0)))
    if share < IDLE_SHARE:
        return None
    gaps = gap.tolist()
    return share, (
        f"{share:.0%} of the median iteration's span idle in {len(gaps) / table.count:.3g} gaps "
        f"of {_us(GAP_NS)} or more (median {_us(statistics.median(gaps))}, largest "
        f"{_us(max(gaps))}): launch-bound, the device time leaves the gaps out"
    )


@check("harness_overlap")
def _harness(loop: Loop) -> tuple[float, str] | None:
    """A harness kernel (the cache flush) running while timed kernels ran: their figure is then the
    flush's too. As a share of the loop's device time."""
    near = loop.table.during(loop.harness)  # a flush outside every iteration's span: no overlap
    if not near:
        return None
    timed = [e for it in loop.iterations for e in it]
    overlap = _busy_ns(timed) + _busy_ns(near) - _busy_ns([*timed, *near])
    if overlap < 1:  # under a nanosecond: the sums' rounding, not an overlap
        return None
    device = sum(e.duration_ns for e in timed)
    return overlap / device, (
        f"the harness's cache flush ({_counted(Counter(map(NAME, near)))}) ran {_us(overlap)} "
        f"during timed kernels ({overlap / device:.1%} of the device time)"
    )


@check("host_copies")
def _copies(loop: Loop) -> tuple[float, str] | None:
    """Host<->device copies inside the timed call: data crossing the host link is timed with the op."""
    named = {name for name in set(map(NAME, loop.table.flat)) if COPY.match(name)}
    if not named:
        return None
    copies = [[e for e in it if e.name in named] for it in loop.iterations]
    count = sum(map(len, copies))
    per = count / len(copies)
    time = statistics.median(sum(e.duration_ns for e in c) for c in copies)
    return per, (
        f"{per:.3g} host<->device copies per iteration inside the timed call ({_us(time)} of its "
        "device time in the median iteration)"
    )


@check("host_sync")
def _sync(loop: Loop) -> tuple[float, str] | None:
    """Synchronising host calls inside the timed call: the host waits for the device mid-call, so
    what it launches after starts late."""
    if loop.syncs is None:
        return None
    calls = Counter(name for it in loop.syncs for name in it)
    if not calls:
        return None
    per = sum(calls.values()) / len(loop.syncs)
    named = ", ".join(f"{name} x{n}" for name, n in calls.most_common())
    return per, f"{per:.3g} synchronising host calls per iteration ({named} in all)"


@check("kernels_vary")
def _vary(loop: Loop) -> tuple[float, str] | None:
    """Iterations that launched other kernels than the rest: a compile, autotuning or a lazy
    initialisation inside the timed loop."""
    table = loop.table  # the names' hashes as multisets first (sum and xor): a clean loop stops
    sums, xors = (f.reduceat(table.names, table.first) for f in (np.add, np.bitwise_xor))
    if (sums == sums[0]).all() and (xors == xors[0]).all():
        return None
    signatures = [tuple(sorted(map(NAME, it))) for it in loop.iterations]
    common = Counter(signatures).most_common(1)[0][0]
    unlike = [i for i, s in enumerate(signatures) if s != common]
    if not unlike:
        return None
    first, usual = Counter(signatures[unlike[0]]), Counter(common)
    differs = "; ".join(
        f"{what} {_counted(kernels)}"
        for what, kernels in (("with", first - usual), ("without", usual - first))
        if kernels
    )
    return len(unlike) / len(signatures), (
        f"{len(unlike)} of {len(signatures)} iterations launched other kernels than the rest "
        f"(first: iteration {unlike[0]}, {first.total()} kernels where most have {len(common)}: "
        f"{differs})"
    )


def _counted(kernels: Counter[str]) -> str:
    """Kernel names with their counts past one, the first three by name."""
    return ", ".join(
        name[:60] + (f" x{n}" if n > 1 else "") for name, n in sorted(kernels.items())[:3]
    )


@check("foreign")
def _foreign(loop: Loop) -> tuple[float, str] | None:
    """Device events of no timed call while the loop ran: another thread's or process's work, or
    kernels whose launch the profiler did not record; none is in the device time."""
    table = loop.table
    first, last = table.span_start.min(), table.span_end.max()
    inside = [e for e in loop.others if e.start_ns < last and e.end_ns > first]
    if not inside:
        return None
    return len(inside), (
        f"{len(inside)} device events of no timed call ran during the timed loop "
        f"({_us(sum(e.duration_ns for e in inside))}; first: {inside[0].name[:60]})"
    )
