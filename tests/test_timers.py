"""The timers, with a fake prepared op: samples per iteration, warm-up, cache flush outside the timed
window, the sustained cadence, and how `auto` is resolved from the registry."""

import time

import pytest

from accelbench.core.types import Prepared
from accelbench.errors import CaseFailure, Status
from accelbench.measure import timers


class Fake:
    """A prepared op that takes `seconds` per call and records what happened, in order."""

    def __init__(self, seconds: float = 0.0):
        self.seconds = seconds
        self.events: list[str] = []

    def call(self):
        self.events.append("call")
        if self.seconds:
            time.sleep(self.seconds)
        return object()

    def sync(self, out):
        self.events.append("sync")

    def prepared(self) -> Prepared:
        return Prepared(call=self.call, sync=self.sync)


class SlowFlush:
    def __init__(self, fake: Fake, seconds: float):
        self.fake, self.seconds, self.count = fake, seconds, 0

    def __call__(self):
        self.count += 1
        self.fake.events.append("flush")
        time.sleep(self.seconds)


def test_blocked_wall_clock_takes_one_sample_per_iteration_after_its_warm_up():
    fake = Fake()
    timing = timers.wall_clock(fake.prepared(), warmup=3, n=5)
    assert timing.count == 5 and timing.source == "wall_clock"
    assert fake.events == ["call", "sync"] * 8  # every call waited for, warm-up included
    assert timing.wall_samples_s == timing.samples_s == timing.launch_samples_s


def test_the_cache_flush_runs_before_every_iteration_outside_its_window_and_is_costed(monkeypatch):
    """On a fake clock (a flush takes 1 s, a call 1 ms): no flush in any sample, and the row's
    `flush_s` is the flushes' own wall."""
    clock = [0.0]
    monkeypatch.setattr(timers.time, "perf_counter", lambda: clock[0])
    fake = Fake()

    def tick(seconds, event):
        clock[0] += seconds
        fake.events.append(event)

    fake.call = lambda: tick(1e-3, "call")
    cold = timers.Metered(lambda: tick(1.0, "flush"))
    timing = timers.wall_clock(fake.prepared(), warmup=0, n=4, flush=cold)
    assert fake.events == ["flush", "call", "sync"] * 4
    assert timing.samples_s == pytest.approx([1e-3] * 4)
    assert timing.flush_s == pytest.approx(4.0)


def test_sustained_cadence_queues_the_calls_and_waits_once():
    fake = Fake(seconds=0.002)
    queued: list[str] = []

    class Queued(SlowFlush):
        def enqueue(self):
            queued.append("enqueue")

    timing = timers.wall_clock(fake.prepared(), 0, 5, Queued(fake, 0.0), sustained=True)
    assert fake.events == ["call"] * 5 + ["sync"] and queued == ["enqueue"] * 5
    assert len(set(timing.samples_s)) == 1 and timing.samples_s[0] >= 0.002  # the loop's mean


def test_statistics_come_from_the_timing_itself():
    from accelbench.core.types import Timing

    t = Timing(samples_s=[1.0, 2.0, 3.0, 4.0, 100.0], source="x")
    assert (t.median_s, t.min_s, t.max_s, t.count) == (3.0, 1.0, 100.0, 5)
    assert t.iqr_ratio == pytest.approx((4.0 - 2.0) / 3.0) and t.noisy
    steady = Timing(samples_s=[1.0] * 40, source="x")
    assert steady.precision_ratio == 0.0 and steady.meets_confidence(0.01)
    assert Timing(samples_s=[1.0, 2.0], source="x").precision_ratio is None  # too few to say


def test_auto_is_what_a_registered_timer_claims_and_the_wall_clock_elsewhere():
    assert timers.timer_name("jax", "gpu") == "xprof"
    assert timers.timer_name("jax", "tpu") == "xprof"
    assert timers.timer_name("torch", "gpu") == "cupti"
    assert timers.timer_name("torch", "cpu") == timers.FALLBACK == "wall"
    assert timers.timer_name("numpy", "cpu", "cuda_graph") == "cuda_graph"  # asked for by name
    assert {"auto", "wall", "xprof", "cupti", "cuda_graph", "cuda_events"} <= set(
        timers.timer_names()
    )


def test_a_timer_serves_only_its_backends():
    from accelbench.core.case import Case, Outputs, RunSettings

    case = Case("add", "numpy", {}, RunSettings(), Outputs(csv_path="x.csv"), "add")
    with pytest.raises(CaseFailure) as info:
        timers.get_timer("numpy", "cupti", case)
    assert info.value.status is Status.UNSUPPORTED
    assert callable(timers.get_timer("numpy", "wall", case))


