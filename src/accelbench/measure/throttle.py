"""Samples judged by the clocks they ran at (the GPU monitor's series; on a TPU its firmware's thermal
throttle level) under the run's `throttle` policy. A sample is throttled when its stretch of the loop
(sample i of n: the i-th n-th of the loop's wall, docs/method.md) meets a reading below
`throttle_threshold` times the best clock the run has sustained."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelbench.core.case import RunSettings
from accelbench.core.types import PER_SAMPLE, Timing
from accelbench.platform.gpu_monitor import PERIOD_S, Monitor

# NVML's clock-event reason bits (nvmlClocksEventReasons): those that slow a busy device
SLOWING = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
}
DROPPING = ("discard",)  # the policies that drop throttled samples (flag only says so)
_best_clock: dict[int, float] = {}  # device index -> the best SM clock a case's loop sustained


@dataclass(frozen=True)
class ThrottleReport:
    """What a row says of its clocks (TimingInfo's columns of the same names)."""

    clock_source: str  # "nvml", or why there are no clocks ("none: ...")
    sm_clock_min_mhz: float | None = None
    sm_clock_median_mhz: float | None = None
    throttled_share_ratio: float | None = None  # of the timed loop's wall, spent below threshold
    discarded_sample_count: int | None = None
    throttle_reasons: str | None = None  # the slowing reasons NVML gave during the loop


def _window(times: list[float], timing: Timing) -> list[int]:
    """The indices of the readings covering the timed loop: those inside it and the last before it."""
    start = timing.loop_started_at or 0.0
    end = start + (timing.loop_s or 0.0)
    before = [i for i, t in enumerate(times) if t < start][-1:]
    return before + [i for i, t in enumerate(times) if start <= t <= end]


def _kept(timing: Timing, spans: list[tuple[float, float]]) -> list[bool]:
    """Per sample: whether its stretch of the loop met no throttled span."""
    n = len(timing.samples_s)
    start, each = timing.loop_started_at or 0.0, (timing.loop_s or 0.0) / max(n, 1)
    return [
        not any(a < start + (i + 1) * each and b > start + i * each for a, b in spans)
        for i in range(n)
    ]


def _discarded(timing: Timing, kept: list[bool], run: RunSettings) -> tuple[Timing, int]:
    """Under a dropping policy, the timing without its throttled samples (every per-iteration series
    alike; never all of them), and how many went."""
    if run.throttle not in DROPPING or all(kept) or not any(kept):
        return timing, 0

    def only(series: list[float]) -> list[float]:
        fits = len(series) == len(kept)
        return [v for v, k in zip(series, kept, strict=True) if k] if fits else series

    kept_only: dict[str, Any] = {name: only(getattr(timing, name)) for name in PER_SAMPLE}
    kept_only["device_samples_s"] = {d: only(s) for d, s in timing.device_samples_s.items()}
    return dataclasses.replace(timing, **kept_only), kept.count(False)


def judge(
    monitor: Monitor, timing: Timing, run: RunSettings, device: int
) -> tuple[Timing, ThrottleReport]:
    """The timing as the policy leaves it, and what its row says of the clocks."""
    times = [monitor.started_at + s[0] for s in monitor.series]
    readings = _window(times, timing)
    if not readings:
        return timing, ThrottleReport(monitor.note or "none: no GPU monitor on this device")
    clocks = [monitor.series[i][1] for i in readings]
    median = statistics.median(clocks)
    best = _best_clock[device] = max(_best_clock.get(device, 0.0), median)
    spans = [  # each reading below the clock covers the time until the next (the last: one period)
        (times[i], times[i + 1] if i + 1 < len(times) else times[i] + PERIOD_S)
        for i in readings
        if monitor.series[i][1] < run.throttle_threshold * best
    ]
    seen = 0
    for i in readings:
        seen |= monitor.reasons[i] if i < len(monitor.reasons) else 0
    kept = _kept(timing, spans)
    share = sum(b - a for a, b in spans) / timing.loop_s if timing.loop_s else None
    judged, dropped = _discarded(timing, kept, run)
    if dropped:
        monitor.wait_for(run.throttle_threshold * best, run.throttle_wait_s)
    return judged, ThrottleReport(
        "nvml",
        min(clocks),
        median,
        min(share, 1.0) if share is not None else None,
        dropped,
        ", ".join(name for bit, name in SLOWING.items() if seen & bit) or None,
    )


def judge_levels(
    monitor: Monitor, timing: Timing, run: RunSettings, device: int
) -> tuple[Timing, ThrottleReport]:
    """A TPU's samples: throttled where any chip's firmware reported a thermal level above 0 during the
    sample's own execution; `discard` drops them without waiting (no live reading)."""
    levels = timing.thermal_levels
    if len(levels) != len(timing.samples_s) or not levels:
        return timing, ThrottleReport(f"none: {NO_LEVELS}")
    kept = [level == 0 for level in levels]
    total = sum(timing.samples_s)
    hot = sum(s for s, k in zip(timing.samples_s, kept, strict=True) if not k)
    highest = max(levels)
    judged, dropped = _discarded(timing, kept, run)
    return judged, ThrottleReport(
        TPU_SOURCE,
        throttled_share_ratio=hot / total if total else None,
        discarded_sample_count=dropped,
        throttle_reasons=f"thermal_throttle level {highest:g}" if highest else None,
    )


TPU_SOURCE = "tpu_power_throttle"  # the Power Throttle line of the trace's TPU planes
NO_LEVELS = "the trace holds no TPU Power Throttle events (xprof timer on a TPU only)"
Judge = Callable[[Monitor, Timing, RunSettings, int], tuple[Timing, ThrottleReport]]
JUDGES: dict[str, Judge] = {"gpu": judge, "tpu": judge_levels}  # by the device's platform
