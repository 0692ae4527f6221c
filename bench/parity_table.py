"""JAX vs PyTorch per parity op: median device time, winner, output agreement, kernels."""

import sys

from accelbench.results.reading import read_rows

rows = read_rows(sys.argv[1])
torch_of = {r.pairing.paired_with: r for r in rows if r.identity.backend == "torch"}
print(
    "| op | shape | dtype / layout | JAX µs | PyTorch µs | faster | JAX vs PyTorch output (rel. err.) | JAX kernel (share) | PyTorch kernel (share) |"
)
print("|---|---|---|---|---|---|---|---|---|")
for j in (r for r in rows if r.identity.backend == "jax"):
    t = torch_of.get(j.identity.case_id)
    if not t:
        continue
    a, b = float(j.median_s or 0) * 1e6, float(t.median_s or 0) * 1e6
    p = j.params.as_dict()
    flav = "/".join(
        str(x) for x in (p.get("dtype") or p.get("in_dtype") or "", p.get("layout") or "") if x
    )
    win = "JAX" if a < b * 0.98 else "PyTorch" if b < a * 0.98 else "tie (<2%)"
    shape = "x".join(str(p[d]) for d in ("m", "k", "n") if p.get(d))
    print(
        f"| {j.identity.op} | {shape} | {flav} | {a:.1f} | {b:.1f} | {win} | {float(t.pairing.cross_backend_rel_error_ratio or 0):.1e} | "
        f"{(j.timing.dominant_kernel or '')[:44]} ({float(j.timing.dominant_kernel_pct or 0):.0f}%) | "
        f"{(t.timing.dominant_kernel or '')[:44]} ({float(t.timing.dominant_kernel_pct or 0):.0f}%) |"
    )