def test_a_timer_name_or_an_auto_claim_is_registered_once():
    from accelbench import registrations

    with registrations.scoped():
        with pytest.raises(ValueError, match="registered twice"):
            timers.register_timer("wall")(lambda case: None)
        with pytest.raises(ValueError, match="already auto"):
            timers.register_timer("other", auto_on=(("jax", "gpu"),))(lambda case: None)


def test_the_host_flush_rewrites_twice_the_last_level_cache():
    flush = timers.flush_host_cache
    flush()
    buffer = timers._host_buffer()
    assert buffer.nbytes >= 2 * timers.last_level_cache_bytes()
    before = float(buffer[0])
    flush()
    assert float(buffer[0]) == before + 1.0  # every element rewritten (written, not only read)


def test_a_soak_times_rounds_until_min_duration_has_passed_after_a_longer_warm_up():
    from accelbench.core.case import RunSettings
    from accelbench.measure.procedure import timed

    fake = Fake(seconds=0.005)
    run = RunSettings(num_runs=2, warmup=0, min_duration_s=0.3)
    start = time.perf_counter()
    timing = timed(timers.wall_clock, fake.prepared(), run)
    elapsed = time.perf_counter() - start
    assert elapsed >= 0.3 + 0.06  # warm-up of min(1, 0.3 / 5) s, then 0.3 s of timing
    # it stopped for the duration, not the count (past num_runs where the machine is not so loaded
    # that two calls outlast 0.3 s: the count depends on load, so only its floor is asserted)
    assert timing.count >= 2 and timing.stop_reason == "min_duration"
    assert fake.events.count("call") > timing.count  # the warm-up calls were not recorded


def test_no_garbage_collection_runs_inside_a_timed_window():
    import gc

    collections_in_window = []
    inside = {"now": False}

    def watch(phase, info):
        if phase == "start" and inside["now"]:
            collections_in_window.append(info["generation"])

    class Churn(Fake):
        def call(self):
            inside["now"] = True
            junk = [[i] for i in range(20_000)]  # enough allocations to trigger generation 0
            junk.append(junk)  # a cycle only the collector can free
            self.events.append("enabled" if gc.isenabled() else "disabled")
            return object()

        def sync(self, out):
            inside["now"] = False

    gc.callbacks.append(watch)
    try:
        fake = Churn()
        timers.wall_clock(fake.prepared(), warmup=0, n=5)
    finally:
        gc.callbacks.remove(watch)
    assert collections_in_window == [] and set(fake.events) == {"disabled"}
    assert gc.isenabled()  # switched back on after the window


@pytest.mark.slow  # over a second: the full suite runs it
def test_the_collector_freezes_the_heap_once_and_frees_everything_after_a_failure(monkeypatch):
    import gc

    from accelbench.measure import garbage

    collector = garbage.Collector()
    monkeypatch.setattr(garbage, "resident_bytes", lambda: 1 << 30)
    try:
        collector.before_window()
        assert collector.full_collections == 1 and gc.get_freeze_count() > 0
        collector.before_window()  # a cheap collection of what came since
        assert collector.full_collections == 1
        monkeypatch.setattr(garbage, "resident_bytes", lambda: (1 << 30) + (512 << 20))
        collector.before_window()  # the process grew: the heap is collected whole again
        assert collector.full_collections == 2
        collector.release()
        assert gc.get_freeze_count() == 0 and collector.frozen_at is None
    finally:
        gc.unfreeze()


class SyntheticTimer:
    """Samples of known noise around 1 ms, on a fake clock that each sample advances."""

    def __init__(self, relative_noise: float, clock: list[float], seed: int = 0, session_s=0.0):
        import numpy as np

        self.rng = np.random.default_rng(seed)
        self.noise, self.clock, self.calls = relative_noise, clock, []
        self.session_s = (
            session_s  # what each call costs beside its samples (a trace's start and stop)
        )

    def __call__(self, prepared, warmup, n):
        from accelbench.core.types import Timing

        self.calls.append(n)
        samples = list(1e-3 * (1 + self.noise * self.rng.standard_normal(n)).clip(0.1))
        self.clock[0] += sum(samples) + self.session_s
        return Timing(samples_s=samples, source="synthetic", session_s=self.session_s)


