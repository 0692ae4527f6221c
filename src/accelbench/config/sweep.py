"""Expansion of Ironwood-style parameter sweeps into concrete parameter dicts.

A sweep entry is a Cartesian product over its keys, the first key varying slowest. As in the
Ironwood reference, a key's `_range` and `_list` suffixes are stripped and its value's type decides:
a list is swept, a mapping ``{start, end, multiplier | increase_by}`` is an inclusive range, anything
else is one value. ``SAME_AS_<key>`` copies another key's value within the same resolved dict.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from accelbench.errors import UserError, did_you_mean, key_path

SAME_AS = "SAME_AS_"
MAX_RANGE_VALUES = (
    100_000  # far beyond any case cap; a range is refused before it is materialised further
)
_RANGE_KEYS = {"start", "end", "multiplier", "increase_by"}


def expand_range(spec: dict[str, Any], where: str) -> list[int | float]:
    """Values of an inclusive range; refuses ranges that would never end."""
    for key in spec:
        if key not in _RANGE_KEYS:
            raise UserError(
                f"unknown range key '{key}'",
                key=f"{where}.{key}",
                suggestion=did_you_mean(key, _RANGE_KEYS),
            )
    for key in ("start", "end"):
        if key not in spec:
            raise UserError(f"range needs '{key}'", key=where)
        if isinstance(spec[key], bool) or not isinstance(spec[key], (int, float)):
            raise UserError(f"must be a number, got {spec[key]!r}", key=f"{where}.{key}")
    has_mult, has_inc = "multiplier" in spec, "increase_by" in spec
    if has_mult == has_inc:
        raise UserError("range needs exactly one of 'multiplier' or 'increase_by'", key=where)
    start, end = spec["start"], spec["end"]
    step_key = "multiplier" if has_mult else "increase_by"
    step = spec[step_key]
    if isinstance(step, bool) or not isinstance(step, (int, float)):
        raise UserError(f"must be a number, got {step!r}", key=f"{where}.{step_key}")
    if has_mult and (step <= 1 or start <= 0):
        raise UserError(
            f"range never ends: multiplier must be > 1 and start > 0 (got multiplier={step}, start={start})",
            key=f"{where}.{step_key}",
        )
    if has_inc and step <= 0:
        raise UserError(
            f"range never ends: increase_by must be > 0 (got {step})", key=f"{where}.{step_key}"
        )
    for key, number in (("start", start), ("end", end), (step_key, step)):
        if not math.isfinite(number):
            raise UserError(f"must be a finite number, got {number}", key=f"{where}.{key}")
    if start > end:
        raise UserError(f"range is empty: start ({start}) > end ({end})", key=where)
    values: list[int | float] = []
    value = start
    while value <= end:
        values.append(value)
        if len(values) > MAX_RANGE_VALUES:
            raise UserError(f"the range has more than {MAX_RANGE_VALUES:,} values", key=where)
        value = value * step if has_mult else value + step
    return values


def _axis(key: str, value: Any, where: str) -> tuple[str, list[Any]]:
    """As the Ironwood reference reads a sweep key: `_range`, then `_list`, is stripped from the name,
    and the value's type alone decides: a mapping is a range, a list is a list, anything else one value."""
    name = key.removesuffix("_range").removesuffix("_list")
    if isinstance(value, dict):
        return name, expand_range(value, where)
    values = value if isinstance(value, list) else [value]
    if not values:
        raise UserError("empty list of values", key=where)
    return name, _unique(values)


def _unique(values: list[Any]) -> list[Any]:
    """Repeated values of one axis are one case (two rows with one case id would be a lie)."""
    seen: set[tuple[str, Any]] = set()
    out: list[Any] = []
    for v in values:
        key = (
            type(v).__name__,
            v if isinstance(v, (str, int, float, bool, type(None))) else repr(v),
        )
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def resolve_same_as(params: dict[str, Any], where: str) -> dict[str, Any]:
    """Replace SAME_AS_<key> references by the referenced value (chains allowed, cycles refused)."""
    resolved = dict(params)

    def value_of(key: str, seen: tuple[str, ...]) -> Any:
        value = resolved[key]
        if not (isinstance(value, str) and value.startswith(SAME_AS)):
            return value
        target = value[len(SAME_AS) :]
        if target in seen or target == key:
            cycle = " -> ".join((*seen, key, target))
            raise UserError(f"SAME_AS_ cycle: {cycle}", key=f"{where}.{(*seen, key)[0]}")
        if target not in resolved:
            raise UserError(
                f"SAME_AS_ refers to unknown key '{target}'",
                key=f"{where}.{key}",
                suggestion=did_you_mean(target, [k for k in resolved if k != key]),
            )
        return value_of(target, (*seen, key))

    for key in list(resolved):
        resolved[key] = value_of(key, ())
    return resolved


def expand_sweep(entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """All parameter dicts of one sweep entry, in a stable order."""
    if not isinstance(entry, dict):
        raise UserError(f"a sweep entry must be a mapping, got {type(entry).__name__}", key=where)
    axes = [_axis(key, value, key_path(where, key)) for key, value in entry.items()]
    names = [name for name, _ in axes]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise UserError(
            f"parameter '{sorted(duplicates)[0]}' is given twice (plain and _list/_range)",
            key=where,
        )
    return [
        resolve_same_as(dict(zip(names, combo, strict=True)), where)
        for combo in itertools.product(*(values for _, values in axes))
    ]


def count_sweep(entry: dict[str, Any], where: str) -> int:
    """Number of cases an entry expands to, computed without building them."""
    total = 1
    for key, value in entry.items():
        total *= len(_axis(key, value, key_path(where, key))[1])
    return total
