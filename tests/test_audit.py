"""Issue 63: the audit of each timed window (each finding present and absent on constructed loops, the
PyTorch and JAX readers on constructed and real CPU traces, `audit: flag|strict|off` through the run)
and the GPU's device state on its rows (a scripted NVML; compare names a difference; the end-of-run
note on unlocked clocks)."""

from __future__ import annotations

import csv
import json
import sys

import pytest

from accelbench.core.types import Finding
from accelbench.measure import audit
from accelbench.measure.attribution import IterationKernels, KernelEvent, Launch, attribute
from accelbench.platform import gpu_monitor
from accelbench.platform.gpu_monitor import DeviceState

US = 1_000.0  # ns


def k(name: str, start_us: float, dur_us: float, stream: int = 7) -> KernelEvent:
    return KernelEvent(name, start_us * US, dur_us * US, stream)


def clean(n: int = 5) -> list[list[KernelEvent]]:
    """n iterations, each two kernels back to back on one stream (0.5 µs apart)."""
    return [[k("gemm", 100 * i, 10), k("convert", 100 * i + 10.5, 5)] for i in range(n)]


def names(loop: audit.Loop) -> set[str]:
    return {f.name for f in audit.findings(loop)}


def test_a_clean_loop_has_an_empty_audit():
    assert audit.findings(audit.Loop(clean(), syncs=[[] for _ in range(5)])) == ()
    assert audit.findings(audit.Loop([])) == ()


def test_a_side_stream_is_named_with_each_streams_time_and_its_overlap():
    overlapping = [[*it, k("side", 100 * i + 2, 6, stream=13)] for i, it in enumerate(clean())]
    (found,) = audit.findings(audit.Loop(overlapping))
    assert found.name == "streams" and found.figure == 2
    assert "7: 15 µs" in found.detail and "13: 6 µs" in found.detail
    assert "6 µs of it overlapped" in found.detail and "counted once per stream" in found.detail
    after = [[*it, k("side", 100 * i + 20, 6, stream=13)] for i, it in enumerate(clean())]
    assert "none overlapped" in audit.findings(audit.Loop(after))[0].detail


def test_gaps_between_an_iterations_kernels_are_launch_bound_past_the_threshold():
    def spaced(gap_us: float) -> list[list[KernelEvent]]:
        return [[k("tiny", 1000 * i + j * (1 + gap_us), 1) for j in range(20)] for i in range(4)]

    (found,) = audit.findings(audit.Loop(spaced(4)))
    assert found.name == "idle_gaps" and found.figure == pytest.approx(76 / 96)
    assert "19 gaps" in found.detail and "median 4 µs" in found.detail
    assert audit.findings(audit.Loop(spaced(1))) == ()  # the device's own turnaround, not the host
    assert audit.findings(audit.Loop(clean())) == ()


def test_a_flush_overlapping_the_timed_kernels_is_named_and_one_before_them_is_not():
    during = audit.Loop(clean(), harness=[k("zero_", 205, 10, stream=9)])
    (found,) = audit.findings(during)
    assert found.name == "harness_overlap" and found.figure == pytest.approx(
        9.5 / 75
    )  # 0.5 µs between kernels
    before = audit.Loop(clean(), harness=[k("zero_", 100 * i - 30, 20) for i in range(5)])
    assert audit.findings(before) == ()


def test_host_device_copies_inside_the_call_are_named_device_copies_are_not():
    copies = [
        [
            *it,
            k("Memcpy HtoD (Pageable -> Device)", 100 * i + 15.5, 3),
            k("MemcpyD2H", 100 * i + 18.5, 2),
        ]
        for i, it in enumerate(clean())
    ]
    (found,) = audit.findings(audit.Loop(copies))
    assert found.name == "host_copies" and found.figure == 2 and "5 µs" in found.detail
    device = [
        [*it, k("Memcpy DtoD (Device -> Device)", 100 * i + 15.5, 3)]
        for i, it in enumerate(clean())
    ]
    assert audit.findings(audit.Loop(device)) == ()


def test_a_synchronising_call_inside_the_call_is_named():
    syncs = [[], [], ["cudaStreamSynchronize"], [], []]
    (found,) = audit.findings(audit.Loop(clean(), syncs=syncs))
    assert found.name == "host_sync" and found.figure == pytest.approx(0.2)
    assert "cudaStreamSynchronize x1" in found.detail
    assert audit.findings(audit.Loop(clean(), syncs=None)) == ()  # no host calls in the trace