def adaptive(monkeypatch, noise, timer=None, **settings):
    from accelbench.core.case import RunSettings
    from accelbench.measure import procedure

    clock = [0.0]
    monkeypatch.setattr(procedure.time, "perf_counter", lambda: clock[0])
    timer = timer(clock) if timer else SyntheticTimer(noise, clock)
    run = RunSettings(num_runs=10, warmup=settings.pop("warmup", 0), **settings)

    def warm_call():  # a warm-up iteration takes 1 ms of the fake clock too
        clock[0] += 1e-3
        return object()

    op = Prepared(call=warm_call, sync=lambda out: None)
    timing = procedure.timed(timer, op, run)
    return timing, timer, clock[0]


def test_adaptive_stopping_stops_once_the_median_is_known_to_the_target(monkeypatch):
    timing, timer, _ = adaptive(monkeypatch, noise=0.02, target_precision=0.002)
    assert timing.stop_reason == "precision" and timing.precision_ratio <= 0.002
    assert 10 < timing.count < 2000  # far fewer than the ceiling: it stopped when it could
    assert timer.calls[0] == 10  # num_runs is the floor, timed first


def test_adaptive_stopping_respects_its_iteration_and_time_ceilings_and_says_which(monkeypatch):
    timing, _, _ = adaptive(monkeypatch, noise=0.5, target_precision=0.0001, max_runs=300)
    assert timing.stop_reason == "max_runs" and timing.count == 300
    assert timing.precision_ratio > 0.0001  # not reached, and the row says so rather than failing
    timing, _, elapsed = adaptive(monkeypatch, noise=0.5, target_precision=0.0001, max_time_s=0.2)
    assert timing.stop_reason == "max_time" and 0.2 <= elapsed < 0.2 + 0.01  # at most a round over


def test_a_round_that_meets_both_ceilings_names_the_time():
    """The last round reached max_runs and max_time_s at once: the time the user gave ended it."""
    from accelbench.core.case import RunSettings
    from accelbench.core.types import Timing
    from accelbench.measure.procedure import stop_reason

    run = RunSettings(target_precision=0.0001, max_runs=100, max_time_s=3.0)
    timing = Timing(samples_s=[1e-3 * (1 + (i % 7)) for i in range(100)], source="synthetic")
    assert stop_reason(timing, run, 3.2) == "max_time"
    assert stop_reason(timing, run, 2.7) == "max_runs"  # the iteration ceiling alone


@pytest.mark.parametrize("seed", range(5))
def test_an_adaptive_case_takes_few_profiler_sessions_whatever_it_needs(monkeypatch, seed):
    """Each round is one profiler session (its start, stop and parse cost beside the iterations): the
    pilot, then rounds sized for the target with a margin, growing at most MAX_GROWTH-fold, so a case
    ends after a few sessions and never far past the target (where the samples it did not need would
    cost more than another session)."""
    for noise in (0.01, 0.03, 0.05):  # 5%: ~3 800 samples for ±0.2%, from a pilot of 10
        timing, timer, _ = adaptive(
            monkeypatch,
            noise,
            timer=lambda clock: SyntheticTimer(noise, clock, seed, session_s=0.015),
            target_precision=0.002,
            max_runs=100_000,
            max_time_s=600,
        )
        assert timing.stop_reason == "precision"
        assert len(timer.calls) <= 6, (noise, timer.calls)
        assert timing.precision_ratio > 0.002 / 2  # under four times the samples it needed


def test_a_round_outlasts_the_profiler_session_it_pays_for(monkeypatch):
    """A 200 ms session beside 1 ms samples: the round after the pilot takes at least 200 samples
    (more samples in a paid-for session are cheap), where the target alone asked for fewer."""
    from accelbench.measure import procedure

    def rounds(session_s):
        return adaptive(
            monkeypatch,
            0.02,
            timer=lambda clock: SyntheticTimer(0.02, clock, session_s=session_s),
            target_precision=0.005,
            max_time_s=600,
        )[1].calls

    assert rounds(0.0)[1] < 150
    assert rounds(0.2)[1] >= 200 * procedure.SESSION_SHARE - 1


def test_a_pilot_outlasts_the_session_its_timer_pays_per_round(monkeypatch):
    """A timer that pays a 15 ms profiler session per round (its warm-up's session said so before the
    first) gets a pilot of at least 15 ms of 1 ms calls, not num_runs (10): a pilot that alone reaches
    the target then spends at most half its wall in the session, so the case runs 1 000 samples per
    second of its wall or near it; a timer with no sessions keeps num_runs."""
    from accelbench.measure.timers import Described

    for target in (0.05, 0.002):
        timing, timer, elapsed = adaptive(
            monkeypatch,
            0.01,
            timer=lambda clock: Described(SyntheticTimer(0.01, clock, session_s=0.015), 0.015),
            target_precision=target,
            max_time_s=600,
            warmup=10,
        )
        assert timer.timer.calls[0] >= 15 and timing.stop_reason == "precision"
        assert timing.count / (elapsed - 0.010) >= 450  # the warm-up's 10 ms is not the loop's
    timing, timer, _ = adaptive(monkeypatch, 0.01, target_precision=0.05, max_time_s=600, warmup=10)
    assert timer.calls[0] == 10


