"""Roofline peaks as a jax-bench config gives them: a `hardware:` block, or a system preset (`system:
ironwood`, `--hw gfc`; from `accelbench.specs`). Per chip, as upstream's (docs/jax_bench.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from accelbench.core.param_kinds import real
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.dtypes import CANONICAL as DTYPE_NAMES
from accelbench.specs import HardwareStats, presets


def hint(word: str, choices: Iterable[str]) -> str:
    """A warning's "did you mean" (an error's is UserError.suggestion)."""
    close = did_you_mean(word, choices)
    return f" (did you mean '{close}'?)" if close else ""


def preset(name: str, where: str, warnings: list[str]) -> HardwareStats | None:
    """A named system (any case); an unknown one (upstream's v6e sample names `ghostlite`) gives no
    roofline and a warning, as upstream."""
    found = presets().get(name.lower())
    if found is None:
        warnings.append(
            f"{where}: unknown system '{name}'{hint(name.lower(), presets())}: no roofline fields "
            f"(presets: {', '.join(presets())}; or give a hardware: block with tflops and hbm_bw)"
        )
    return found


def _number(value: Any, where: str) -> float:
    """A peak: finite and not negative (NaN and infinity would make every roofline field meaningless)."""
    if not real(value) or not math.isfinite(value) or value < 0:
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


def parse_hardware(block: Any, where: str, warnings: list[str]) -> HardwareStats:
    """A `hardware:` mapping: `peak_tflops` (upstream's samples give it, upstream ignores it) is read
    as `tflops`, as meant; any other key upstream ignores is ignored, said in `warnings`."""
    if not isinstance(block, dict):
        raise UserError(f"must be a mapping, got {type(block).__name__}", key=where)
    warnings += [
        f"{key_path(where, str(k))}: not read{hint(str(k), HARDWARE_KEYS)}: jax-bench reads tflops "
        "and hbm_bw"
        for k in block
        if k not in HARDWARE_KEYS
    ]
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
        warnings += [
            f"{key_path(where, tflops_key, name)}: not a jax.numpy dtype name"
            f"{hint(name, DTYPE_NAMES)}: never looked up (a case's peak is its dtype's, else "
            "bfloat16's)"
            for name in tflops
            if name not in DTYPE_NAMES
        ]
    else:
        tflops = _number(raw, key_path(where, tflops_key))
    curve = _curve(block["hbm_bw"], key_path(where, "hbm_bw")) if "hbm_bw" in block else ()
    ici = block.get("ici") or {}
    ici_read = dict(ici) if isinstance(ici, dict) else {}
    return HardwareStats(tflops, curve, ici_read, shown=dict(block))
