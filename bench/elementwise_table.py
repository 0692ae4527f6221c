"""Elementwise bandwidth per implementation, with the share of a measured device-to-device copy."""

import json
import sys

from microbench.results.writer import read_rows


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
        share = f"{100 * float(r['gb_per_s']) / copy:.0f}" if r["gb_per_s"] else ""
        time_ms = f"{float(r['time_median_s']) * 1e3:.4f}" if r["time_median_s"] else ""
        memory = r["peak_memory_bytes"]
        print(
            f"| {r['operation']} | {r['batch']}x{r['seq']}x{r['hidden']} {r['dtype']} | {r['implementation']} | "
            f"{r['status']} | {time_ms} | {f(r['gb_per_s'], 0)} | {share} | "
            f"{f(r['bandwidth_of_peak_pct'])} | {f(float(memory) / 2**20) if memory else ''} | {r['error'][:70]} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
