"""Issue 12's GPU tables from one run of configs/gpu/ironwood_compute.yaml:

    python bench/ironwood_table.py ironwood_gemms.csv ironwood_memory.csv

GEMMs by TFLOP/s (2MNK only, so recipes compare on the same work) against the bf16 GEMM; memory-bound ops
by GB/s as a share of the copy bandwidth the same backend and implementation measured in the same run.
"""

import sys

from accelbench.results.reading import read_rows
from accelbench.results.records import Row

rows = [r for path in sys.argv[1:] for r in read_rows(path) if r.ok]
COPY = "single_device_hbm_copy"
copy = {
    (r.identity.backend, r.identity.implementation): float(r.derived.gb_per_s or 0)
    for r in rows
    if r.identity.op == COPY
}
if copy:
    print("copy bandwidth (GB/s): " + ", ".join(f"{b}/{i} {v:.0f}" for (b, i), v in copy.items()))


def who(r: Row) -> str:
    return f"{r.identity.backend} {r.identity.implementation}"


def family(r: Row) -> str:
    """JAX, PyTorch eager or PyTorch compiled: what a recipe is compared within."""
    compiled = (r.identity.implementation or "").startswith("compile")
    return r.identity.backend + (" compile" if compiled else "")


gemms = [r for r in rows if r.identity.op.startswith("gemm")]
bf16 = {family(r): float(r.median_s or 0) for r in gemms if r.identity.op == "gemm_multiple_run"}
if gemms:
    print(
        "\n| op | backend / implementation | median µs | TFLOP/s (2MNK) | vs bf16 GEMM, same backend "
        "| check error | dominant kernel (share of time) |"
    )
    print("|---|---|---|---|---|---|---|")
for r in gemms:
    m, k, n = (int(r.params.value(d)) for d in "mkn")
    t = float(r.median_s or 0)
    base = bf16.get(family(r))
    ratio = f"{base / t:.2f}x" if base else ""
    print(
        f"| {r.identity.op} | {who(r)} | {t * 1e6:.0f} | {2 * m * k * n / t / 1e12:.0f} | {ratio} | "
        f"{float(r.timing.max_rel_error_ratio or 0):.1e} | {(r.timing.dominant_kernel or '')[:40]} "
        f"({float(r.timing.dominant_kernel_pct or 0):.0f}%) |"
    )
others = [r for r in rows if not r.identity.op.startswith("gemm") and r.identity.op != COPY]
if others:
    print("\n| op | shape | dtype | backend / implementation | median µs | GB/s | % of copy |")
    print("|---|---|---|---|---|---|---|")
for r in others:
    base = copy.get((r.identity.backend, "jit" if r.identity.backend == "jax" else "eager"))
    gbps = float(r.derived.gb_per_s or 0)
    share = f"{100 * gbps / base:.0f}%" if base else ""
    print(
        f"| {r.identity.op} | {r.params.value('m')}x{r.params.value('n')} | {r.params.value('dtype') or 'bfloat16'} | "
        f"{who(r)} | {float(r.median_s or 0) * 1e6:.0f} | {gbps:.0f} | {share} |"
    )
