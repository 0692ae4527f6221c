"""Fusion results per pattern as a Markdown table."""

import sys

from accelbench.ops.fusion import FusionExtras
from accelbench.results.reading import read_rows


def f(v, d=3, scale=1.0):
    return f"{float(v) * scale:.{d}f}" if v not in ("", None) else ""


def main(path):
    print(
        "| pattern | shape | dtype | status | unfused ms | fused ms | speedup | fused impl | kernels u/f | verdict | mem. reduction (model) | peak MB u/f |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in read_rows(path):
        if r.identity.suite != "fusion":  # a file may hold other suites' rows (gpu_run.sh units)
            continue
        x = r.extras if isinstance(r.extras, FusionExtras) else None
        if x is None:
            print(
                f"| {r.params.value('pattern')} |  | {r.params.value('dtype')} | {r.status.value} | | | | | | {r.identity.error[:60]} | | |"
            )
            continue
        print(
            f"| {x.fusion_pattern} | {x.input_shape} | {r.params.value('dtype')} | {r.status.value} | "
            f"{f(x.unfused_latency_s, 3, 1e3)} | {f(x.fused_latency_s, 3, 1e3)} | {f(x.speedup_ratio, 2)} | {x.fused_impl} | "
            f"{f(x.unfused_kernels_per_iter, 0)}/{f(x.fused_kernels_per_iter, 0)} | {x.fusion_verdict or r.identity.error[:60]} | "
            f"{f(x.memory_reduction_pct, 0)}% | {f(x.unfused_peak_memory_bytes, 1, 2**-20)}/{f(x.fused_peak_memory_bytes, 1, 2**-20)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
