"""Throttle-aware sampling (issue 50) with a scripted NVML: the clocks beside a GPU case's samples,
the `throttle` policy (flag, discard, off), the recovery wait and its cap, the rows' columns, and a
device without NVML."""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import pytest

from accelbench.catalogue import get_spec
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.core.types import CheckResult, DeviceInfo, Measurement, Timing
from accelbench.measure import throttle
from accelbench.platform import backends, gpu_monitor
from accelbench.run import runner

GPU = DeviceInfo(kind="fake GPU", count=1, platform="gpu", framework="fake", framework_version="0")
FULL, LOW = 1980.0, 1200.0
SAMPLES = 20


class FakeNvml:
    """pynvml as the monitor reads it: the SM clock follows `clock()`, the reason bits `reasons()`."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 0, 1, 0

    def __init__(self) -> None:
        self.low: list[tuple[float, float]] = []  # perf_counter windows of a clock drop

    def clock(self) -> float:
        now = time.perf_counter()
        return LOW if any(a <= now <= b for a, b in self.low) else FULL

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetClockInfo(self, handle: int, kind: int) -> float:
        return self.clock() if kind == 0 else 2619.0

    def nvmlDeviceGetTemperature(self, handle: int, kind: int) -> float:
        return 60.0

    def nvmlDeviceGetPowerUsage(self, handle: int) -> float:
        return 500_000.0

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:
        return 0x20 if self.clock() < FULL else 0x4


class Busy:
    """A GPU backend whose timed loop takes 0.6 s of wall, the clock dropping in its middle third when
    the test says so; 20 samples of 1 ms, the middle ones slower as a throttled device's would be."""

    name = "fake"

    def __init__(self, nvml: FakeNvml) -> None:
        self.nvml = nvml
        self.drop = False
        self.low_after_s = 0.0  # the clock drops again near the loop's end and stays low this long

    def device_info(self) -> DeviceInfo:
        return GPU

    def measure(self, case: Case) -> Measurement:
        started_at, start = time.time(), time.perf_counter()
        if self.drop:
            self.nvml.low.append((start + 0.2, start + 0.4))
        if self.low_after_s:
            self.nvml.low.append((start + 0.57, start + 0.6 + self.low_after_s))
        time.sleep(0.6)
        samples = [1e-3] * SAMPLES
        if self.drop:
            samples[7:13] = [1.5e-3] * 6
        timing = Timing(samples_s=samples, source="fake_clock")
        timing.loop_started_at, timing.loop_s = started_at, time.perf_counter() - start
        return Measurement(timing=timing, device=GPU, check=CheckResult("strict", "passed"))


@pytest.fixture
def scripted(monkeypatch):
    from accelbench import registrations

    nvml = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    throttle._best_clock.clear()
    busy = Busy(nvml)
    with registrations.scoped():
        backends.register_backend(
            backends.BackendInfo("fake", 9, lambda: busy, "accelbench.ops", "numpy")
        )
        yield busy
    throttle._best_clock.clear()


def case(**settings) -> Case:
    run = RunSettings(num_runs=SAMPLES, warmup=0, **settings)
    params = get_spec("fault").resolve({"mode": "ok", "n": 8}, "test")
    return Case("fault", "fake", params, run, Outputs(csv_path="x.csv"), "fault")


def test_a_steady_case_has_its_clocks_and_no_doubt(scripted):
    row, _ = runner.execute(case(), "run", {}, None)
    t = row.timing
    assert t.clock_source == "nvml" and t.sm_clock_median_mhz == FULL and t.sm_clock_min_mhz == FULL
    assert t.throttled_share_ratio == 0 and t.discarded_sample_count == 0
    assert t.throttle_reasons == "sw_power_cap" and row.doubt is None
    assert not row.series.gpu_monitor  # the series is kept for the ops that chart it only


