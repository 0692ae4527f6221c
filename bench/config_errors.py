"""Which rows of a folder of runs are errors: one line per config (rows by status, the exit code), then
every row whose status is neither ok nor unsupported, with its reason (bench/gpu_run.sh upstream62).

    python bench/config_errors.py DIR      # DIR holds NAME.csv and NAME.rc for each config run
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

FINE = ("ok", "unsupported")


def main(folder: str) -> int:
    bad = []
    print("| config | exit | rows by status |\n|---|---|---|")
    for rc in sorted(Path(folder).glob("*.rc")):
        path = rc.with_suffix(".csv")
        rows = list(csv.DictReader(path.open())) if path.exists() else []
        counts = Counter(r["status"] for r in rows)
        print(f"| {rc.stem} | {rc.read_text().strip()} | {dict(counts) or 'no rows'} |")
        bad += [(rc.stem, r) for r in rows if r["status"] not in FINE]
    print(f"\n{len(bad)} row(s) neither ok nor unsupported")
    for config, r in bad:
        what = " ".join(r.get(k, "") for k in ("op", "backend", "implementation", "recipe"))
        print(f"- {config}: {what.strip()} [{r['status']}] {r['error'][:240]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
