"""Rows of the torchao suite in the PyTorch OSS benchmark database JSON format (torchao tutorial §4.3)."""

from __future__ import annotations

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
            records.append(
                {
                    "benchmark": {
                        "name": "micro-benchmark api",
                        "mode": "inference",
                        "dtype": row["recipe"],
                        "extra_info": {
                            "device": row.get("platform"),
                            "arch": row.get("device_kind"),
                            "unit": unit,
                            "compile": row.get("compile_mode"),
                        },
                    },
                    "model": {
                        "name": f"{row['model_type']}-{row['m']}-{row['k']}-{row['n']}",
                        "type": "micro-benchmark custom layer",
                        "origins": ["torchao"],
                    },
                    "metric": {"name": name, "benchmark_values": [value], "target_value": 0.0},
                    "runners": [],
                    "dependencies": {},
                }
            )
    return records