def test_flag_keeps_every_sample_and_says_how_much_ran_throttled(scripted):
    runner.execute(case(), "run", {}, None)  # the run's best clock: 1980 MHz
    scripted.drop = True
    row, _ = runner.execute(case(), "run", {}, None)
    t = row.timing
    assert row.stats.sample_count == SAMPLES and t.discarded_sample_count == 0
    assert 0.1 < t.throttled_share_ratio < 0.6 and t.sm_clock_min_mhz == LOW
    assert "sw_thermal" in t.throttle_reasons and row.doubt == "throttled"


def test_discard_drops_the_samples_the_drop_met_and_waits_for_recovery(scripted):
    runner.execute(case(), "run", {}, None)
    scripted.drop = True
    scripted.low_after_s = 0.9  # still low as the case ends
    started = time.perf_counter()
    row, _ = runner.execute(case(throttle="discard", throttle_wait_s=5.0), "run", {}, None)
    waited = time.perf_counter() - started
    t = row.timing
    assert 0 < t.discarded_sample_count < SAMPLES
    assert row.stats.sample_count == SAMPLES - t.discarded_sample_count
    assert row.stats.time_max_s == pytest.approx(1e-3)  # every slow sample was in the drop
    assert row.doubt is None and waited >= 1.4  # the loop, then the wait until the clock was back


def test_the_recovery_wait_is_capped(scripted):
    runner.execute(case(), "run", {}, None)
    scripted.drop = True
    scripted.low_after_s = 60
    started = time.perf_counter()
    row, _ = runner.execute(case(throttle="discard", throttle_wait_s=0.3), "run", {}, None)
    assert row.timing.discarded_sample_count and time.perf_counter() - started < 30


def test_off_samples_nothing(scripted):
    row, _ = runner.execute(case(throttle="off"), "run", {}, None)
    assert row.timing.clock_source is None and row.timing.throttled_share_ratio is None


def test_a_device_without_nvml_says_so_in_the_row(scripted, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    row, _ = runner.execute(case(), "run", {}, None)
    assert row.ok and row.timing.clock_source.startswith("no GPU monitor")
    assert row.timing.throttled_share_ratio is None


def test_a_cpu_case_is_not_judged(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())
    params = get_spec("fault").resolve({"mode": "ok", "n": 8}, "test")
    cpu = Case("fault", "numpy", params, RunSettings(num_runs=3, warmup=0), Outputs("x.csv"), "f")
    row, _ = runner.execute(cpu, "run", {}, None)
    assert row.ok and row.timing.clock_source is None


def test_a_sample_is_throttled_when_its_stretch_meets_a_low_reading():
    monitor = gpu_monitor.Monitor(enabled=False)
    monitor.started_at = 100.0
    monitor.series = [(i * 0.02, LOW if 10 <= i < 12 else FULL, 0, 0, 0) for i in range(50)]
    monitor.reasons = [0] * 50
    timing = Timing(samples_s=[1e-3] * 10, source="x", loop_started_at=100.0, loop_s=1.0)
    throttle._best_clock.clear()
    kept, report = throttle.judge(monitor, timing, RunSettings(throttle="discard"), 0)
    # readings 10 and 11 cover 0.20-0.24 s: the third tenth of the loop (sample 2) only
    assert report.discarded_sample_count == 1 and len(kept.samples_s) == 9
    assert report.throttled_share_ratio == pytest.approx(0.04)


def test_a_loop_shorter_than_the_monitor_s_period_is_judged_by_the_reading_that_covers_it():
    """5 ms between two readings 20 ms apart (a short collective on 2 H100s said "no GPU monitor")."""
    monitor = gpu_monitor.Monitor(enabled=False)
    monitor.started_at = 100.0
    monitor.series = [(i * 0.02, LOW if i == 3 else FULL, 0, 0, 0) for i in range(10)]
    monitor.reasons = [0] * 10
    timing = Timing(samples_s=[1e-3] * 5, source="x", loop_started_at=100.065, loop_s=0.005)
    throttle._best_clock.clear()
    _, report = throttle.judge(monitor, timing, RunSettings(throttle="flag"), 0)
    assert report.clock_source == "nvml" and report.sm_clock_min_mhz == LOW  # reading 3, at 60 ms


def test_cooldown_idles_between_cases(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "backend: numpy\nnum_runs: 2\nwarmup: 0\ncooldown_s: 0.3\nbenchmarks:\n"
        "- benchmark_name: fault\n  benchmark_params: [{n: 8}, {n: 9}, {n: 10}]\n"
    )
    started = time.perf_counter()
    code, _, _ = run_cli("run", "--config", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "r.csv"))
    assert code == 0 and time.perf_counter() - started >= 0.9


