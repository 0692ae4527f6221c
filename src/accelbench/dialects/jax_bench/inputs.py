"""What a jax-bench (v2) entry draws its values from besides its own keys: `sweep:` value forms, the
`csv_shapes:` table and `model:` presets. Each reads as upstream reads it, except that the forms
upstream hangs on or silently drops are refused in one line (docs/jax_bench.md)."""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from accelbench.config.sweep import expand_range
from accelbench.errors import UserError, did_you_mean, key_path

MAX_COMBINATIONS = 1000  # upstream keeps the first 1000 of a larger product, with a warning
MAX_CSV_BYTES = 4 << 20
MAX_CSV_ROWS = 10_000
URL_TIMEOUT_S = 10.0


def sweep_values(value: Any, where: str) -> tuple[list[Any], str | None]:
    """One sweep key's values, and a warning where upstream silently ignores part of the form. A list
    is its elements; a mapping with start and end a range (geometric when `multiplier` is above 1, else
    arithmetic by `increase_by`, default 1); any other mapping or scalar is one value. A multiplier that
    is not above 1 (other than exactly 1), a step that is not positive and an empty range are refused:
    upstream hangs on the first two and silently runs nothing for the third."""
    if isinstance(value, list):
        if not value:
            raise UserError("empty list of values: the entry would run nothing", key=where)
        return value, None
    if not (isinstance(value, dict) and "start" in value and "end" in value):
        return [value], None
    multiplier = value.get("multiplier")
    warning = None
    if multiplier is None or (not isinstance(multiplier, bool) and multiplier == 1):
        steps = {"increase_by": value.get("increase_by", 1)}
        if multiplier is not None and "increase_by" in value:
            warning = (
                f"{where}: multiplier 1 and increase_by given: increase_by is used, as upstream"
            )
    else:
        if (
            isinstance(multiplier, (int, float))
            and not isinstance(multiplier, bool)
            and multiplier < 1
        ):
            raise UserError(
                f"range never ends: a multiplier below 1 (got {multiplier}) never reaches end",
                key=key_path(where, "multiplier"),
            )
        steps = {"multiplier": multiplier}
        if "increase_by" in value:
            warning = (
                f"{where}: multiplier and increase_by given: increase_by is ignored, as upstream"
            )
    rest = {k: v for k, v in value.items() if k not in ("multiplier", "increase_by")}
    return expand_range({**rest, **steps}, where), warning


@dataclass(frozen=True)
class Sweep:
    """A sweep's axes in YAML order (first slowest) and the combinations upstream would run."""

    axes: tuple[tuple[str, list[Any]], ...]
    warnings: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return math.prod(len(values) for _, values in self.axes)

    def combinations(self) -> Iterator[dict[str, Any]]:
        names = [name for name, _ in self.axes]
        product = itertools.product(*(values for _, values in self.axes))
        for combo in itertools.islice(product, MAX_COMBINATIONS):
            yield dict(zip(names, combo, strict=True))


def read_sweep(sweep: Any, where: str) -> Sweep:
    if sweep is None:
        return Sweep(())
    if not isinstance(sweep, dict):
        raise UserError(
            f"sweep must be a mapping of key to values, got {type(sweep).__name__}", key=where
        )
    read = [(str(k), *sweep_values(v, key_path(where, str(k)))) for k, v in sweep.items()]
    return Sweep(
        tuple((name, values) for name, values, _ in read),
        tuple(warning for _, _, warning in read if warning),
    )


# ---- csv_shapes -------------------------------------------------------------------------------------


def _cell(text: str) -> Any:
    """int, else float, else the string (upstream's typing of a cell)."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
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
    """Upstream reads the path from the working directory; a path only the config's folder has is
    found there too (a config run from elsewhere)."""
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


def read_csv_shapes(path: Any, config_dir: str, where: str) -> list[dict[str, Any]]:
    """One dict per row: header names to typed cells; an empty cell leaves the key to the entry."""
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
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise UserError(f"{path}: column {twice[0]!r} appears twice in the header", key=where)
    rows = []
    for line, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise UserError(
                f"{path} line {line}: {len(cells)} cells under {len(header)} columns", key=where
            )
        rows.append({h: _cell(c.strip()) for h, c in zip(header, cells, strict=True) if c.strip()})
        if len(rows) > MAX_CSV_ROWS:
            raise UserError(f"{path} has more than {MAX_CSV_ROWS:,} rows", key=where)
    if not rows:
        raise UserError(f"{path} has no rows: the entry would run nothing", key=where)
    return rows


# ---- model presets ----------------------------------------------------------------------------------

PRESET_KEYS = (
    "layers",
    "seq_len",
    "attn_type",
    "num_q_heads",
    "num_kv_heads",
    "head_dim",
    "ffn_type",
    "model_dim",
    "shared_ffn_dim",
    "routed_ffn_dim",
    "num_experts",
    "experts_activated",
)


def _preset(*values: Any) -> dict[str, Any]:
    return dict(zip(PRESET_KEYS, values, strict=True))


MODEL_PRESETS: dict[str, dict[str, Any]] = {
    "LLM-36B": _preset(60, 8192, "MHA", 56, 56, 128, "SwiGLU", 7168, 2048, 2048, 256, 8),
    "LLM-100B": _preset(96, 16384, "GQA", 64, 8, 128, "SwiGLU", 8192, 2048, 2048, 512, 16),
    "LLM-200B": _preset(80, 16384, "GQA", 128, 8, 128, "SwiGLU", 16384, 4096, 4096, 256, 8),
    "LLM-400B": _preset(96, 16384, "GQA", 128, 8, 128, "SwiGLU", 16384, 4096, 4096, 512, 16),
}


def model_fields(
    name: Any, benchmark_fields: tuple[str, ...], entry: dict[str, Any], where: str
) -> tuple[dict[str, Any], str]:
    """The preset's values for the fields this benchmark has and the entry lacks, and a note saying
    which were used (upstream passes all of them and every such entry fails). An unknown name adds
    nothing, as upstream, and the note says so."""
    preset = MODEL_PRESETS.get(str(name))
    if preset is None:
        close = did_you_mean(str(name), MODEL_PRESETS)
        hint = f" (did you mean '{close}'?)" if close else ""
        return {}, (
            f"{where}: unknown model preset '{name}'{hint}: it sets nothing, as jax-bench ignores it "
            f"(presets: {', '.join(MODEL_PRESETS)})"
        )
    used = {k: v for k, v in preset.items() if k in benchmark_fields and k not in entry}
    note = (
        f"{where}: {name} sets {', '.join(f'{k}={v}' for k, v in used.items())}"
        if used
        else f"{where}: {name} sets nothing this benchmark takes"
    ) + " (the preset's other fields do not apply to this benchmark)"
    return used, note
