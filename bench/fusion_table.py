"""Fusion results per pattern as a Markdown table."""

import sys

from microbench.results.writer import read_rows


def f(v, d=3, scale=1.0):
    return f"{float(v) * scale:.{d}f}" if v not in ("", None) else ""


def main(path):
    print(
        "| pattern | shape | dtype | status | unfused ms | fused ms | speedup | fused impl | kernels u/f | verdict | mem. reduction (model) | peak MB u/f |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in read_rows(path):
        print(
            f"| {r['fusion_pattern'] or r['pattern']} | {r['input_shape']} | {r['dtype']} | {r['status']} | "
            f"{f(r['unfused_latency_s'], 3, 1e3)} | {f(r['fused_latency_s'], 3, 1e3)} | {f(r['speedup_ratio'], 2)} | {r['fused_impl']} | "
            f"{f(r['unfused_kernels_per_iter'], 0)}/{f(r['fused_kernels_per_iter'], 0)} | {r['fusion_verdict'] or r['error'][:60]} | "
            f"{f(r['memory_reduction_pct'], 0)}% | {f(r['unfused_peak_memory_bytes'], 1, 2**-20)}/{f(r['fused_peak_memory_bytes'], 1, 2**-20)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