def test_settings_reach_the_run_and_are_checked(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "backend: numpy\nthrottle: sometimes\nbenchmarks:\n- benchmark_name: fault\n"
    )
    code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 2 and "throttle" in err and "discard" in err
    assert replace(RunSettings(), throttle="discard").throttle == "discard"


TPU = DeviceInfo(kind="fake TPU", count=1, platform="tpu", framework="fake", framework_version="0")


class HotTpu:
    """A TPU backend whose last 6 of 20 samples ran under thermal throttle level 12 (the levels its
    trace's Power Throttle line gave each sample's execution, jax_backend/timers.py)."""

    name = "fake"
    levels = [0.0] * 14 + [12.0] * 6

    def device_info(self) -> DeviceInfo:
        return TPU

    def measure(self, case: Case) -> Measurement:
        timing = Timing([1e-3] * 14 + [2e-3] * 6, "xprof_tpu", thermal_levels=list(self.levels))
        return Measurement(timing=timing, device=TPU, check=CheckResult("strict", "passed"))


@pytest.fixture
def hot_tpu():
    from accelbench import registrations

    tpu = HotTpu()
    with registrations.scoped():
        backends.register_backend(
            backends.BackendInfo("fake", 9, lambda: tpu, "accelbench.ops", "numpy")
        )
        yield tpu


def test_a_tpu_flags_the_samples_its_firmware_throttled(hot_tpu):
    row, _ = runner.execute(case(), "run", {}, None)
    t = row.timing
    assert t.clock_source == throttle.TPU_SOURCE and t.sm_clock_median_mhz is None
    assert t.throttled_share_ratio == pytest.approx(12 / 26) and t.discarded_sample_count == 0
    assert t.throttle_reasons == "thermal_throttle level 12" and row.doubt == "throttled"
    assert row.stats.sample_count == SAMPLES


def test_a_tpu_discards_them_without_waiting(hot_tpu):
    started = time.perf_counter()
    row, _ = runner.execute(case(throttle="discard", throttle_wait_s=30.0), "run", {}, None)
    assert row.timing.discarded_sample_count == 6 and row.stats.sample_count == 14
    assert row.stats.time_max_s == pytest.approx(1e-3) and row.doubt is None
    assert time.perf_counter() - started < 25  # no live reading to wait for


def test_a_tpu_without_power_throttle_events_says_so(hot_tpu):
    hot_tpu.levels = []
    row, _ = runner.execute(case(), "run", {}, None)
    assert row.ok and row.timing.clock_source == f"none: {throttle.NO_LEVELS}"
    hot_tpu.levels = [0.0] * SAMPLES  # recorded, never thermal: nothing throttled
    row, _ = runner.execute(case(throttle="discard"), "run", {}, None)
    assert row.timing.throttled_share_ratio == 0 and row.timing.throttle_reasons is None


def test_a_tpums_file_plans_the_policy(tmp_path):
    from accelbench.run.planning import plan_from_file

    path = tmp_path / "soak.yaml"
    path.write_text(
        "benchmark:\n  name: gemm_throttling\n  xprof_timing: true\n  params:\n"
        "    throttle: discard\n    min_duration_s: 1.0\n    m: 64\n    k: 64\n    n: 64\n"
    )
    (planned,) = plan_from_file(str(path))
    assert planned.run.throttle == "discard" and planned.run.timer in ("auto", "xprof")
