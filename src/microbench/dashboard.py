"""Rows of the torchao suite in the PyTorch OSS benchmark database JSON format (torchao tutorial §4.3)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

# (metric name, row column, unit) — one database entry per metric and row
METRICS = (
    ("speedup(wrt bf16)", "speedup", "x"),
    ("baseline time", "baseline_ms", "ms"),
    ("quantized time", "quantized_ms", "ms"),
    ("allocated memory", "quantized_peak_memory_mb", "MB"),
)


def _value(row: dict[str, Any], column: str) -> float | None:
    compiled = row.get("compile_mode") not in (None, "", "off")
    if column == "speedup":
        column = "compile_speedup" if compiled else "eager_speedup"
    elif column in ("baseline_ms", "quantized_ms"):
        column = column.replace("_ms", "_compile_ms" if compiled else "_eager_ms")
    value = row.get(column)
    return float(value) if value not in (None, "") else None


def to_oss_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = []
    for row in rows:
        if row.get("status") != "ok" or row.get("op") != "torchao_inference":
            continue
        for name, column, unit in METRICS:
            value = _value(row, column)
            if value is None:
                continue
            records.append({
                "benchmark": {"name": "micro-benchmark api", "mode": "inference", "dtype": row["recipe"],
                              "extra_info": {"device": row.get("platform"), "arch": row.get("device_kind"),
                                             "unit": unit, "compile": row.get("compile_mode")}},
                "model": {"name": f"{row['model_type']}-{row['m']}-{row['k']}-{row['n']}",
                          "type": "micro-benchmark custom layer", "origins": ["torchao"]},
                "metric": {"name": name, "benchmark_values": [value], "target_value": 0.0},
                "runners": [], "dependencies": {},
            })
    return records


def write_json_atomically(path: str, data: Any) -> None:
    """Whole or nothing: written to a temporary name in the same directory, then renamed."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def export(config: str, output: str, **run_options: Any) -> int:
    """Run a config, then write its torchao rows as OSS benchmark records."""
    from microbench.session import plan_from_file, run_config
    from microbench.writer import read_rows
    code = run_config(config, **{k: v for k, v in run_options.items() if k != "seed_json"})
    if code != 0:
        return code
    cases = plan_from_file(config, output_dir=run_options.get("output_dir", "results"),
                           max_cases=run_options.get("max_cases"), max_dim=run_options.get("max_dim"),
                           num_runs=run_options.get("num_runs"))
    ids = {c.id for c in cases}
    rows = [r for path in sorted({c.outputs.csv_path for c in cases}) for r in read_rows(path) if r["case_id"] in ids]
    write_json_atomically(output, to_oss_records(rows))
    print(f"dashboard records: {output}")
    return 0
