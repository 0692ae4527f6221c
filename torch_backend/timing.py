"""PyTorch timers, all under one cache policy (`cache: cold` zeroes a buffer twice the L2 before every
iteration and waits for it, outside every window).

- `cupti` (auto on GPUs): each iteration's kernel durations summed from the profiler's timestamps, as the
  JAX GPU path defines it; CUDA events around the same iterations give the launch-inclusive time.
- `cuda_graph`: iterations captured as a CUDA graph, events around each replay: launch cost almost gone.
- `cuda_events`: events around each iteration: launch-inclusive, what eager dispatch costs.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, NamedTuple

from accelbench.core.case import Case
from accelbench.core.types import Kernel, Prepared, Timing
from accelbench.measure import audit
from accelbench.measure.attribution import (
    IterationKernels,
    KernelEvent,
    Launch,
    attribute,
    breakdown,
    launched_in,
)
from accelbench.measure.timers import (
    Described,
    Metered,
    Timer,
    host_flush,
    keep_trace,
    no_flush,
    register_timer,
    timed_iterations,
    trace_session_dir,
    warm_up,
)
from accelbench.platform.frameworks import torch
from torch_backend import profiling

ITERATION = "mb::iteration"
FLUSH = "mb::flush"  # the cache flush's range: kernels launched in it are the harness's
EVENT_RECORD = "cudaEventRecord"  # the timer's events around the call bound what the call did
ANNOTATIONS = ("mb::",)  # our own ranges, which kineto mirrors onto the device timeline
GRAPH_UNROLL = 20  # iterations in one CUDA graph (a lone replay costs ~8 µs of launch on an H200)
Flush = Callable[[], None]
# Kineto's Chrome trace: what Perfetto and TensorBoard's profiler open
TRACE_FILE = ".pt.trace.json"
RUNTIME_CALL = re.compile(r"^(cuda|cu|hip)[A-Z]")  # CUDA's (HIP's) runtime and driver calls by name


class L2Flush:
    """One per device for the process, made before the first case's clock starts (`ready`)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (64 << 20)
        self.buffer = torch.empty(2 * l2 // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self.buffer.zero_()
        torch.cuda.synchronize(self.device)

    def enqueue(self) -> None:
        """The flush queued on the stream before the iteration, without waiting (cadence: sustained)."""
        self.buffer.zero_()


@functools.cache
def _l2_flush(device: str) -> L2Flush:
    return L2Flush(torch.device(device))


def flusher(case: Case, device: Any) -> Flush:
    if device.type != "cuda":
        return host_flush(case)
    return _l2_flush(str(device)) if case.run.cache == "cold" else no_flush


def ready(case: Case, device: Any) -> None:
    """What the case's GPU timer needs (the profiler started, the flush buffer), made before its clock
    starts: the first case of a process used to pay the profiler's start-up out of its max_time_s."""
    profiling.warm(device)
    flusher(case, device)


def _device(prepared: Prepared) -> Any:
    return prepared.device or torch.device("cuda", torch.cuda.current_device())


def _named(case: Case | None, window: Callable[[], Any] | None = None) -> Callable[[int], Any]:
    """Each iteration's context (a step): the case's label as an NVTX range (for Nsight), in `window`."""
    nvtx = case.label if case is not None and _nvtx_works() else None

    @contextlib.contextmanager
    def both(i: int) -> Iterator[None]:
        outer = window() if window else contextlib.nullcontext()
        with outer, torch.cuda.nvtx.range(nvtx) if nvtx else contextlib.nullcontext():
            yield

    return both


@functools.cache
def _nvtx_works() -> bool:
    """NVTX ranges exist only in a CUDA build of PyTorch."""
    try:
        torch.cuda.nvtx.range_push("mb::probe")
        torch.cuda.nvtx.range_pop()
    except RuntimeError:
        return False
    return True


def _event_loop(
    prepared: Prepared,
    n: int,
    flush: Flush,
    step: Callable[[int], Any],
    sustained: bool = False,
    flush_range: Callable[[], Any] = contextlib.nullcontext,
) -> tuple[list[float], list[float]]:
    """(event times, host wall times) in seconds: `timed_iterations`' loop, CUDA events around calls."""
    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(n)
    ]
    recorded = iter(events)

    def call() -> Any:
        start, end = next(recorded)
        start.record()
        out = prepared.call()
        end.record()
        return out

    queue_flush = getattr(flush, "enqueue", flush) if sustained else flush

    def ranged() -> None:
        with flush_range():
            queue_flush()

    wall = timed_iterations(replace(prepared, call=call), n, ranged, sustained, step)
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e-3 for s, e in events], wall


def cuda_events(prepared: Prepared, n: int, flush: Flush, sustained: bool, case: Case) -> Timing:
    """Launch-inclusive time of each iteration between two CUDA events."""
    samples, wall = _event_loop(prepared, n, flush, _named(case), sustained=sustained)
    return Timing(
        samples_s=samples, source="cuda_events", wall_samples_s=wall, launch_samples_s=list(samples)
    )


