"""TPUMS's console report after a run: per benchmark, a table of its entry's `report_columns` in a
banner of '=', and for device_to_device the GB/s matrix per (dtype, direction, data_size_mib). Cells
as TPUMS prints them: '-' for what is missing, not finite, or a boolean where a number belongs."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

BANNER_MIN_WIDTH = 88
BANNER_PADDING = 4
DIAGONAL = "X"
MATRIX_SWEEP = ("dtype", "direction", "data_size_mib")
MATRIX_DOMAINS = (("wall_clock", "Wall Clock"), ("xprof", "XProf"))


def format_float(value: Any, precision: int = 2) -> str:
    if value is None or isinstance(value, (bool, np.bool_)):
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    return f"{number:.{precision}f}" if math.isfinite(number) else "-"


def format_str(value: Any) -> str:
    if isinstance(value, str):
        return value or "-"
    import pandas as pd

    with contextlib.suppress(TypeError, ValueError):
        if pd.isna(value):
            return "-"
    return str(value)


FORMATS: dict[str, Callable[[Any], str]] = {
    "str": format_str,
    "2f": lambda v: format_float(v, 2),
    "4f": lambda v: format_float(v, 4),
}


def banner(title: str, body: str) -> str:
    """`title` and `body` between rules of '=' as wide as the widest line, title + padding, or 88."""
    widest = max((len(line) for line in body.splitlines()), default=0)
    rule = "=" * max(widest, len(title) + BANNER_PADDING, BANNER_MIN_WIDTH)
    return f"{rule}\n{title}\n{rule}\n{body}\n{rule}"


def benchmark_table(frame: Any, columns: Sequence[tuple[str, str]], title: str = "") -> str:
    """The rows under `columns` (name, format); an xprof column the rows lack is left out."""
    if frame is None or frame.empty:
        return ""
    active = [(c, f) for c, f in columns if not c.startswith("xprof_") or c in frame.columns]
    if not active:
        return ""
    body = frame.reindex(columns=[c for c, _ in active]).to_string(
        index=False, formatters=[FORMATS[f] for _, f in active], na_rep="-"
    )
    return banner(f"Benchmark Results ({title})" if title else "Benchmark Results", body)


def device_matrix(frame: Any, marker: str = DIAGONAL) -> str:
    """GB/s from each source (rows) to each destination, per timing domain and sweep point."""
    import pandas as pd

    src, dst = "src_device_index", "dst_device_index"
    if frame is None or frame.empty or src not in frame or dst not in frame:
        return ""
    sweep = [c for c in MATRIX_SWEEP if c in frame.columns]
    groups = list(frame.groupby(sweep, sort=False, dropna=False)) if sweep else [((), frame)]
    out = []
    for domain, title in MATRIX_DOMAINS:
        rate = f"{domain}_bandwidth_per_device_gb_s"
        if domain != "wall_clock" and rate not in frame.columns:
            continue
        for key, rows in groups:
            pairs = rows.dropna(subset=[src, dst])
            devices = sorted({int(d) for d in (*pairs[src], *pairs[dst])})
            if not devices:
                continue
            # the last row of a pair wins
            cells = {(int(r[src]), int(r[dst])): r.get(rate) for _, r in pairs.iterrows()}
            names = [f"D{d}" for d in devices]
            grid = [
                [marker if i == j else format_float(cells.get((i, j))) for j in devices]
                for i in devices
            ]
            heading = f"Device-to-Device Bandwidth Matrix ({title} GB/s)"
            point = zip(sweep, key if isinstance(key, tuple) else (key,), strict=False)
            if sweep:
                heading += " [" + ", ".join(f"{k}={_nan(v)}" for k, v in point) + "]"
            out.append(banner(heading, pd.DataFrame(grid, index=names, columns=names).to_string()))
    return "\n\n".join(out)


def _nan(value: Any) -> Any:
    return "nan" if value is None or (isinstance(value, float) and math.isnan(value)) else value


def console_report(entries: list[dict[str, Any]]) -> list[str]:
    import pandas as pd

    from accelbench.benchmarks.base import TPUMS
    from accelbench.benchmarks.files import OURS_KEY, summary_row

    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        name = entry.get(OURS_KEY, {}).get("name_given")
        if entry.get(OURS_KEY, {}).get("generation") == "tpums" and name in TPUMS:
            groups.setdefault(name, []).append(summary_row(entry, ket_and_throughput=False))
    out = []
    for name, rows in groups.items():
        tpums, frame = TPUMS[name], pd.DataFrame(rows)
        sections = [benchmark_table(frame, tpums.report_columns, tpums.bench.class_name)]
        if tpums.device_matrix:
            sections.append(device_matrix(frame))
        out += [s for s in sections if s]
    return out
