"""Print a compact table of result CSVs (used after GPU runs; the full rows stay in the CSVs)."""

import sys

from microbench.results.writer import read_rows


def fmt(value, scale=1.0, digits=1):
    return f"{float(value) * scale:.{digits}f}" if value not in ("", None) else ""


def main(paths):
    cols = (
        "op",
        "backend",
        "shape",
        "dtype/layout",
        "status",
        "impl",
        "median_us",
        "p10-p90_us",
        "wall_us",
        "TFLOP/s",
        "GB/s",
        "dominant kernel (share)",
        "k/iter",
        "x-err",
        "error",
    )
    print(" | ".join(cols))
    for path in paths:
        for r in read_rows(path):
            shape = "x".join(r[d] for d in ("m", "k", "n") if r.get(d))
            flavour = "/".join(
                r[c] for c in ("dtype", "in_dtype", "recipe", "layout", "model_type") if r.get(c)
            )
            spread = f"{fmt(r.get('time_p10_s'), 1e6, 2)}-{fmt(r.get('time_p90_s'), 1e6, 2)}"
            kernel = f"{(r.get('dominant_kernel') or '')[:48]} ({fmt(r.get('dominant_kernel_pct'), 1, 0)}%)"
            print(
                " | ".join(
                    [
                        r["op"],
                        r["backend"],
                        shape,
                        flavour,
                        r["status"],
                        r.get("implementation", ""),
                        fmt(r.get("time_median_s"), 1e6, 2),
                        spread,
                        fmt(r.get("wall_median_s"), 1e6, 1),
                        fmt(r.get("tflop_per_s"), 1, 1),
                        fmt(r.get("gb_per_s"), 1, 0),
                        kernel,
                        r.get("kernels_per_iter", ""),
                        fmt(r.get("cross_backend_rel_error_ratio"), 1, 5),
                        (r.get("error") or "")[:120],
                    ]
                )
            )


if __name__ == "__main__":
    main(sys.argv[1:])