def test_kernels_that_change_across_iterations_are_named():
    iterations = clean(6)
    iterations[4] = [*iterations[4], k("triton_autotune_bench", 100 * 4 + 20, 3)]
    (found,) = audit.findings(audit.Loop(iterations))
    assert found.name == "kernels_vary" and found.figure == pytest.approx(1 / 6)
    assert "first: iteration 4" in found.detail and "triton_autotune_bench" in found.detail


def test_device_work_of_no_timed_call_during_the_loop_is_named_and_before_it_is_not():
    during = audit.Loop(clean(), others=[k("ncclKernel_AllReduce", 250, 40, stream=3)])
    (found,) = audit.findings(during)
    assert found.name == "foreign" and found.figure == 1 and "ncclKernel" in found.detail
    assert audit.findings(audit.Loop(clean(), others=[k("warm-up", -500, 40)])) == ()


def test_rounds_keep_each_checks_largest_finding():
    from accelbench.core.types import Timing

    first = Timing([1.0], "t", audit=(Finding("streams", 2, "a"), Finding("idle_gaps", 0.5, "b")))
    first.extend(Timing([1.0], "t", audit=(Finding("idle_gaps", 0.7, "c"),)))
    assert {f.name: f.detail for f in first.audit} == {"streams": "a", "idle_gaps": "c"}


# ---- the PyTorch reader: the harness's flush, host calls, kernels of no iteration


def kineto(user_sync_in: int | None = 2, records: bool = True):
    """Five blocked iterations as the CUPTI timer reads them: each window records its start and end
    events around one launch and then waits (the harness's wait); a flush range launches the flush
    before it; one kernel was launched by nobody the loop knows."""
    from torch_backend.timing import EVENT_RECORD, Kineto

    read = Kineto([], [], [], [], [])
    for i in range(5):
        t = 1000.0 * i
        read.windows.append((t + 100, t + 200))
        read.flushes.append((t + 10, t + 60))
        read.launches.extend([Launch(i, t + 120), Launch(100 + i, t + 20)])
        read.kernels.extend(
            [
                KernelEvent("op", t + 130, 20, 7, i),
                KernelEvent("fill", t + 25, 30, 7, 100 + i),
            ]
        )
        if records:
            read.calls.extend([(t + 110, EVENT_RECORD), (t + 150, EVENT_RECORD)])
        read.calls.append((t + 160, "cudaDeviceSynchronize"))
        if i == user_sync_in:
            read.calls.append((t + 125, "cudaStreamSynchronize"))
    read.kernels.append(KernelEvent("stray", 2300, 30, 7, 999))
    return read


@pytest.mark.parametrize("records", [True, False])
def test_the_flush_is_the_harnesss_the_waits_after_the_end_event_too(records):
    torch = pytest.importorskip("torch")  # noqa: F841
    from torch_backend.timing import audited_loop

    read = kineto(records=records)
    iterations = attribute(read.windows, read.launches, read.kernels, True)
    loop = audited_loop(read, iterations, blocked=True)
    assert [e.name for e in loop.harness] == ["fill"] * 5 and [e.name for e in loop.others] == [
        "stray"
    ]
    assert loop.syncs == [[], [], ["cudaStreamSynchronize"], [], []]
    assert names(loop) == {"host_sync", "foreign"}
    quiet = kineto(user_sync_in=None, records=records)
    iterations = attribute(quiet.windows, quiet.launches, quiet.kernels, True)
    assert audited_loop(quiet, iterations, blocked=True).syncs == [[]] * 5


def test_a_flush_kernel_is_the_harnesss_whatever_its_other_record_or_where_it_ran_says():
    """Issue 63 on an H100: blocked cold loops counted the flush's fill kernel in a few iterations
    (kernels_vary). Flush 1's runtime call reads inside window 0 while its op lies in the flush's
    range; flush 3's runtime record was lost and it ran (by the device clock) inside window 3: both
    are the harness's, and the iterations read clean, blocked or sustained."""
    pytest.importorskip("torch")
    from torch_backend.timing import audited_loop

    read = kineto(user_sync_in=None)
    fills = [e for e in read.kernels if e.name == "fill"]
    read.kernels[:] = [e for e in read.kernels if e.name == "op"] + [
        KernelEvent(
            "fill",
            e.start_ns + (125 if e.correlation == 103 else 0),
            30,
            7,
            e.correlation,
            e.correlation + 500,
        )
        for e in fills
    ]
    read.launches[:] = [x for x in read.launches if x.correlation not in (101, 103)]
    read.launches.extend(Launch(e.correlation + 500, e.start_ns - 3, "op") for e in fills)
    read.launches.append(Launch(101, 190))
    for blocked in (True, False):
        bare = attribute(read.windows, read.launches, read.kernels, blocked)
        assert names(audited_loop(read, bare, blocked)) == {"kernels_vary"}  # the fault
        iterations = attribute(read.windows, read.launches, read.kernels, blocked, read.flushes)
        loop = audited_loop(read, iterations, blocked)
        assert names(loop) == set() and [e.name for e in loop.harness] == ["fill"] * 5


