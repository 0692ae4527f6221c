"""Fusion results per pattern as a Markdown table."""

import csv
import sys


def f(v, d=3):
    return f"{float(v):.{d}f}" if v not in ("", None) else ""


def main(path):
    print(
        "| pattern | shape | dtype | status | unfused ms | fused ms | speedup | fused impl | kernels u/f | verdict | mem. reduction (model) | peak MB u/f |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(path)):
        print(
            f"| {r['fusion_pattern'] or r['pattern']} | {r['input_shape']} | {r['dtype']} | {r['status']} | "
            f"{f(r['unfused_latency_ms'])} | {f(r['fused_latency_ms'])} | {f(r['speedup_factor'], 2)} | {r['fused_impl']} | "
            f"{f(r['unfused_kernels'], 0)}/{f(r['fused_kernels'], 0)} | {r['fusion_verdict'] or r['error'][:60]} | "
            f"{f(r['memory_reduction'], 2)} | {f(r['unfused_peak_memory_mb'], 1)}/{f(r['fused_peak_memory_mb'], 1)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
