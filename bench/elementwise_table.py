"""Elementwise bandwidth per implementation, with the share of a measured device-to-device copy."""

import json
import sys

from accelbench.results.reading import read_rows


def f(v, d=1):
    return f"{float(v):.{d}f}" if v not in ("", None) else ""


def main(path, copy_json):
    copy = json.load(open(copy_json))["copy_gbps"]
    print(f"measured copy bandwidth: {copy:.0f} GB/s")
    print(
        "| operation | shape | impl | status | time ms | GB/s | % of copy | % of peak | memory MB | error |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in read_rows(path):
        if r.identity.op != "elementwise":  # a file may hold other suites' rows (gpu_run.sh units)
            continue
        gbps = r.derived.gb_per_s
        share = f"{100 * gbps / copy:.0f}" if gbps else ""
        time_ms = f"{r.median_s * 1e3:.4f}" if r.median_s else ""
        memory = getattr(r.extras, "peak_memory_bytes", None)
        p = r.params.as_dict()
        impl = r.identity.implementation or p.get("implementation", "")
        print(
            f"| {p['operation']} | {p['batch']}x{p['seq']}x{p['hidden']} {p['dtype']} | {impl} | "
            f"{r.status.value} | {time_ms} | {f(gbps, 0)} | {share} | "
            f"{f(r.roofline.bandwidth_of_peak_pct)} | {f(memory / 2**20) if memory else ''} | {r.identity.error[:70]} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