def test_only_the_timed_rounds_count_against_max_time(monkeypatch):
    """The timer is made (a GPU timer's profiler and flush buffer ready) before the case's clock starts:
    a 5 s start-up leaves its max_time_s whole, and a timer's kernel breakdown follows the loop once."""
    from accelbench.core.types import Kernel

    breakdowns = []

    def made_after_a_slow_start_up(clock):
        clock[0] += 5.0  # what starting CUPTI and importing a profiler cost the first case
        synthetic = SyntheticTimer(0.01, clock)  # ~150 samples of 1 ms for the target
        return timers.Described(
            synthetic, breakdown=lambda p: breakdowns.append(p) or [Kernel("k", 1, 1e-3, 1)]
        )

    timing, timer, _ = adaptive(
        monkeypatch, 0.01, timer=made_after_a_slow_start_up, target_precision=0.002, max_time_s=4
    )
    assert timing.stop_reason == "precision" and timing.loop_s < 1
    assert len(timer.timer.calls) > 1 and len(breakdowns) == 1 and timing.kernels[0].name == "k"


def test_a_torch_gpu_timer_is_ready_before_it_is_returned(monkeypatch):
    """backend.timer readies the profiler and the flush buffer when it makes the timer: `measure` gets
    it before its clock starts."""
    torch = pytest.importorskip("torch")
    from accelbench.core.case import Case, Outputs, RunSettings
    from torch_backend import backend, profiling, timing

    order = []
    monkeypatch.setattr(profiling, "warm", lambda device: order.append(("warm", str(device))))
    monkeypatch.setattr(timing, "_l2_flush", lambda device: order.append(("flush", device)))
    monkeypatch.setattr(backend, "get_timer", lambda *a: lambda p, w, n: order.append("round"))
    case = Case(
        op="add",
        backend="torch",
        params={"m": 4, "n": 4},
        run=RunSettings(cache="cold"),
        outputs=Outputs(csv_path="x.csv"),
        benchmark="b",
    )
    backend.TorchBackend().timer(case, torch.device("cuda", 0))
    assert order == [("warm", "cuda:0"), ("flush", "cuda:0")]


def test_the_jax_flush_and_profiler_are_made_with_the_timer_not_in_a_round(monkeypatch):
    pytest.importorskip("jax")
    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.jax_backend import timers as jax_timers

    made = []
    monkeypatch.setattr(jax_timers, "flusher", lambda case: made.append(case) or (lambda: None))
    case = Case(
        op="add",
        backend="jax",
        params={"m": 4, "n": 4},
        run=RunSettings(cache="cold"),
        outputs=Outputs(csv_path="x.csv"),
        benchmark="b",
    )
    timer = jax_timers.xprof_timer(case)
    assert made == [case]
    # the profiler started with the timer too (a session paid for before the clock), and its cost
    # known to size the pilot
    assert isinstance(timer, timers.Described) and timer.session_s > 0


def test_without_a_target_timing_is_num_runs_and_a_soak_comes_before_the_target(monkeypatch):
    timing, _, _ = adaptive(monkeypatch, noise=0.02)
    assert timing.stop_reason == "num_runs" and timing.count == 10
    timing, _, elapsed = adaptive(monkeypatch, noise=0.02, target_precision=0.5, min_duration_s=0.5)
    assert elapsed >= 0.5 and timing.stop_reason == "precision"  # the soak lasted its duration