class Raw:
    """One of Kineto's events as `kineto_results.events()` gives it (the methods the reader calls)."""

    def __init__(self, name, start, dur, corr, linked=0, stream=7, device=False) -> None:
        import torch

        types = torch.autograd.DeviceType
        self._type = types.CUDA if device else types.CPU
        self._values = (name, start, dur, corr, linked, stream)

    def name(self):
        return self._values[0]

    def device_type(self):
        return self._type

    def device_index(self):
        return 0

    def start_ns(self):
        return self._values[1]

    def duration_ns(self):
        return self._values[2]

    def end_ns(self):
        return self._values[1] + self._values[2]

    def correlation_id(self):
        return self._values[3]

    def linked_correlation_id(self):
        return self._values[4]

    def device_resource_id(self):
        return self._values[5]

    def is_user_annotation(self):
        return False


def side_stream_loop(collide: bool) -> list[Raw]:
    """Three cold blocked iterations of a GEMM on each of two streams, as Kineto records them: a flush
    range (its fill op, the launch, the harness's wait) then the iteration range (the event records,
    two ops each launching a GEMM, the wait). CUPTI numbers runtime calls, PyTorch its ops, each from
    its own counter: `collide` gives the flush's wait before iteration 1 the id of that iteration's
    side-stream op, and iteration 2's event record the id of the next flush's fill op (as on an H100)."""
    from torch_backend.timing import EVENT_RECORD, FLUSH, ITERATION

    events = []
    for i in range(3):
        t = 1000.0 * i
        fill_op, main_op, side_op = 100 + i, 10 + i, 20 + i
        wait_id = side_op if collide and i == 1 else 900 + i
        record_id = 101 if collide and i == 0 else 950 + i
        events += [
            Raw(FLUSH, t, 200, 1),
            Raw("aten::fill_", t + 10, 20, fill_op),
            Raw("cudaLaunchKernel", t + 15, 5, 500 + i, fill_op),
            Raw("fill", t + 30, 100, 500 + i, fill_op, device=True),
            Raw("cudaDeviceSynchronize", t + 40, 100, wait_id),
            Raw(ITERATION, t + 300, 600, 2),
            Raw(EVENT_RECORD, t + 310, 2, record_id),
            Raw("aten::mm", t + 320, 30, main_op),
            Raw("cudaLaunchKernel", t + 325, 5, 600 + i, main_op),
            Raw("gemm", t + 360, 200, 600 + i, main_op, device=True),
            Raw("aten::mm", t + 340, 30, side_op),
            Raw("cudaLaunchKernel", t + 345, 5, 700 + i, side_op),
            Raw("gemm", t + 380, 200, 700 + i, side_op, stream=13, device=True),
            Raw(EVENT_RECORD, t + 400, 2, 960 + i),
            Raw("cudaDeviceSynchronize", t + 410, 180, 980 + i),
        ]
    return events


def test_a_runtime_call_outside_any_op_is_never_taken_for_an_op():
    """Issue 63 on an H100: a side-stream GEMM whose op id equalled the CUPTI id of the flush's wait was
    read as the flush's: its iteration had 2 kernels where the rest had 4 (kernels_vary), and the
    GEMM's overlap with the other stream's read as the flush running during timed kernels."""
    pytest.importorskip("torch")
    from torch_backend import timing

    def audit_of(events):
        read = timing.windows_and_kernels(events, 0)
        iterations = attribute(read.windows, read.launches, read.kernels, True, read.flushes)
        loop = timing.audited_loop(read, iterations, True)
        return [len(it.kernels) for it in iterations], {f.name for f in audit.findings(loop)}, loop

    assert audit_of(side_stream_loop(False))[:2] == ([2, 2, 2], {"streams"})
    counts, found, loop = audit_of(side_stream_loop(True))
    assert counts == [2, 2, 2] and found == {"streams"}
    assert [e.name for e in loop.harness] == ["fill"] * 3


