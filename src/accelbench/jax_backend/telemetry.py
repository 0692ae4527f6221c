"""TPU firmware telemetry from a trace's device planes: what TPUMS reports around a soak, and each
timed iteration's thermal throttle level (docs/tpums.md). Read through ProfileData's interface, so
synthetic planes test it off a TPU."""

from __future__ import annotations

import math
import re
import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from accelbench.core.types import TELEMETRY_MAXIMA as TELEMETRY_MAXIMA

DEVICE_PLANE = re.compile(r"^/device:TPU:\d+$")
CORE_SUFFIX = re.compile(r"\s+\d+$")
OPS_LINE = "xla ops"
THROTTLE_LINE = "power throttle"
THROTTLE_EVENT = re.compile(r"^(\d+(?:\.\d+)?)\s*(?:\(\s*(\w+)\s*\))?$")
THERMAL = "thermal_throttle"  # the one Power Throttle source the level counts
MAXIMA = {  # upstream's four keys: the highest reading of each
    "hbm fw max temperature(c)": "hbm_peak_temp_c",
    "compute die fw max temperature(c)": "peak_temp_c",
    "hbm fw throttle(%)": "hbm_throttle_pct",
    "thermal_throttle_level": "thermal_throttle_level",
}

SERIES = {
    "hbm fw throttle(%)": "hbm_throttle",
    "vdd core fw throttle(%)": "vdd_core_throttle",
    "vdd core fw power meter pl1(w)": "vdd_core_power",
    "hbm fw power meter pl1(w)": "hbm_power",
    "p state": "pstate",
}
Interval = tuple[float, float, float]  # start ns, end ns, value


def canonical(name: str) -> str:
    return CORE_SUFFIX.sub("", str(name).strip().lower())


def _packed(raw: bytes) -> float | None:
    """The finite double in the last 8 bytes (little-endian; a longer value's key byte: wire type 1)."""
    if len(raw) < 8 or (len(raw) > 8 and raw[-9] & 0x07 != 1):
        return None
    value = struct.unpack("<d", raw[-8:])[0]
    return value if math.isfinite(value) else None


def _number(value: Any) -> float | None:
    """A statistic's number: int, float or a packed double (bytes, or bytes decoded as unprintable text)."""
    if isinstance(value, str) and not value.isprintable():
        value = value.encode("utf-8", "surrogateescape")
    if isinstance(value, bytes):
        return _packed(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _stats(stats: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """(name, value) pairs; a non-UTF-8 bytes value (ProfileData raises) comes back under no name."""
    pairs = iter(stats)
    while True:
        try:
            yield next(pairs)
        except StopIteration:
            return
        except UnicodeDecodeError as error:
            yield "", error.object


def _value(stats: Any) -> float | None:
    """An event's measurement: its first numeric statistic that is not a counter id."""
    for name, value in _stats(stats):
        if canonical(name) != "performance_counter_id" and (number := _number(value)) is not None:
            return number
    return None


def thermal_level(event_name: str) -> float | None:
    """A Power Throttle event's thermal level ("0", "<level> (THERMAL_THROTTLE)"); else None."""
    found = THROTTLE_EVENT.match(str(event_name).strip())
    if found is None:
        return None
    level, source = float(found.group(1)), found.group(2)
    if source is None:
        return 0.0 if level == 0 else None
    return level if source.lower() == THERMAL else None


@dataclass
class _Samples:
    peaks: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    series: dict[str, list[Interval]] = field(default_factory=lambda: defaultdict(list))
    window: tuple[float, float] | None = None


def _collect(plane: Any) -> _Samples:
    got = _Samples()
    for name, value in _stats(getattr(plane, "stats", ())):
        if (key := MAXIMA.get(canonical(name))) and (number := _number(value)) is not None:
            got.peaks[key].append(number)
    for line in plane.lines:
        kind = line.name.strip().lower()
        for event in line.events:
            start, end = float(event.start_ns), float(event.start_ns + event.duration_ns)
            if kind == OPS_LINE and end > start:
                low, high = got.window or (start, end)
                got.window = (min(low, start), max(high, end))
            elif kind == THROTTLE_LINE:
                if (level := thermal_level(event.name)) is not None:
                    got.series["thermal_level"].append((start, end, level))
            elif (name := canonical(event.name)) in MAXIMA or name in SERIES:
                if (value := _value(event.stats)) is None:
                    continue
                if name in MAXIMA:
                    got.peaks[MAXIMA[name]].append(value)
                if name in SERIES:
                    got.series[SERIES[name]].append((start, end, value))
    got.peaks["thermal_throttle_level"] += [v for _, _, v in got.series["thermal_level"]]
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
    """Over the window: the % of covered time with a positive value, or the time-weighted mean."""
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
    """The lowest and highest p-state in the window (the one in force at its start too), and changes."""
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


def _source(die: float | None, hbm: float | None) -> str | None:
    return "compute_die" if die is not None else "hbm" if hbm is not None else None


def _metrics(s: _Samples) -> dict[str, Any]:
    peaks = {key: max(s.peaks[key], default=None) for key in TELEMETRY_MAXIMA}
    die, hbm = peaks["peak_temp_c"], peaks["hbm_peak_temp_c"]
    core, memory = (_weighted(s.series[k], s.window) for k in ("vdd_core_power", "hbm_power"))
    low, high, changes = _pstates(s.series["pstate"], s.window)
    return {
        **peaks,
        "peak_temp_c": die if die is not None else hbm,  # the die's, else the HBM's (as upstream)
        "peak_temp_source": _source(die, hbm),
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


KEYS = tuple(_metrics(_Samples()))  # every figure, the maxima (TELEMETRY_MAXIMA) first


def _devices(planes: Any) -> dict[str, _Samples]:
    return {p.name: _collect(p) for p in planes if DEVICE_PLANE.match(str(p.name))}


def per_device(planes: Any) -> dict[str, dict[str, Any]]:
    """Each TPU device plane's telemetry, by plane name."""
    return {name: _metrics(samples) for name, samples in _devices(planes).items()}


def aggregate(devices: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Over devices: the highest of each figure (pstate_min the lowest); peak_temp_c the hottest die,
    the hottest HBM only where no device reported its die (as upstream)."""
    values: dict[str, list[Any]] = defaultdict(list)
    for metrics in devices.values():
        for key, value in metrics.items():
            if value is not None and key != "peak_temp_source":
                values[key].append(value)
    out: dict[str, Any] = {key: None for key in KEYS}
    out.update({k: min(v) if k == "pstate_min" else max(v) for k, v in values.items()})
    die = [m["peak_temp_c"] for m in devices.values() if m["peak_temp_source"] == "compute_die"]
    out["peak_temp_c"] = max(die, default=out["hbm_peak_temp_c"])
    out["peak_temp_source"] = _source(max(die, default=None), out["hbm_peak_temp_c"])
    return out


def read(planes: Any, windows: list[tuple[float, float]]) -> tuple[dict[str, Any], list[float]]:
    """The trace's telemetry, and per window (an iteration on the trace clock) the highest thermal
    level any TPU reported during it (0: none; no levels where no plane has the line)."""
    devices = _devices(planes)
    events = [e for samples in devices.values() for e in samples.series["thermal_level"]]
    metrics = aggregate({name: _metrics(samples) for name, samples in devices.items()})
    levels = [max((v for s, e, v in events if s < b and e > a), default=0.0) for a, b in windows]
    return metrics, levels if events else []
