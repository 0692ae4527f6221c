"""One expansion engine: every dialect describes its cases as data and takes its points from
`Expansion` (each case over the sweep's product, the first axis slowest), every value with the key
that gave it. Sweeps are read the Ironwood reference's way or the later generations'."""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from accelbench.core.param_kinds import real
from accelbench.errors import UserError, did_you_mean, key_path

SAME_AS = "SAME_AS_"
MAX_RANGE_VALUES = 100_000  # far beyond any case cap: a range is refused before it grows further
RANGE_KEYS = ("start", "end", "multiplier", "increase_by")
MAX_CSV_BYTES = 4 << 20
MAX_CSV_ROWS = 10_000
URL_TIMEOUT_S = 10.0
MAX_COMBINATIONS = 1000  # upstream keeps the first 1000 of a larger product, with a warning


@dataclass(frozen=True)
class Given:
    """A value and the key that gave it (errors name it)."""

    value: Any
    where: str


Point = dict[str, Given]


def given(values: dict[Any, Any], where: str) -> Point:
    return {str(k): Given(v, key_path(where, str(k))) for k, v in values.items()}


def values_of(point: Point) -> dict[str, Any]:
    return {k: g.value for k, g in point.items()}


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[Any, ...]
    where: str


@dataclass(frozen=True)
class Expansion:
    """Each case over the sweep's product, at most the first `cap` combinations per case."""

    cases: tuple[Point, ...] = ({},)
    axes: tuple[Axis, ...] = ()
    cap: int | None = None

    @property
    def total(self) -> int:  # combinations per case
        return math.prod(len(axis.values) for axis in self.axes)

    def points(self) -> Iterator[Point]:
        for case in self.cases:
            combos = itertools.product(*(axis.values for axis in self.axes))
            for combo in itertools.islice(combos, self.cap):
                swept = {a.name: Given(v, a.where) for a, v in zip(self.axes, combo, strict=True)}
                yield {**case, **swept}


def expand_range(spec: dict[str, Any], where: str) -> list[int | float]:
    """Values of an inclusive range with exactly one step; refuses ranges that would never end."""
    for key in spec:
        if key not in RANGE_KEYS:
            raise UserError(
                f"unknown range key '{key}'",
                key=f"{where}.{key}",
                suggestion=did_you_mean(key, RANGE_KEYS),
            )
    for key in ("start", "end"):
        if key not in spec:
            raise UserError(f"range needs '{key}'", key=where)
        _number(spec[key], f"{where}.{key}")
    if ("multiplier" in spec) == ("increase_by" in spec):
        raise UserError("range needs exactly one of 'multiplier' or 'increase_by'", key=where)
    step_key = "multiplier" if "multiplier" in spec else "increase_by"
    start, end, step = spec["start"], spec["end"], _number(spec[step_key], f"{where}.{step_key}")
    if step_key == "multiplier" and (step <= 1 or start <= 0):
        raise UserError(
            f"range never ends: multiplier must be > 1 and start > 0 (got multiplier={step}, "
            f"start={start})",
            key=f"{where}.{step_key}",
        )
    if step_key == "increase_by" and step <= 0:
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
        value = value * step if step_key == "multiplier" else value + step
    return values


def _number(value: Any, where: str) -> Any:
    if not real(value):
        raise UserError(f"must be a number, got {value!r}", key=where)
    return value


# ---- the Ironwood reference's sweeps ----------------------------------------------------------------


def ironwood_axis(key: str, value: Any, where: str) -> Axis:
    """As the Ironwood reference reads a sweep key: `_range`/`_list` stripped, the value's type alone
    decides (a mapping is a range); a value repeated in one axis is one case (one id, one row)."""
    name = key.removesuffix("_range").removesuffix("_list")
    if isinstance(value, dict):
        return Axis(name, tuple(expand_range(value, where)), where)
    values = value if isinstance(value, list) else [value]
    if not values:
        raise UserError("empty list of values", key=where)
    unique: dict[tuple[str, Any], Any] = {}
    for v in values:
        plain = isinstance(v, (str, int, float, bool, type(None)))
        unique.setdefault((type(v).__name__, v if plain else repr(v)), v)
    return Axis(name, tuple(unique.values()), where)


def ironwood_sweep(entry: Any, where: str) -> Expansion:
    if not isinstance(entry, dict):
        raise UserError(f"a sweep entry must be a mapping, got {type(entry).__name__}", key=where)
    axes = tuple(ironwood_axis(str(k), v, key_path(where, str(k))) for k, v in entry.items())
    names = [a.name for a in axes]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise UserError(
            f"parameter '{twice[0]}' is given twice (plain and _list/_range)", key=where
        )
    return Expansion(axes=axes)


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


# ---- the later generations' sweeps (jax-bench, TPUMS) -----------------------------------------------