def test_the_findings_name_what_differs_and_what_overlapped():
    iterations = [[k("memset", 100 * i, 1), k("gemm", 100 * i + 2, 10)] * 2 for i in range(5)]
    iterations[1] = iterations[1][:2]
    (varied,) = audit.findings(audit.Loop(iterations), ["kernels_vary"])
    assert varied.detail == (
        "1 of 5 iterations launched other kernels than the rest (first: iteration 1, 2 kernels "
        "where most have 4: without gemm, memset)"
    )
    iterations[1] = [*iterations[2], k("autotune", 120, 1), k("autotune", 130, 1)]
    (varied,) = audit.findings(audit.Loop(iterations), ["kernels_vary"])
    assert varied.detail.endswith("6 kernels where most have 4: with autotune x2)")
    (leak,) = audit.findings(audit.Loop(clean(), harness=[k("zero_", 205, 10)]))
    assert leak.detail.startswith(
        "the harness's cache flush (zero_) ran 9.5 µs during timed kernels"
    )


def test_a_real_pytorch_session_gives_the_flush_ranges_and_the_host_calls():
    """Kineto's own events on a CPU: the iteration and flush ranges, and a host call named as CUDA's
    synchronising calls are (a range of that name stands for it here) inside the third window."""
    torch = pytest.importorskip("torch")
    from torch.autograd.profiler import record_function

    from torch_backend import profiling, timing

    x = torch.ones(8)
    with profiling.recording(torch.device("cpu")) as prof:
        for i in range(4):
            with record_function(timing.FLUSH):
                x = x * 1
            with record_function(timing.ITERATION):
                x = x + 1
                if i == 2:
                    with record_function("cudaStreamSynchronize"):
                        x = x + 1
    read = timing.windows_and_kernels(profiling.raw_events(prof), 0)
    assert len(read.windows) == len(read.flushes) == 4 and read.kernels == []
    assert [name for _, name in read.calls] == ["cudaStreamSynchronize"]
    iterations = [IterationKernels([k("op", 10 * i, 1)]) for i in range(4)]
    loop = timing.audited_loop(read, iterations, blocked=False)
    assert loop.syncs == [[], [], ["cudaStreamSynchronize"], []]
    (found,) = audit.findings(loop, ["host_sync"])
    assert found.figure == 0.25


# ---- the JAX reader: real CPU traces, and a GPU plane of two streams beside a flush


def test_a_real_jax_trace_shows_a_recompile_on_the_fifth_call_and_another_modules_work():
    jax = pytest.importorskip("jax")
    from accelbench.jax_backend import timers, xplane

    def mb_probe(x, k):  # a static argument that changes: XLA compiles again at the fifth call
        return x * 2 if k == 0 else jax.numpy.sin(x) * jax.numpy.cos(x) + jax.numpy.exp(x)

    def other(x):
        return x - 2

    f, g = jax.jit(mb_probe, static_argnums=1), jax.jit(other)
    x = jax.numpy.ones(1000)
    for k_ in (0, 1):
        f(x, k_).block_until_ready()
    g(x).block_until_ready()

    def loop(changes: bool, interloper: bool):
        def run() -> list[float]:
            for i in range(8):
                f(x, int(changes and i >= 4)).block_until_ready()
                if interloper and i == 5:
                    g(x).block_until_ready()
            return []

        profile, _ = timers.profiled(run, None)
        read = xplane.read(profile, "jit_mb_probe", 8)
        assert read.platform == "cpu"
        return audit.Loop([i.kernels for i in read.iterations], read.others)

    checks = ["kernels_vary", "foreign"]
    assert audit.findings(loop(False, False), checks) == ()
    (varied,) = audit.findings(loop(True, False), checks)
    assert varied.name == "kernels_vary" and varied.figure == 0.5
    assert "first: iteration 4" in varied.detail
    (foreign,) = audit.findings(loop(False, True), checks)
    assert foreign.name == "foreign" and foreign.figure >= 1


def gpu_plane(lines: dict[str, list[tuple[str, float, float, str]]]):
    """A GPU device plane: per line, (kernel, start µs, duration µs, hlo_module) events."""
    from jax.profiler import ProfileData

    names = sorted({name for events in lines.values() for name, *_ in events})
    meta = {name: i + 1 for i, name in enumerate(names)}
    text = "".join(
        f'lines {{ id: {n + 1} name: "{line}" timestamp_ns: 0 '
        + " ".join(
            f"events {{ metadata_id: {meta[name]} offset_ps: {int(start * 1e6)} "
            f'duration_ps: {int(dur * 1e6)} stats {{ metadata_id: 1 str_value: "{module}" }} }}'
            for name, start, dur, module in events
        )
        + " }\n"
        for n, (line, events) in enumerate(lines.items())
    )
    text += "".join(
        f'event_metadata {{ key: {i} value {{ id: {i} name: "{name}" }} }}\n'
        for name, i in meta.items()
    )
    return ProfileData.from_text_proto(
        f'planes {{ id: 2 name: "/device:GPU:0" {text} '
        'stat_metadata { key: 1 value { id: 1 name: "hlo_module" } } }'
    )


