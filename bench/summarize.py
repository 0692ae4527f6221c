"""Print a compact table of result CSVs (used after GPU runs; the full rows stay in the CSVs)."""

import sys

from accelbench.results.reading import read_rows


def fmt(value, scale=1.0, digits=1):
    return f"{float(value) * scale:.{digits}f}" if value not in ("", None) else ""


COLUMNS = (
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


def main(paths):
    print(" | ".join(COLUMNS))
    for path in paths:
        for r in read_rows(path):
            p = r.params.as_dict()
            shape = "x".join(str(p[d]) for d in ("m", "k", "n") if p.get(d))
            flavour = "/".join(
                str(r.get(c))
                for c in ("dtype", "in_dtype", "recipe", "layout", "model_type")
                if r.get(c)
            )
            spread = f"{fmt(r.stats.time_p10_s, 1e6, 2)}-{fmt(r.stats.time_p90_s, 1e6, 2)}"
            kernel = f"{(r.timing.dominant_kernel or '')[:48]} ({fmt(r.timing.dominant_kernel_pct, 1, 0)}%)"
            per_iter = r.timing.kernels_per_iter
            print(
                " | ".join(
                    [
                        r.identity.op,
                        r.identity.backend,
                        shape,
                        flavour,
                        r.status.value,
                        r.identity.implementation or "",
                        fmt(r.median_s, 1e6, 2),
                        spread,
                        fmt(r.timing.wall_median_s, 1e6, 1),
                        fmt(r.derived.tflop_per_s, 1, 1),
                        fmt(r.derived.gb_per_s, 1, 0),
                        kernel,
                        "" if per_iter is None else f"{per_iter:g}",
                        fmt(r.pairing.cross_backend_rel_error_ratio, 1, 5),
                        r.identity.error[:120],
                    ]
                )
            )


if __name__ == "__main__":
    main(sys.argv[1:])
