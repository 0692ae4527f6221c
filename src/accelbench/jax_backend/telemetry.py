"""TPU firmware telemetry from a trace's device planes: the temperatures, throttling, power and
p-states TPUMS reports around a soak (docs/tpums.md).

Each `/device:TPU:<n>` plane may carry peak temperatures as plane statistics or events, and time
series as events whose value is their first numeric statistic (a `performance_counter_id` is not a
value). Names are compared lower-cased with a trailing core number dropped. A series is read over the
window the `XLA Ops` line spans (all of its intervals where that line is empty): the share of that
window with a positive value, and the time-weighted mean. Devices are aggregated by their maximum
(p-state minimum: the minimum). Planes are read through `jax.profiler.ProfileData`'s interface (name,
lines of events, stats), so synthetic planes test it off a TPU.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

DEVICE_PLANE = re.compile(r"^/device:TPU:\d+$")
CORE_SUFFIX = re.compile(r"\s+\d+$")
OPS_LINE = "xla ops"
PEAKS = {
    "hbm fw max temperature(c)": "hbm_peak_temp_c",
    "compute die fw max temperature(c)": "peak_temp_c",
}
SERIES = {
    "hbm fw throttle(%)": "hbm_throttle",
    "vdd core fw throttle(%)": "vdd_core_throttle",
    "vdd core fw power meter pl1(w)": "vdd_core_power",
    "hbm fw power meter pl1(w)": "hbm_power",
    "p state": "pstate",
}
KEYS = (
    "hbm_peak_temp_c",
    "peak_temp_c",
    "peak_temp_source",
    "hbm_throttle_time_pct",
    "hbm_throttle_mean_pct",
    "vdd_core_throttle_time_pct",
    "vdd_core_throttle_mean_pct",
    "vdd_core_power_mean_w",
    "hbm_power_mean_w",
    "total_power_mean_w",
    "pstate_min",
    "pstate_max",
    "pstate_changes",
)
Interval = tuple[float, float, float]  # start ns, end ns, value


def canonical(name: str) -> str:
    return CORE_SUFFIX.sub("", str(name).strip().lower())


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _value(stats: Any) -> float | None:
    """An event's measurement: its first numeric statistic that is not a counter id."""
    for name, value in stats:
        if canonical(name) != "performance_counter_id" and (number := _number(value)) is not None:
            return number
    return None


@dataclass
class _Samples:
    peaks: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    series: dict[str, list[Interval]] = field(default_factory=lambda: defaultdict(list))
    window: tuple[float, float] | None = None


def _collect(plane: Any) -> _Samples:
    got = _Samples()
    for name, value in getattr(plane, "stats", ()):
        if (key := PEAKS.get(canonical(name))) and (number := _number(value)) is not None:
            got.peaks[key].append(number)
    for line in plane.lines:
        ops = line.name.strip().lower() == OPS_LINE
        for event in line.events:
            start, end = float(event.start_ns), float(event.start_ns + event.duration_ns)
            if ops:
                if end > start:
                    low, high = got.window or (start, end)
                    got.window = (min(low, start), max(high, end))
                continue
            name = canonical(event.name)
            if name not in PEAKS and name not in SERIES:
                continue
            value = _value(event.stats)
            if value is None:
                continue
            if name in PEAKS:
                got.peaks[PEAKS[name]].append(value)
            if name in SERIES:
                got.series[SERIES[name]].append((start, end, value))
    return got


def _bounds(
    series: list[Interval], window: tuple[float, float] | None
) -> tuple[float, float] | None:
    if window is not None:
        return window
    if not series:
        return None
    low, high = min(s for s, _, _ in series), max(e for _, e, _ in series)
    return (low, high) if high > low else None


def _weighted(
    series: list[Interval], window: tuple[float, float] | None, positive_share: bool = False
) -> float | None:
    """Over the window: the share of covered time with a positive value (in %), or the
    time-weighted mean value."""
    bounds = _bounds(series, window)
    if bounds is None:
        return None
    low, high = bounds
    covered = weighted = 0.0
    for start, end, value in series:
        overlap = max(0.0, min(end, high) - max(start, low))
        covered += overlap
        weighted += overlap * (100.0 if value > 0 else 0.0) if positive_share else overlap * value
    return weighted / covered if covered > 0 else None


def _pstates(series: list[Interval], window: tuple[float, float] | None) -> tuple[Any, Any, Any]:
    """The lowest and highest p-state in the window (the one in force as it opens included), and
    how often it changed."""
    ordered = sorted(series)
    bounds = _bounds(ordered, window)
    if bounds is not None:
        before = [s for s in ordered if s[0] < bounds[0]]
        ordered = before[-1:] + [s for s in ordered if bounds[0] <= s[0] <= bounds[1]]
    if not ordered:
        return None, None, None
    values = [v for _, _, v in ordered]
    changes = sum(a != b for a, b in zip(values[:-1], values[1:], strict=True))
    return min(values), max(values), changes


def _source(peak: float | None, hbm: float | None) -> str | None:
    return "compute_die" if peak is not None else "hbm" if hbm is not None else None


def _metrics(s: _Samples) -> dict[str, Any]:
    hbm = max(s.peaks["hbm_peak_temp_c"], default=None)
    peak = max(s.peaks["peak_temp_c"], default=None)
    core = _weighted(s.series["vdd_core_power"], s.window)
    memory = _weighted(s.series["hbm_power"], s.window)
    low, high, changes = _pstates(s.series["pstate"], s.window)
    return {
        "hbm_peak_temp_c": hbm,
        "peak_temp_c": peak,
        "peak_temp_source": _source(peak, hbm),
        "hbm_throttle_time_pct": _weighted(s.series["hbm_throttle"], s.window, True),
        "hbm_throttle_mean_pct": _weighted(s.series["hbm_throttle"], s.window),
        "vdd_core_throttle_time_pct": _weighted(s.series["vdd_core_throttle"], s.window, True),
        "vdd_core_throttle_mean_pct": _weighted(s.series["vdd_core_throttle"], s.window),
        "vdd_core_power_mean_w": core,
        "hbm_power_mean_w": memory,
        "total_power_mean_w": core + memory if core is not None and memory is not None else None,
        "pstate_min": low,
        "pstate_max": high,
        "pstate_changes": changes,
    }


def per_device(planes: Any) -> dict[str, dict[str, Any]]:
    """Each TPU device plane's telemetry, by plane name."""
    return {
        plane.name: _metrics(_collect(plane))
        for plane in planes
        if DEVICE_PLANE.match(str(plane.name))
    }


def aggregate(devices: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Over devices: the highest of each figure (the p-state minimum: the lowest)."""
    values: dict[str, list[Any]] = defaultdict(list)
    for metrics in devices.values():
        for key, value in metrics.items():
            if value is not None and key != "peak_temp_source":
                values[key].append(value)
    out: dict[str, Any] = {key: None for key in KEYS}
    out.update({k: min(v) if k == "pstate_min" else max(v) for k, v in values.items()})
    out["peak_temp_source"] = _source(out["peak_temp_c"], out["hbm_peak_temp_c"])
    return out
