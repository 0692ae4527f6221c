"""Issue 26's GPU checks of the jax-bench dialect, from the files `bash bench/gpu_run.sh v2` writes:

python bench/jax_bench_check.py OUT   (OUT/copy_v2.json, OUT/v2/*/*.csv, OUT/jax_bench_gemm_*.csv)

Prints, as Markdown: each unchanged upstream config's row statuses, the STREAM copy against the
measured copy ceiling (the 1 GiB point must be within 5%), and gemm_generalized against the existing
GEMM op at the same shapes, dtypes and layout on each backend.
"""

import json
import sys
from collections import Counter
from pathlib import Path

from accelbench.errors import UserError
from accelbench.results.reading import read_rows
from accelbench.results.records import Row

GIB_ELEMENTS = 1 << 29  # bf16 elements in 1 GiB: hbm_bandwidth's `size` counts elements


def statuses(out: Path) -> None:
    print("| upstream config | rows | statuses | first non-ok reason |\n|---|---|---|---|")
    for path in sorted(out.glob("v2/*/*.csv")):
        if path.name == "summary.csv":
            continue
        rows = read_rows(str(path))
        counts = Counter(r.status.value for r in rows)
        odd = next((r for r in rows if not r.ok), None)
        reason = (
            f"{odd.identity.op} {odd.identity.implementation}: {odd.identity.error[:90]}"
            if odd
            else ""
        )
        print(f"| {path.parent.name} | {len(rows)} | {dict(counts)} | {reason} |")


def stream(out: Path) -> None:
    ceiling = json.loads((out / "copy_v2.json").read_text())["copy_gbps"]
    rows = [r for r in read_rows(str(out / "v2/hbm_bandwidth/hbm_bandwidth.csv")) if r.ok]
    print(
        f"\nSTREAM copy (hbm_bandwidth, bf16, JAX, device time); measured copy ceiling {ceiling:.0f} GB/s\n"
    )
    print("| MiB per array | median µs | GB/s | % of ceiling |\n|---|---|---|---|")
    for r in sorted(rows, key=lambda r: int(r.params.value("size"))):
        gbps = float(r.derived.gb_per_s or 0)
        size = int(r.params.value("size"))
        mark = (
            ""
            if size != GIB_ELEMENTS
            else (" **met**" if gbps >= 0.95 * ceiling else " **missed**")
        )
        print(
            f"| {size * 2 / 2**20:g} | {float(r.median_s or 0) * 1e6:.1f} | {gbps:.0f} | "
            f"{100 * gbps / ceiling:.1f}%{mark} |"
        )


def gemm_key(r: Row) -> tuple:
    dtype = r.get("in_dtype") or r.get("dtype")
    shape = tuple(int(r.params.value(d)) for d in ("m", "k", "n"))
    return (r.identity.backend, r.identity.implementation, dtype, shape)


def gemms(out: Path) -> None:
    generalized = {gemm_key(r): r for r in read_rows(str(out / "jax_bench_gemm_pair.csv"))}
    reference = {gemm_key(r): r for r in read_rows(str(out / "jax_bench_gemm_reference.csv"))}
    print(
        "\ngemm_generalized against gemm_multiple_run (B as (K, N), bf16 out), median device time\n"
    )
    print(
        "| backend / impl | in dtype | m x k x n | generalized µs | existing µs | ratio | "
        "generalized TFLOP/s | status |\n|---|---|---|---|---|---|---|---|"
    )
    for key in sorted(generalized.keys() | reference.keys(), key=str):
        g, e = generalized.get(key), reference.get(key)
        gt = float(g.median_s) * 1e6 if g and g.ok and g.median_s else None
        et = float(e.median_s) * 1e6 if e and e.ok and e.median_s else None
        ratio = f"{gt / et:.3f}" if gt and et else ""
        tflops = f"{float(g.derived.tflop_per_s or 0):.0f}" if gt and g else ""
        note = "; ".join(
            f"{name} {r.status.value}: {r.identity.error[:60]}"
            for name, r in (("generalized", g), ("existing", e))
            if r is not None and not r.ok
        )
        backend, impl, dtype, shape = key
        print(
            f"| {backend} {impl} | {dtype} | {'x'.join(map(str, shape))} | "
            f"{'' if gt is None else f'{gt:.1f}'} | {'' if et is None else f'{et:.1f}'} | {ratio} | "
            f"{tflops} | {note or 'ok'} |"
        )


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/out")
    for part in (statuses, stream, gemms):
        try:
            part(root)
        except (
            OSError,
            KeyError,
            UserError,
        ) as e:  # one part's files missing: the others still print
            print(f"\n({part.__name__}: {e})")