def test_the_jax_gpu_reader_tells_streams_the_flush_and_foreign_work_apart():
    pytest.importorskip("jax")
    from accelbench.jax_backend import timers, xplane

    compute = [("gemm", 100 * i, 10, "jit_mb_gemm") for i in range(4)]
    side = [("copy", 100 * i + 2, 5, "jit_mb_gemm") for i in range(4)]
    flush = [("zeros", 100 * i - 40, 20, "jit_mb_flush") for i in range(4)]
    foreign = [("theirs", 150, 10, "jit_other")]
    clean_read = xplane.read(gpu_plane({"Stream #14(Compute)": compute + flush}), "jit_mb_gemm", 4)
    assert timers._audit(clean_read) == ()
    read = xplane.read(
        gpu_plane({"Stream #14(Compute)": compute + flush + foreign, "Stream #15(Compute)": side}),
        "jit_mb_gemm",
        4,
    )
    found = {f.name: f for f in timers._audit(read)}
    assert set(found) == {"streams", "foreign"}
    assert "Stream #14(Compute): 10 µs" in found["streams"].detail
    leaking = [("zeros", 100 * i + 5, 20, "jit_mb_flush") for i in range(4)]
    read = xplane.read(gpu_plane({"Stream #14(Compute)": compute + leaking}), "jit_mb_gemm", 4)
    assert [f.name for f in timers._audit(read)] == ["harness_overlap"]


# ---- one CUPTI a process: JAX's GPU timings after PyTorch's profiler


class OnGpu:
    """JAX as the timers module sees it, on a GPU (the rest is the real JAX)."""

    def __init__(self, jax) -> None:
        self.jax = jax

    def default_backend(self) -> str:
        return "gpu"

    def __getattr__(self, name: str):
        return getattr(self.jax, name)


@pytest.mark.parametrize(("setting", "left"), [(None, "holder"), ("1", "pending"), ("0", "holder")])
def test_a_pytorch_gpu_session_frees_cupti_only_where_the_user_asked_kineto_to(
    monkeypatch, setting, left
):
    """TEARDOWN_CUPTI is the user's: set to 1, Kineto frees CUPTI after each session and JAX may follow
    ("pending"); unset or any other value, Kineto keeps it ("holder"). A CPU session records nothing."""
    import os

    torch = pytest.importorskip("torch")
    from accelbench.platform import frameworks
    from torch_backend import profiling

    class Session:  # what the autograd profiler does on a GPU, without one
        def __init__(self, **options) -> None:
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            pass

    monkeypatch.setenv("TEARDOWN_CUPTI", "-")  # undone at the end whatever the session sets
    if setting is None:
        monkeypatch.delenv("TEARDOWN_CUPTI")
    else:
        monkeypatch.setenv("TEARDOWN_CUPTI", setting)
    monkeypatch.setattr(frameworks, "CUPTI", {})
    with profiling.recording(torch.device("cpu")):
        pass
    assert frameworks.CUPTI == {} and os.environ.get("TEARDOWN_CUPTI") == setting
    monkeypatch.setattr(torch.autograd.profiler, "profile", Session)
    with profiling.recording(torch.device("cuda", 0)):
        pass
    assert list(frameworks.CUPTI) == [left]
    assert frameworks.CUPTI[left].startswith("PyTorch's profiler")
    assert os.environ.get("TEARDOWN_CUPTI") == setting


