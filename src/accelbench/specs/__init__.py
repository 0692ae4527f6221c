"""Every accelerator's figures, one module per generation (as upstream's `specs/`), each source's as it
states them (TPUMS's tpu7x HBM is 7380 GB/s, the datasheet's 7370); unknown ones None (blank)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Peaks:
    """A chip's dense peaks (no sparsity), by the peak family a dtype's math runs at."""

    chip: str
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tflops: float | None = None
    fp32_tflops: float | None = None
    hbm_gbps: float | None = None
    l2_mib: float | None = None  # the device's L2, beside which a warm-cache time is read

    def tflops(self, family: str) -> float | None:
        return getattr(self, f"{family}_tflops", None)


@dataclass(frozen=True)
class DeviceSpec:
    """TPUMS's per-device peaks: TFLOP/s by dtype name (absent: bfloat16's; None: no roofline)."""

    devices_per_chip: int
    tflops: dict[str, float | None]
    hbm_gb_s_per_chip: float

    def peak_tflops(self, dtype_name: str) -> float | None:
        return self.tflops.get(dtype_name, self.tflops["bfloat16"])

    @property
    def hbm_gb_s_per_device(self) -> float:
        return self.hbm_gb_s_per_chip / self.devices_per_chip


@dataclass(frozen=True)
class HardwareStats:
    """Per-chip peaks as jax-bench's configs give them: TFLOP/s (by dtype name or not) and HBM GB/s
    (a curve over transfer sizes in bytes, sorted)."""

    tflops: float | dict[str, float] = 0.0
    hbm_curve: tuple[tuple[float, float], ...] = ()
    ici: dict[str, Any] = field(default_factory=dict)  # stored, as upstream stores it; never read
    name: str = ""  # a preset's name; empty for a config's own `hardware:` block
    chips: tuple[str, ...] = ()  # device kinds (as JAX names them) whose peaks these are
    shown: dict[str, Any] = field(default_factory=dict)  # as upstream echoes it (`hardware_stats`)

    def describes(self, device_kind: str | None) -> bool:
        """Whether these peaks are this device's: unknown for a config's own block (trusted)."""
        if not self.chips or not device_kind:
            return True
        return any(chip.lower() in device_kind.lower() for chip in self.chips)

    def peak_tflops(self, dtype_name: str) -> float:
        """The dtype's peak, else bfloat16's, else 0 (upstream's fallbacks)."""
        if isinstance(self.tflops, dict):
            return float(self.tflops.get(dtype_name, self.tflops.get("bfloat16", 0.0)))
        return float(self.tflops)

    def bandwidth_at(self, nbytes: float) -> float:
        """GB/s for a transfer of `nbytes`: the nearest end outside the curve, linear inside it."""
        points = self.hbm_curve
        if not points:
            return 0.0
        i = bisect_right([size for size, _ in points], nbytes)
        if i in (0, len(points)):
            return points[min(i, len(points) - 1)][1]
        (x0, y0), (x1, y1) = points[i - 1], points[i]
        return y0 + (y1 - y0) * (nbytes - x0) / (x1 - x0)


def preset_stats(name: str, stats: HardwareStats) -> HardwareStats:
    """A named preset, shown as upstream spells it in `hardware_stats`."""
    tflops = dict(stats.tflops) if isinstance(stats.tflops, dict) else stats.tflops
    curve = [(int(size), gbps) for size, gbps in stats.hbm_curve]
    shown = {"tflops": tflops, "hbm_bw": curve, "ici": dict(stats.ici)}
    return replace(stats, name=name, shown=shown)


@dataclass(frozen=True)
class Chip:
    """One accelerator: a pattern over its framework's device kind (the first registered match
    wins), its peaks, TPUMS's spec (by exact lower-case kinds) and the jax-bench presets naming it."""

    kinds: str
    peaks: Peaks
    tpums: DeviceSpec | None = None
    tpums_kinds: tuple[str, ...] = ()
    presets: dict[str, HardwareStats] = field(default_factory=dict)


CHIPS: list[Chip] = []
PRESETS: dict[str, HardwareStats] = {}  # jax-bench's system presets by name (scoped by tests)


def register_chip(chip: Chip) -> Chip:
    CHIPS.append(chip)
    PRESETS.update(chip.presets)
    return chip


def _chips() -> list[Chip]:
    if not CHIPS:  # each generation's module registers its chips as it is imported
        for module in pkgutil.iter_modules(__path__, __name__ + "."):
            importlib.import_module(module.name)
    return CHIPS


def lookup(device_kind: str) -> Peaks:
    """Peaks for a device-kind string; an unknown device gets an all-blank entry."""
    for chip in _chips():
        if re.search(chip.kinds, device_kind or ""):
            return chip.peaks
    return Peaks(chip="unknown")


def with_overrides(peaks: Peaks, overrides: dict[str, Any] | None) -> Peaks:
    """The user's peaks (YAML `peaks:`) over the table's."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if not given:
        return peaks
    chip = peaks.chip if peaks.chip != "unknown" else "user"
    return replace(peaks, chip=f"{chip}+overrides", **given)


def tpums_spec(device_kind: str | None) -> DeviceSpec | None:
    """TPUMS's spec of a TPU by its device kind; None on any other device (its peaks stay blank)."""
    kind = str(device_kind or "").lower()
    return next((c.tpums for c in _chips() if kind in c.tpums_kinds), None)


def presets() -> dict[str, HardwareStats]:
    _chips()
    return PRESETS