def traced_wall(case: Case) -> Timer:
    """A CPU has no device clock: the timed loop's wall times, kept as a Kineto trace."""
    from torch.autograd.profiler import record_function

    def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
        warm_up(prepared, warmup)
        device = prepared.device if prepared.device is not None else torch.device("cpu")
        flush, sustained = Metered(flusher(case, device)), case.run.cadence == "sustained"
        with profiling.recording(device) as prof:
            wall = timed_iterations(
                prepared, n, flush, sustained, lambda i: record_function(case.label)
            )
        session = trace_session_dir(case)
        keep_trace(session, TRACE_FILE, prof.export_chrome_trace)
        return Timing(
            samples_s=wall,
            source="wall_clock",
            wall_samples_s=wall,
            flush_s=flush.seconds,
            trace_path=session,
        )

    return timer


def _annotation(e: Any) -> bool:
    """A range mirrored onto the device timeline, not a kernel: ours (`mb::`), or one PyTorch records
    itself (c10d's `nccl:all_reduce` spans the NCCL kernel; counting it doubled the collectives' time)."""
    user = getattr(e, "is_user_annotation", None)
    return e.name().startswith(ANNOTATIONS) or bool(user and user())


class Kineto(NamedTuple):
    """A profiled loop as the timer reads it from Kineto's events."""

    windows: list[tuple[float, float]]  # each iteration's host range (ITERATION)
    launches: list[Launch]
    kernels: list[KernelEvent]
    flushes: list[tuple[float, float]]  # the cache flush's host ranges (FLUSH)
    calls: list[tuple[float, str]]  # synchronising host calls and event records, by host time


def windows_and_kernels(events: list[Any], device_index: int) -> Kineto:
    """Kineto's windows, kernels, launches (by correlation id) and host calls the audit reads."""
    # enum members compared, not their names: str() of each event's type was most of this reader's
    # own time (~2 µs an event; a GPU iteration has a dozen events)
    host, kernel = torch.autograd.DeviceType.CPU, torch.autograd.DeviceType.CUDA
    cpu: list[Any] = []
    device: list[Any] = []
    for e in events:
        (cpu if e.device_type() == host else device).append(e)
    # record_function also leaves a range of the same name on the device's timeline (a GPU user
    # annotation, seen on an H200 with torch 2.11): it spans the iteration's kernels and is not one of them
    kernels = [
        KernelEvent(
            e.name(),
            float(e.start_ns()),
            float(e.duration_ns()),
            int(e.device_resource_id()),
            int(e.correlation_id()),
            int(e.linked_correlation_id()),
        )
        for e in device
        if e.device_type() == kernel and e.device_index() == device_index and not _annotation(e)
    ]
    # a runtime launch shares the kernel's correlation id and links to its op; the op (recorded by
    # PyTorch itself, not CUPTI) is the second way to place a kernel whose launch record was dropped.
    # The two are counted apart, so a runtime call outside any op (links to none: the flush's wait, an
    # event record) is known by its name, never taken for an op: on an H100 such a call's id in the
    # flush equalled a timed GEMM's op id, and the GEMM was read as the flush's (issue 63)
    by_launch = {k.correlation for k in kernels}
    by_op = {k.op_correlation for k in kernels} - {0}  # 0: linked to no op
    read = Kineto([], [], kernels, [], [])
    ranges = {ITERATION: read.windows, FLUSH: read.flushes}
    for e in cpu:
        name = e.name()
        if name in ranges:
            ranges[name].append((float(e.start_ns()), float(e.end_ns())))
        if name.startswith(ANNOTATIONS):
            continue
        if name == EVENT_RECORD or audit.SYNCHRONISING.match(name):
            read.calls.append((float(e.start_ns()), name))
        runtime_call = e.linked_correlation_id() != 0 or RUNTIME_CALL.match(name) is not None
        if runtime_call and e.correlation_id() in by_launch:
            read.launches.append(Launch(int(e.correlation_id()), float(e.start_ns()), "launch"))
        elif not runtime_call and e.correlation_id() in by_op:
            read.launches.append(Launch(int(e.correlation_id()), float(e.start_ns()), "op"))
    return read


def audited_loop(read: Kineto, iterations: list[IterationKernels], blocked: bool) -> audit.Loop:
    """What the audit reads of a profiled loop: the iterations as attributed, the kernels launched in
    the flush's ranges (the harness's), every other kernel, and each window's synchronising calls
    before its end event's record (after it: the harness's own wait, where `blocked`)."""
    flushing = launched_in(sorted(read.flushes), read.launches)
    timed = {id(k) for it in iterations for k in it.kernels}
    harness: list[KernelEvent] = []
    others: list[KernelEvent] = []
    for k in read.kernels:
        if id(k) not in timed:
            (others if flushing.keys().isdisjoint(k.keys) else harness).append(k)
    calls = sorted(read.calls)
    times = [t for t, _ in calls]
    syncs = []
    for a, b in sorted(read.windows):
        inside = calls[bisect.bisect_left(times, a) : bisect.bisect_right(times, b)]
        records = [t for t, name in inside if name == EVENT_RECORD]
        end = records[-1] if records else b
        waits = [name for t, name in inside if name != EVENT_RECORD and t < end]
        syncs.append(waits[:-1] if blocked and not records else waits)
    return audit.Loop([it.kernels for it in iterations], others, harness, syncs)