def test_jax_gpu_timings_where_another_profiler_holds_cupti_are_unsupported_saying_why(monkeypatch):
    """Known (a PyTorch GPU session kept CUPTI): refused before any session, so XLA never tries and
    prints nothing. Unknown, or PyTorch's teardown pending: tried; a GPU trace without a GPU plane (the
    CPU trace here, JAX told it is on a GPU) is refused naming the holder, and the next case before it
    starts."""
    jax = pytest.importorskip("jax")
    import accelbench
    from accelbench.errors import Status
    from accelbench.jax_backend import timers
    from accelbench.platform import frameworks

    monkeypatch.setattr(timers, "jax", OnGpu(jax))
    monkeypatch.setattr(timers, "session_cost", lambda: 0.01)  # not cached from a pretend GPU
    x = jax.numpy.ones(64)
    monkeypatch.setattr(
        frameworks, "CUPTI", {"holder": "PyTorch's profiler (a PyTorch GPU timing ran first)"}
    )
    row = accelbench.bench(lambda x: x + 1, x, timer="xprof", cache="warm").row
    assert row.status is Status.UNSUPPORTED and row.identity.error == (
        "no JAX device time in this process: CUPTI is held by PyTorch's profiler (a PyTorch GPU "
        "timing ran first); time JAX before PyTorch, or in a process of its own"
    )
    for before, holder in (
        ({}, "another profiler in this process"),
        (
            {"pending": "PyTorch's profiler (its teardown late)"},
            "PyTorch's profiler (its teardown late)",
        ),
    ):
        monkeypatch.setattr(frameworks, "CUPTI", dict(before))
        for _ in range(2):  # found from the trace, then refused before it
            row = accelbench.bench(lambda x: x + 1, x, timer="xprof", cache="warm").row
            assert row.status is Status.UNSUPPORTED
            assert f"CUPTI is held by {holder};" in row.identity.error
    monkeypatch.setattr(timers, "jax", jax)  # on the CPU it is: no CUPTI asked for
    assert accelbench.bench(lambda x: x + 1, x, timer="xprof", cache="warm").ok


def test_a_frameworks_native_stderr_is_its_loggers_records_not_the_terminals(capfd):
    import logging
    import os

    from accelbench.platform import chatter

    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    try:
        with chatter.native_stderr("jax"):
            os.write(
                2,
                b"E1127 cupti_error_manager.cc:45] cuptiSubscribe: ignored due to a previous error.\n\n",
            )
    finally:
        logger.removeHandler(handler)
    assert capfd.readouterr().err == ""
    (record,) = seen  # the blank line dropped
    assert record.levelno == logging.WARNING
    assert record.getMessage().endswith("] cuptiSubscribe: ignored due to a previous error.")


# ---- the policy: flag, strict, off; what an op's work is made of


def test_strict_makes_a_finding_an_error_and_an_ops_own_work_is_no_finding():
    from accelbench.catalogue import get_spec
    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.errors import CaseFailure, Status
    from accelbench.measure.procedure import audited

    def case(op: str, params: dict, policy: str) -> Case:
        typed = get_spec(op).resolve(params, "test")
        return Case(op, "torch", typed, RunSettings(audit=policy), Outputs("x.csv"), op)

    found = (Finding("host_copies", 1, "one copy"), Finding("host_sync", 1, "one wait"))
    assert audited(case("add", {"m": 8, "n": 8}, "flag"), found) == found
    with pytest.raises(CaseFailure) as failed:
        audited(case("add", {"m": 8, "n": 8}, "strict"), found)
    assert failed.value.status is Status.ERROR and "audit (strict): host_copies: one copy" in str(
        failed.value.reason
    )
    transfer = case("host_device", {"data_size_mib": 1}, "strict")
    assert audited(transfer, found) == ()


AUDITED_RUN = """
timer: audited_clock
benchmarks:
- benchmark_name: add
  backend: jax
  num_runs: 3
  warmup: 0
  csv_path: {csv}
  benchmark_params: [{{m: 8, n: 8}}]
"""


@pytest.mark.parametrize(("policy", "status"), [(None, "ok"), ("strict", "error"), ("off", "ok")])
def test_the_audit_policy_through_the_command_line(policy, status, tmp_path, run_cli, write_yaml):
    from accelbench import registrations
    from accelbench.core.types import Timing
    from accelbench.measure import timers

    with registrations.scoped():

        @timers.register_timer("audited_clock")
        def audited_clock(case):  # a device timer's audit, as a GPU timer would find it
            def timer(prepared, warmup, n):
                timed = timers.wall_clock(prepared, warmup, n)
                found = (Finding("streams", 2, "2 streams"),) if case.run.audit != "off" else ()
                return Timing(timed.samples_s, "audited_clock", audit=found)

            return timer

        path = write_yaml(AUDITED_RUN.format(csv=tmp_path / "a.csv"))
        given = ("--audit", policy) if policy else ()
        code, out, err = run_cli("run", "--config", str(path), "--no-progress", *given)
    (row,) = csv.DictReader(open(tmp_path / "a.csv"))
    assert row["status"] == status, (out, err)
    audited_row = policy is None
    assert (row["audit"], row["audit_detail"]) == (
        ("streams=2", "streams: 2 streams") if audited_row else ("", "")
    )
    assert row["audit_mode"] == (policy or "flag")
    assert ("1 case with audit findings" in err) == audited_row
    assert (" ! " in out and "streams=2" in out) == audited_row  # the marker, the audit column
    if policy == "strict":
        assert "audit (strict): streams: 2 streams" in row["error"] and code == 1


