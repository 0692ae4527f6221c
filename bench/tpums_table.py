"""The TPUMS columns of summary.csv files as a Markdown table (issue 38's GPU figures). Not a test.

python bench/tpums_table.py OUT/tpums/*/summary.csv
"""

from __future__ import annotations

import csv
import sys

FIELDS = ("m", "k", "n", "in_dtype", "num_elements", "op_type", "dtype", "matrix_dim", "direction")
METRICS = (
    "samples_per_run",
    "wall_clock_initial_p50_ms",
    "wall_clock_sustained_p50_ms",
    "wall_clock_slowdown_ratio",
    "xprof_initial_p50_ms",
    "xprof_sustained_p50_ms",
    "xprof_slowdown_ratio",
    "wall_clock_p50_ms",
    "xprof_p50_ms",
    "wall_clock_tflops_per_device",
    "xprof_tflops_per_device",
    "xprof_bandwidth_per_device_gb_s",
    "total_bytes_mib",
    "participants_per_slice",
    "ring_factor",
    "xprof_per_device_algo_gbps",
    "xprof_host_bus_gbps",
    "xprof_duplex_utilization_pct",
    "check",
    "timing_source",
)


def cell(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value
    return f"{number:.4g}"


def main(paths: list[str]) -> None:
    for path in paths:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        columns = [c for c in (*FIELDS, *METRICS) if c in rows[0]]
        print(f"\n{rows[0]['benchmark']} ({path.split('/')[-2]})\n")
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
        for row in rows:
            print("| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