def upstream_values(value: Any, where: str, warnings: list[str]) -> list[Any]:
    """One sweep key's values (a list; a start-end range, by `multiplier` above 1, else `increase_by`,
    default 1; else one value), with a warning where upstream ignores part of it. Ranges upstream
    hangs on or runs nothing for are refused."""
    if isinstance(value, list):
        if not value:
            raise UserError("empty list of values: the entry would run nothing", key=where)
        return value
    if not (isinstance(value, dict) and "start" in value and "end" in value):
        return [value]
    multiplier = value.get("multiplier")
    by_one = multiplier is None or (not isinstance(multiplier, bool) and multiplier == 1)
    if not by_one and real(multiplier) and multiplier < 1:
        raise UserError(
            f"range never ends: a multiplier below 1 (got {multiplier}) never reaches end",
            key=key_path(where, "multiplier"),
        )
    steps = {"increase_by": value.get("increase_by", 1)} if by_one else {"multiplier": multiplier}
    rest = {k: v for k, v in value.items() if k not in ("multiplier", "increase_by")}
    values = expand_range({**rest, **steps}, where)
    if multiplier is not None and "increase_by" in value:
        used = "1 and increase_by given: increase_by is used" if by_one else "and increase_by given"
        ignored = "" if by_one else ": increase_by is ignored"
        warnings.append(f"{where}: multiplier {used}{ignored}, as upstream")
    return values


def upstream_sweep(sweep: Any, where: str, past_cap: str, warnings: list[str]) -> Expansion:
    """A later generation's sweep, its first MAX_COMBINATIONS run (`past_cap`: the warning's tail)."""
    if sweep is None:
        return Expansion(cap=MAX_COMBINATIONS)
    if not isinstance(sweep, dict):
        raise UserError(
            f"sweep must be a mapping of key to values, got {type(sweep).__name__}", key=where
        )
    axes = []
    for key, value in sweep.items():
        at = key_path(where, str(key))
        axes.append(Axis(str(key), tuple(upstream_values(value, at, warnings)), at))
    expansion = Expansion(axes=tuple(axes), cap=MAX_COMBINATIONS)
    if expansion.total > MAX_COMBINATIONS:
        cap = past_cap.format(MAX_COMBINATIONS)
        warnings.append(f"{where}: {expansion.total:,} combinations{cap}")
    return expansion


# ---- tables (csv_shapes:, cases_from_csv:) ----------------------------------------------------------


def _cell(text: str) -> Any:
    """int, else float, else the string (upstream's typing of a cell)."""
    for convert in (int, float):
        with contextlib.suppress(ValueError):
            return convert(text)
    return text


def _fetch(url: str, where: str) -> str:
    import urllib.error  # http.client and ssl: only for a config that names a URL
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=URL_TIMEOUT_S) as response:
            data = response.read(MAX_CSV_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise UserError(f"cannot fetch {url}: {reason}", key=where) from None
    if len(data) > MAX_CSV_BYTES:
        raise UserError(f"{url} is larger than {MAX_CSV_BYTES >> 20} MiB", key=where)
    return data.decode("utf-8-sig", errors="replace")


def _local(path: str, config_dir: str, where: str) -> str:
    """From the working directory as upstream, else from the config's folder."""
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(config_dir, path)]
    for candidate in candidates:
        if os.path.isfile(candidate):
            if os.path.getsize(candidate) > MAX_CSV_BYTES:
                raise UserError(f"{candidate} is larger than {MAX_CSV_BYTES >> 20} MiB", key=where)
            try:
                with open(candidate, encoding="utf-8-sig", newline="") as f:
                    return f.read()
            except UnicodeDecodeError as error:
                raise UserError(
                    f"{candidate} is not UTF-8 text (byte {error.start}): save it as a UTF-8 CSV",
                    key=where,
                ) from None
    looked = " or ".join(dict.fromkeys(os.path.abspath(c) for c in candidates))
    raise UserError(f"no CSV file at {looked}", key=where)


def csv_cases(path: Any, config_dir: str, where: str) -> tuple[Point, ...]:
    """A table's rows as cases, each cell keyed `WHERE row I column K`; an empty cell gives nothing."""
    if not isinstance(path, str) or not path:
        raise UserError(f"must be a file path or an http(s) URL, got {path!r}", key=where)
    text = (
        _fetch(path, where)
        if path.startswith(("http://", "https://"))
        else _local(path, config_dir, where)
    )
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    if not header or any(not h for h in header):
        raise UserError(f"{path}: the first line must name every column", key=where)
    if twice := sorted({h for h in header if header.count(h) > 1}):
        raise UserError(f"{path}: column {twice[0]!r} appears twice in the header", key=where)
    rows: list[Point] = []
    for line, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise UserError(
                f"{path} line {line}: {len(cells)} cells under {len(header)} columns", key=where
            )
        at = f"{where} row {len(rows) + 1} column"
        cells = [c.strip() for c in cells]
        rows.append(
            {h: Given(_cell(c), f"{at} {h}") for h, c in zip(header, cells, strict=True) if c}
        )
        if len(rows) > MAX_CSV_ROWS:
            raise UserError(f"{path} has more than {MAX_CSV_ROWS:,} rows", key=where)
    if not rows:
        raise UserError(f"{path} has no rows: the entry would run nothing", key=where)
    return tuple(rows)