# ---- the device state


class StateNvml:
    """pynvml as the monitor and the state reader call it: an H100 with these settings."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU, NVML_NVLINK_MAX_LINKS = 0, 1, 0, 18

    def __init__(self, **settings) -> None:
        self.app = settings.get("app", (1755, 2619))
        self.default = settings.get("default", (1755, 2619))
        self.reasons = settings.get("reasons", 0)
        self.limit_mw = settings.get("limit_mw", 700_000)

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetClockInfo(self, handle, kind) -> float:
        return 1980.0

    def nvmlDeviceGetTemperature(self, handle, kind) -> float:
        return 50.0

    def nvmlDeviceGetPowerUsage(self, handle) -> float:
        return 300_000.0

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle) -> int:
        return self.reasons

    def nvmlDeviceGetApplicationsClock(self, handle, kind) -> int:
        return self.app[kind]

    def nvmlDeviceGetDefaultApplicationsClock(self, handle, kind) -> int:
        return self.default[kind]

    def nvmlDeviceGetEnforcedPowerLimit(self, handle) -> int:
        return self.limit_mw

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle) -> int:
        return 700_000

    def nvmlDeviceGetPersistenceMode(self, handle) -> int:
        return 1

    def nvmlDeviceGetMigMode(self, handle) -> list[int]:
        return [0, 0]

    def nvmlDeviceGetEccMode(self, handle) -> list[int]:
        return [1, 1]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle) -> int:
        return 5

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle) -> int:
        return 16

    def nvmlDeviceGetNvLinkState(self, handle, link) -> int:
        return 1

    def nvmlDeviceGetNvLinkVersion(self, handle, link) -> int:
        return 4


def test_the_state_nvml_gives_is_read_and_a_missing_query_leaves_its_column_blank(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", StateNvml())
    state = gpu_monitor.read_state(0)
    assert state == DeviceState(
        "default",
        None,
        None,
        1755,
        700.0,
        700.0,
        True,
        False,
        True,
        "gen5 x16",
        "18 links, version 4",
    )
    monkeypatch.setitem(sys.modules, "pynvml", StateNvml(app=(1410, 2619)))
    state = gpu_monitor.read_state(0)
    assert (state.clocks_set, state.sm_clock_set_mhz, state.memory_clock_set_mhz) == (
        "application",
        1410,
        2619,
    )
    monkeypatch.setitem(sys.modules, "pynvml", StateNvml())
    assert gpu_monitor.read_state(0, reasons=0x2).clocks_set == "locked"  # seen under load
    bare = StateNvml()
    del StateNvml.nvmlDeviceGetEccMode
    try:
        monkeypatch.setitem(sys.modules, "pynvml", bare)
        assert (
            gpu_monitor.read_state(0).ecc_mode is None
            and gpu_monitor.read_state(0).mig_mode is False
        )
    finally:
        StateNvml.nvmlDeviceGetEccMode = lambda self, handle: [1, 1]
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no library: a blank state, no failure
    assert gpu_monitor.read_state(0) == DeviceState()


class TwoGpus(StateNvml):
    """Two boards, told apart by their power limits (GPU 1's is 500 W) and their UUIDs."""

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetUUID(self, handle) -> bytes:
        return f"GPU-{'ab'[handle] * 8}-0000".encode()

    def nvmlDeviceGetEnforcedPowerLimit(self, handle) -> int:
        return 500_000 if handle else 700_000


@pytest.mark.parametrize(
    ("visible", "watts"), [(None, 700.0), ("1", 500.0), ("1,0", 500.0), ("GPU-bbbb", 500.0)]
)
def test_a_case_s_gpu_is_read_where_cuda_visible_devices_put_it(monkeypatch, visible, watts):
    """A `--processes` worker's GPU 0 is the host's GPU 1 (CUDA_VISIBLE_DEVICES=1); NVML numbers the
    host's: the state and the clocks are read from the board the case ran on."""
    monkeypatch.setitem(sys.modules, "pynvml", TwoGpus())
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpu_monitor.read_state(0).power_limit_w == watts
    assert gpu_monitor.nvml_handle(TwoGpus(), 0) == (0 if watts == 700.0 else 1)  # the monitor's


def test_every_gpu_row_carries_its_state_and_reads_it_back(monkeypatch, tmp_path):
    from accelbench.catalogue import get_spec
    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.core.types import CheckResult, DeviceInfo, Measurement, Timing
    from accelbench.platform import backends
    from accelbench.results.columns import header
    from accelbench.results.reading import read_rows
    from accelbench.results.writer import ResultFile
    from accelbench.run import runner

    gpu = DeviceInfo("fake GPU", 1, "gpu", "fake", "0")

    class Fake:
        name = "fake"

        def device_info(self):
            return gpu

        def measure(self, case):
            return Measurement(
                Timing([1e-3] * 5, "fake_clock"), gpu, CheckResult("strict", "passed")
            )

    from accelbench import registrations

    monkeypatch.setitem(sys.modules, "pynvml", StateNvml(limit_mw=500_000))
    with registrations.scoped():
        backends.register_backend(backends.BackendInfo("fake", 9, Fake, "accelbench.ops", "numpy"))
        params = get_spec("fault").resolve({"mode": "ok", "n": 8}, "test")
        case = Case("fault", "fake", params, RunSettings(throttle="off"), Outputs("x.csv"), "fault")
        row, _ = runner.execute(case, "run", {}, None)
    assert row.device_state.power_limit_w == 500.0 and row.device_state.clocks_set == "default"
    path = tmp_path / "r.csv"
    written = ResultFile(str(path), header(list(row.params.as_dict()), []), "cfg", resume=False)
    written.append(row)
    written.close()
    (back,) = read_rows(str(path))
    assert back.device_state == row.device_state


def test_compare_names_the_settings_two_runs_differ_in(tmp_path, run_cli):
    from test_compare_report import row, write

    write(tmp_path / "a.csv", [row(1, 1e-3, clocks_set="default", power_limit_w=700)])
    write(tmp_path / "b.csv", [row(1, 2e-3, clocks_set="default", power_limit_w=500)])
    write(tmp_path / "c.csv", [row(1, 1e-3, clocks_set="default")])  # not read: no difference
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--json")
    (pair,) = json.loads(out)["pairs"]
    assert code == 0 and pair["device_state_differs"] == ["power_limit_w 700.0 vs 500.0"]
    assert pair["verdict"] == (
        "inconclusive (conditions differ: device state power_limit_w 700.0 vs 500.0)"
    )
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "c.csv"), "--json")
    assert "device state" not in out


