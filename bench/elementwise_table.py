"""Elementwise bandwidth per implementation, with the share of a measured device-to-device copy."""

import csv
import json
import sys


def f(v, d=1):
    return f"{float(v):.{d}f}" if v not in ("", None) else ""


def main(path, copy_json):
    copy = json.load(open(copy_json))["copy_gbps"]
    print(f"measured copy bandwidth: {copy:.0f} GB/s")
    print(
        "| operation | shape | impl | status | time ms | GB/s | % of copy | % of peak | memory MB | error |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(path)):
        share = f"{100 * float(r['throughput_gbps']) / copy:.0f}" if r["throughput_gbps"] else ""
        print(
            f"| {r['operation']} | {r['batch']}x{r['seq']}x{r['hidden']} {r['dtype']} | {r['implementation']} | "
            f"{r['status']} | {f(r['time_ms'], 4)} | {f(r['throughput_gbps'], 0)} | {share} | "
            f"{f(r['gpu_efficiency'])} | {f(r['memory_mb'])} | {r['error'][:70]} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
