"""Roofline peaks as the jax-bench harness's configs give them: a `hardware:` block or a named system
preset (`system: ironwood`, `--hw gfc`). TFLOP/s per dtype and an HBM bandwidth that depends on the
transfer size (a curve of (bytes, GB/s) points, interpolated linearly in bytes between them).

These are per-chip figures, as upstream's are; on a chip of two devices (TPU v7x) one device's share of
them is about half (docs/jax_bench.md).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any

from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.dtypes import CANONICAL as DTYPE_NAMES


@dataclass(frozen=True)
class HardwareStats:
    """Peaks for one system: TFLOP/s (one figure, or by dtype name) and HBM GB/s (one figure, or a
    curve over transfer sizes in bytes, sorted by size)."""

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

    @property
    def empty(self) -> bool:
        return not self.tflops and not self.hbm_curve

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
        sizes = [size for size, _ in points]
        i = bisect_right(sizes, nbytes)
        if i == 0:
            return points[0][1]
        if i == len(points):
            return points[-1][1]
        (x0, y0), (x1, y1) = points[i - 1], points[i]
        return y0 + (y1 - y0) * (nbytes - x0) / (x1 - x0)

    def as_config(self) -> dict[str, Any]:
        """The mapping upstream's summary shows as `hardware_stats`: a config's block as written, a
        preset as upstream spells it."""
        return dict(self.shown)


IRONWOOD = HardwareStats(
    tflops={
        "bfloat16": 2307.0,
        "float32": 1153.5,
        "float8_e4m3fn": 4614.0,
        "float8_e5m2": 4614.0,
        "int8": 4614.0,
    },
    hbm_curve=((1024, 100.0), (1048576, 2000.0), (104857600, 5000.0), (1073741824, 7380.0)),
    ici={"peak_bw_gbps": 1200.0, "bidirectional": True},
    name="ironwood",
    chips=("TPU7x", "TPU v7"),
)
# upstream's form of a preset: its dtype table, the curve as (bytes, GB/s) tuples, the ICI entry
IRONWOOD = replace(
    IRONWOOD,
    shown={
        "tflops": dict(IRONWOOD.tflops) if isinstance(IRONWOOD.tflops, dict) else IRONWOOD.tflops,
        "hbm_bw": [(int(size), gbps) for size, gbps in IRONWOOD.hbm_curve],
        "ici": dict(IRONWOOD.ici),
    },
)
PRESETS: dict[str, HardwareStats] = {"ironwood": IRONWOOD, "gfc": replace(IRONWOOD, name="gfc")}


def preset(name: str, where: str) -> tuple[HardwareStats | None, str | None]:
    """A named system (case-insensitive). An unknown one gives no roofline and a warning, as upstream
    (its own v6e sample names `ghostlite`, which it does not know)."""
    found = PRESETS.get(name.lower())
    if found is not None:
        return found, None
    close = did_you_mean(name.lower(), PRESETS)
    hint = f" (did you mean '{close}'?)" if close else ""
    return None, (
        f"{where}: unknown system '{name}'{hint}: no roofline fields (presets: "
        f"{', '.join(PRESETS)}; or give a hardware: block with tflops and hbm_bw)"
    )


def _number(value: Any, where: str) -> float:
    """A peak: finite and not negative (NaN and infinity would make every roofline field meaningless)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise UserError(f"must be a finite non-negative number, got {value!r}", key=where)
    return float(value)


def _size(value: Any, where: str) -> float:
    """A curve's size: a number of bytes, or its string form (YAML mapping keys)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise UserError(f"a size in bytes must be a number, got {value!r}", key=where) from None
    return _number(value, where)


def _curve(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if isinstance(value, dict):
        pairs = [(_size(k, key_path(where, str(k))), v) for k, v in value.items()]
    elif isinstance(value, list):
        pairs = []
        for i, item in enumerate(value):
            if not (isinstance(item, list) and len(item) == 2):
                raise UserError(
                    f"each point must be [bytes, GB/s], got {item!r}", key=key_path(where, i)
                )
            pairs.append((_size(item[0], key_path(where, i)), item[1]))
    else:
        return ((0.0, _number(value, where)),)
    return tuple(sorted((size, _number(gbps, where)) for size, gbps in pairs))


HARDWARE_KEYS = ("tflops", "hbm_bw", "ici", "peak_tflops")


def parse_hardware(block: Any, where: str) -> tuple[HardwareStats, list[str]]:
    """A `hardware:` mapping, and the warnings it earns. `peak_tflops`, which upstream's own sample
    configs use and upstream ignores, is read as `tflops`, as the people who wrote it meant; any other
    key upstream does not read is ignored, as upstream, with a warning."""
    if not isinstance(block, dict):
        raise UserError(f"must be a mapping, got {type(block).__name__}", key=where)
    warnings = []
    for key in block:
        if key not in HARDWARE_KEYS:
            close = did_you_mean(str(key), HARDWARE_KEYS)
            hint = f" (did you mean '{close}'?)" if close else ""
            warnings.append(
                f"{key_path(where, str(key))}: not read{hint}: jax-bench reads tflops and hbm_bw"
            )
    tflops_key = "tflops" if "tflops" in block else "peak_tflops"
    if "peak_tflops" in block:
        if "tflops" in block:
            raise UserError(
                "give tflops or peak_tflops, not both", key=key_path(where, "peak_tflops")
            )
        warnings.append(
            f"{key_path(where, 'peak_tflops')} read as tflops (the jax-bench harness ignores "
            "peak_tflops and computes no roofline)"
        )
    raw = block.get(tflops_key, 0.0)
    tflops: float | dict[str, float]
    if isinstance(raw, dict):
        tflops = {str(k): _number(v, key_path(where, tflops_key, str(k))) for k, v in raw.items()}
        for name in tflops:
            if name not in DTYPE_NAMES:
                close = did_you_mean(name, DTYPE_NAMES)
                hint = f" (did you mean '{close}'?)" if close else ""
                warnings.append(
                    f"{key_path(where, tflops_key, name)}: not a jax.numpy dtype name{hint}: never "
                    "looked up (a case's peak is its dtype's, else bfloat16's)"
                )
    else:
        tflops = _number(raw, key_path(where, tflops_key))
    curve = _curve(block["hbm_bw"], key_path(where, "hbm_bw")) if "hbm_bw" in block else ()
    ici = block.get("ici") or {}
    ici_read = dict(ici) if isinstance(ici, dict) else {}
    return HardwareStats(tflops, curve, ici_read, shown=dict(block)), warnings