def test_a_run_on_unlocked_clocks_says_so_once_at_its_end(capsys):
    from accelbench.core.options import RunOptions
    from accelbench.results.records import Identity, Row
    from accelbench.run.session import report_counts

    def gpu_row(clocks: str | None) -> Row:
        return Row(
            Identity(label="x"),
            {},
            device_state=DeviceState(clocks_set=clocks, sm_clock_default_mhz=1755),
        )

    report_counts([gpu_row("default"), gpu_row("default")], [], RunOptions())
    out = capsys.readouterr().err
    assert out.count("clocks were not locked") == 1
    assert "sudo nvidia-smi --lock-gpu-clocks=1755,1755" in out and "--reset-gpu-clocks" in out
    report_counts([gpu_row("locked"), gpu_row(None)], [], RunOptions())
    assert "not locked" not in capsys.readouterr().err


def test_one_marker_for_audited_rows_in_the_summary_compare_report_and_table():
    from rich.console import Console

    from accelbench.results import compare, report
    from accelbench.results.compare_formats import grid_table
    from accelbench.results.display import AUDITED
    from accelbench.results.records import Identity, Row, TimeStats, TimingInfo
    from accelbench.results.sinks.summary import summary_table

    def timed(impl: str, audited: bool) -> Row:
        return Row(
            Identity(case_id=impl, op="add", backend="torch", implementation=impl, label=impl),
            {"m": 8, "n": 8},
            stats=TimeStats(time_median_s=1e-3, time_p10_s=1e-3, time_p90_s=1e-3),
            timing=TimingInfo(audit="streams=2" if audited else None),
        )

    rows = [timed("eager", False), timed("compile", True)]
    console = Console(width=200, record=True)
    console.print(summary_table(rows)[0])
    shown = console.export_text()
    assert shown.count(" !") == 1 and "streams=2" in shown
    grid = compare.grid(compare.pair_groups(rows, "implementation", "eager"), "impl", "eager", 0.05)
    console.print(grid_table(grid))
    assert "1.00 ms ! (1.00x)" in console.export_text() and AUDITED in grid.notes
    page = report.markdown(rows)
    assert page.count(" !") == 1 and "!: the audit found something" in page
    assert "!: the audit" not in report.markdown(rows[:1])
