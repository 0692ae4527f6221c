"""Issue 50's tables from results files (not a test):

python bench/throttle_table.py cost OFF.csv ... -- FLAG.csv ...   # medians with the sampling off/on
python bench/throttle_table.py rows A.csv B.csv ...               # each row's clocks and policy
"""

from __future__ import annotations

import statistics
import sys

from accelbench.results.reading import read_rows


def cost(off: list[str], on: list[str]) -> None:
    """Per case: each run's median with the NVML thread off and on, and the median ratio."""
    print("| case | off: medians (µs) | flag: medians (µs) | flag/off |")
    print("|---|---|---|---|")
    by: dict[str, tuple[list[float], list[float]]] = {}
    for side, paths in ((0, off), (1, on)):
        for path in paths:
            for r in read_rows(path):
                by.setdefault(r.identity.label.rsplit("-", 1)[0], ([], []))[side].append(
                    (r.median_s or 0) * 1e6
                )
    for case, (a, b) in by.items():
        ratio = statistics.median(b) / statistics.median(a)
        shown = lambda v: ", ".join(f"{x:.1f}" for x in v)  # noqa: E731
        print(f"| {case} | {shown(a)} | {shown(b)} | {ratio:.4f} |")


def rows(paths: list[str]) -> None:
    print(
        "| file | case | policy | median µs | samples | SM clock min / median MHz | "
        "throttled share | discarded | reasons | doubt |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        for r in read_rows(path):
            t = r.timing
            print(
                f"| {path.rsplit('/', 1)[-1]} | {r.identity.label} | {r.conditions.throttle} | "
                f"{(r.median_s or 0) * 1e6:.1f} | {r.stats.sample_count} | "
                f"{t.sm_clock_min_mhz} / {t.sm_clock_median_mhz} | {t.throttled_share_ratio} | "
                f"{t.discarded_sample_count} | {t.throttle_reasons or ''} | {r.doubt or ''} |"
            )


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "cost":
        split = args.index("--")
        cost(args[:split], args[split + 1 :])
    else:
        rows(args)
