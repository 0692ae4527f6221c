"""Issue 12's GPU tables from one run of configs/gpu/ironwood_compute.yaml:

    python bench/ironwood_table.py ironwood_gemms.csv ironwood_memory.csv

GEMMs by TFLOP/s (2MNK only, so recipes compare on the same work) against the bf16 GEMM; memory-bound ops
by GB/s as a share of the copy bandwidth the same backend and implementation measured in the same run.
"""

import sys

from microbench.results.writer import read_rows

rows = [r for path in sys.argv[1:] for r in read_rows(path) if r["status"] == "ok"]
copy = {
    (r["backend"], r["implementation"]): float(r["gb_per_s"])
    for r in rows
    if r["op"] == "single_device_hbm_copy"
}
if copy:
    print("copy bandwidth (GB/s): " + ", ".join(f"{b}/{i} {v:.0f}" for (b, i), v in copy.items()))


def who(r: dict) -> str:
    return f"{r['backend']} {r['implementation']}"


def family(r: dict) -> str:
    """JAX, PyTorch eager or PyTorch compiled: what a recipe is compared within."""
    return r["backend"] + (" compile" if r["implementation"].startswith("compile") else "")


gemms = [r for r in rows if r["op"].startswith("gemm")]
bf16 = {family(r): float(r["time_median_s"]) for r in gemms if r["op"] == "gemm_multiple_run"}
if gemms:
    print(
        "\n| op | backend / implementation | median µs | TFLOP/s (2MNK) | vs bf16 GEMM, same backend "
        "| check error | dominant kernel (share of time) |"
    )
    print("|---|---|---|---|---|---|---|")
for r in gemms:
    m, k, n = (int(r[d]) for d in "mkn")
    t = float(r["time_median_s"])
    base = bf16.get(family(r))
    ratio = f"{base / t:.2f}x" if base else ""
    print(
        f"| {r['op']} | {who(r)} | {t * 1e6:.0f} | {2 * m * k * n / t / 1e12:.0f} | {ratio} | "
        f"{float(r['max_rel_error_ratio']):.1e} | {r['dominant_kernel'][:40]} "
        f"({float(r['dominant_kernel_pct'] or 0):.0f}%) |"
    )
others = [r for r in rows if not r["op"].startswith("gemm") and r["op"] != "single_device_hbm_copy"]
if others:
    print("\n| op | shape | dtype | backend / implementation | median µs | GB/s | % of copy |")
    print("|---|---|---|---|---|---|---|")
for r in others:
    base = copy.get((r["backend"], "jit" if r["backend"] == "jax" else "eager"))
    gbps = float(r["gb_per_s"])
    share = f"{100 * gbps / base:.0f}%" if base else ""
    print(
        f"| {r['op']} | {r['m']}x{r['n']} | {r.get('dtype') or 'bfloat16'} | {who(r)} | "
        f"{float(r['time_median_s']) * 1e6:.0f} | {gbps:.0f} | {share} |"
    )