def cupti(
    prepared: Prepared, n: int, flush: Flush, sustained: bool = False, case: Case | None = None
) -> Timing:
    """Device time per iteration from kernel timestamps, with the launch-inclusive events beside it:
    n iterations under the profiler, kept as a Kineto trace where the case keeps traces."""
    from torch.autograd.profiler import record_function

    device = _device(prepared)
    window = _named(case, lambda: record_function(ITERATION))
    session_start = time.perf_counter()
    with profiling.recording(device) as prof:
        loop_start = time.perf_counter()
        cold = case is not None and case.run.cache == "cold"
        marked = functools.partial(record_function, FLUSH) if cold else contextlib.nullcontext
        launch, wall = _event_loop(prepared, n, flush, window, sustained, marked)
        loop_s = time.perf_counter() - loop_start
    session = trace_session_dir(case) if case is not None else None
    keep_trace(session, TRACE_FILE, prof.export_chrome_trace)
    read = windows_and_kernels(profiling.raw_events(prof), device.index or 0)
    iterations = attribute(read.windows, read.launches, read.kernels, not sustained, read.flushes)
    audited = case is not None and case.run.audit != "off"
    found = audit.findings(audited_loop(read, iterations, not sustained)) if audited else ()
    session_s = time.perf_counter() - session_start - loop_s  # the profiler's start, stop and parse
    return Timing(
        samples_s=[it.total_ns * 1e-9 for it in iterations],
        source="cupti",
        wall_samples_s=wall,
        span_samples_s=[it.span_ns * 1e-9 for it in iterations],
        launch_samples_s=launch,
        kernels=breakdown(iterations),
        session_s=session_s,
        trace_path=session,
        audit=found,
    )


def cuda_graph(prepared: Prepared, n: int, flush: Flush, sustained: bool, case: Case) -> Timing:
    """Replays of one captured iteration, events around each replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    # capture needs the op's allocations settled on a side stream first
    with torch.cuda.stream(side):
        prepared.sync(prepared.call())
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # GRAPH_UNROLL per replay: its own launch amortised
        captured = [prepared.call() for _ in range(GRAPH_UNROLL)]
    replay = Prepared(call=graph.replay, sync=prepared.sync)
    samples, wall = _event_loop(replay, n, flush, _named(case), sustained=sustained)
    del captured
    return Timing(
        samples_s=[s / GRAPH_UNROLL for s in samples], source="cuda_graph", wall_samples_s=wall
    )


def kernel_breakdown(prepared: Prepared, iterations: int = 5) -> list[Kernel]:
    """Kernel names, launches per iteration and shares from a short profiled pass (after timing)."""
    try:
        with torch.cuda.device(_device(prepared)):
            return cupti(prepared, iterations, no_flush).kernels
    except Exception:  # a breakdown is a help, never a reason to lose the row
        return []


def host_op_breakdown(prepared: Prepared, iterations: int = 3) -> list[Kernel]:
    """On a CPU the ATen ops are the kernels: each op's calls per iteration and share of self time."""
    try:
        with profiling.recording(torch.device("cpu")) as prof:
            for _ in range(iterations):
                prepared.sync(prepared.call())
        ops = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    except Exception:  # a breakdown is a help, never a reason to lose the row
        return []
    total = sum(e.self_cpu_time_total for e in ops) or 1.0
    kernels = [
        Kernel(
            e.key,
            e.count / iterations,
            e.self_cpu_time_total / e.count * 1e-6,  # the profiler counts microseconds
            e.self_cpu_time_total / total,
        )
        for e in ops
    ]
    return sorted(kernels, key=lambda k: -k.share)


def _timer(fn: Callable[..., Timing], traced: bool = False) -> Callable[[Case], Timer]:
    """A registered timer; one not `traced` names its kernels in a short profiled pass after."""

    def factory(case: Case) -> Timer:
        def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
            device = _device(prepared)
            flush = Metered(flusher(case, device))
            with torch.cuda.device(device):
                warm_up(prepared, warmup)
                timing: Timing = fn(prepared, n, flush, case.run.cadence == "sustained", case)
            timing.flush_s = flush.seconds
            return timing

        if traced:
            return Described(timer, profiling.session_cost())
        return Described(timer, breakdown=kernel_breakdown)

    return factory


register_timer("cupti", ("torch",), auto_on=(("torch", "gpu"),))(_timer(cupti, traced=True))
register_timer("cuda_graph", ("torch",))(_timer(cuda_graph))
register_timer("cuda_events", ("torch",))(_timer(cuda_events))
