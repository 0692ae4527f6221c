"""JAX vs PyTorch per parity op: median device time, winner, output agreement, kernels."""

import sys

from microbench.results.writer import read_rows

rows = list(read_rows(sys.argv[1]))
jax = {r["paired_with"]: r for r in rows if r["backend"] == "torch"}
print(
    "| op | shape | dtype / layout | JAX µs | PyTorch µs | faster | JAX vs PyTorch output (rel. err.) | JAX kernel (share) | PyTorch kernel (share) |"
)
print("|---|---|---|---|---|---|---|---|---|")
for j in (r for r in rows if r["backend"] == "jax"):
    t = jax.get(j["case_id"])
    if not t:
        continue
    a, b = float(j["time_median_s"]) * 1e6, float(t["time_median_s"]) * 1e6
    flav = "/".join(
        x for x in (j.get("dtype") or j.get("in_dtype") or "", j.get("layout") or "") if x
    )
    win = "JAX" if a < b * 0.98 else "PyTorch" if b < a * 0.98 else "tie (<2%)"
    shape = "x".join(j[d] for d in ("m", "k", "n") if j.get(d))
    print(
        f"| {j['op']} | {shape} | {flav} | {a:.1f} | {b:.1f} | {win} | {float(t['cross_backend_rel_error_ratio']):.1e} | "
        f"{j['dominant_kernel'][:44]} ({float(j['dominant_kernel_pct']):.0f}%) | {t['dominant_kernel'][:44]} ({float(t['dominant_kernel_pct']):.0f}%) |"
    )
