"""Upstream's configs under upstream's conditions and under this project's strict ones, side by side,
from the summary.csv files `bash bench/gpu_run.sh v2_conditions` leaves:

    python bench/jax_bench_conditions.py OUT/cond     (OUT/cond/<conditions>/<config>/summary.csv)

Per case (upstream's run id): the host clock's p50 (upstream's `p50_ms`), the device span's p50
(`xprof_p50_ms`, with xprof_timing), this project's device time p50 (`device_p50_ms`) and upstream's rate
column (TFLOP/s or GB/s, from xprof_avg_ms where upstream takes it from there), under each conditions,
and strict's device p50 over upstream's.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def _rows(path: Path) -> dict[tuple[str, str, int], dict[str, str]]:
    """Rows by (benchmark, run id, repeat): a file may mix names and ask for a case twice."""
    if not path.exists():
        return {}
    out: dict[tuple[str, str, int], dict[str, str]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            n = 0
            while (r["benchmark"], r["run_id"], n) in out:
                n += 1
            out[(r["benchmark"], r["run_id"], n)] = r
    return out


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _cell(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def rate(row: dict[str, str]) -> str:
    for column, unit in (("tflops_per_sec", "TFLOP/s"), ("bandwidth_gb_s", "GB/s")):
        value = _number(row.get(column))
        if value:
            return f"{value:.4g} {unit}"
    return ""


def main(root: Path) -> None:
    configs = sorted({p.parent.name for p in root.glob("*/*/summary.csv")})
    print(
        "| config | case | upstream: host p50 ms | xprof p50 ms | device p50 ms | rate "
        "| strict: host p50 ms | device p50 ms | rate | strict / upstream device |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for config in configs:
        upstream = _rows(root / "upstream" / config / "summary.csv")
        strict = _rows(root / "strict" / config / "summary.csv")
        for key, u in upstream.items():
            s = strict.get(key, strict.get((key[0], key[1], 0), {}))
            run_id = f"{key[0].removesuffix('Benchmark')} {key[1]}" + (" (again)" if key[2] else "")
            ud, sd = _number(u.get("device_p50_ms")), _number(s.get("device_p50_ms"))
            ratio = f"{sd / ud:.3f}" if ud and sd else ""
            print(
                f"| {config} | {run_id} | {_cell(_number(u.get('p50_ms')))} "
                f"| {_cell(_number(u.get('xprof_p50_ms')))} | {_cell(ud)} | {rate(u)} "
                f"| {_cell(_number(s.get('p50_ms')))} | {_cell(sd)} | {rate(s)} | {ratio} |"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out/cond"))