def test_a_config_asks_for_a_precision_and_each_row_says_how_it_stopped(
    write_yaml, run_cli, tmp_path
):
    out = tmp_path / "o.csv"
    path = write_yaml(
        "benchmarks:\n- benchmark_name: add\n  target_precision: 0.2\n"
        "  max_time_s: 1\n  benchmark_params: [{m: 8, n: 64}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "-o", str(out), "--no-progress")
    assert code == 0, err
    from accelbench.results.reading import read_rows

    rows = read_rows(str(out))
    assert {r.stats.stop_reason for r in rows} <= {"precision", "max_time", "max_runs"}
    assert all(r.stats.median_precision_ratio is not None for r in rows)
    assert all(r.conditions.target_precision_ratio == 0.2 for r in rows)
    bad = write_yaml("benchmarks:\n- benchmark_name: add\n  target_precision: 5\n")
    code, _, err = run_cli("run", "--config", str(bad), "-o", str(tmp_path / "b.csv"))
    assert code == 2 and "target_precision" in err and len(err.strip().splitlines()) == 1


def test_the_medians_interval_ranks_match_scipys_binomial_without_importing_it():
    from scipy.stats import binom

    from accelbench.core.samples import half_binomial_ppf

    for n in (6, 7, 20, 200, 1000):  # exact
        for q in (0.025, 0.005):
            assert half_binomial_ppf(q, n) == int(binom.ppf(q, n, 0.5))
    for n in (1001, 5000, 100_000):  # the normal approximation: within a rank
        assert abs(half_binomial_ppf(0.025, n) - int(binom.ppf(0.025, n, 0.5))) <= 1


def test_the_medians_interval_covers_it_at_least_as_often_as_it_says():
    """Order statistics low and n - 1 - low (0-based) miss the median when `low` or fewer samples
    fall below it, on either side: 2 P(Binomial(n, 1/2) <= low) at most the interval's own error
    (the ranks were one too narrow: 88.5% for a stated 95% at 20 samples)."""
    from scipy.stats import binom

    from accelbench.core.samples import median_ranks

    for confidence in (0.95, 0.975):
        for n in (6, 7, 10, 20, 40, 100, 999):
            low = median_ranks(n, confidence)
            if low is not None:
                assert 2 * binom.cdf(low, n, 0.5) <= 1 - confidence
                assert 2 * binom.cdf(low + 1, n, 0.5) > 1 - confidence  # and no wider than that
    assert median_ranks(6, 0.975) is None and median_ranks(6, 0.95) == 0


def test_an_idle_gpu_is_kept_busy_for_its_clock_ramp_before_any_case(monkeypatch):
    """Both backends bring an idle GPU to its clocks the same way: bursts until CLOCK_RAMP_S has passed."""
    clock, bursts = [0.0], []
    monkeypatch.setattr(timers.time, "perf_counter", lambda: clock[0])

    def burst():
        bursts.append(clock[0])
        clock[0] += 0.07

    timers.keep_busy(burst)
    assert len(bursts) == 5 and clock[0] >= timers.CLOCK_RAMP_S


def test_processes_that_run_iterations_together_agree_on_every_round(monkeypatch):
    """A collective's members must call it equally often: the pilot's size, whether to go on and each
    round's size are the largest any member asks (`Prepared.agree`). Here another member asks a pilot
    of 30 and three more rounds of 40 after this one has met its target."""
    from accelbench.core.case import RunSettings
    from accelbench.measure import procedure

    clock = [0.0]
    monkeypatch.setattr(procedure.time, "perf_counter", lambda: clock[0])
    asked: list[float] = []
    # warm up longer?, the pilot, then (go on?, round size) pairs
    theirs = [0, 30, 1, 40, 1, 40, 1, 40] + [0] * 10

    def agree(mine):
        asked.append(float(mine))
        return max(float(mine), theirs[len(asked) - 1])

    timer = SyntheticTimer(0.01, clock)
    op = Prepared(call=object, sync=lambda out: None, agree=agree)
    run = RunSettings(num_runs=10, warmup=0, target_precision=0.05, max_time_s=600)
    timing = procedure.timed(timer, op, run)
    assert timer.calls == [30, 40, 40, 40] and timing.count == 150
    assert asked[1] == 10 and asked[2::2][:4] == [0.0] * 4  # this one would have stopped
    assert timing.stop_reason == "precision"


def test_traced_wall_rounds_count_each_sample_once(monkeypatch):
    """A traced_wall timing's time, wall and launch samples are separate lists: a later round adds its
    samples once to each (they were one list, so a round's extend appended them three times)."""
    pytest.importorskip("jax")
    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.core.types import Timing
    from accelbench.jax_backend import timers as jax_timers

    monkeypatch.setattr(jax_timers, "flusher", lambda case: lambda: None)
    monkeypatch.setattr(jax_timers, "session_cost", lambda: 0.01)
    traced = lambda case, flush, prepared, warmup, n: Timing([1e-3] * n, "xprof_cpu", [2e-3] * n)
    monkeypatch.setattr(jax_timers, "traced_samples", traced)
    case = Case(
        op="add",
        backend="jax",
        params={"m": 4, "n": 4},
        run=RunSettings(),
        outputs=Outputs(csv_path="x.csv"),
        benchmark="b",
    )
    timer = jax_timers.traced_wall_timer(case)
    timing = timer(None, 0, 3)
    timing.extend(timer(None, 0, 2))
    assert timing.source == "wall_clock"
    assert timing.samples_s == timing.wall_samples_s == timing.launch_samples_s == [2e-3] * 5
