"""Which rows of a folder of runs are errors: one line per config (rows by status, the exit code), then
every row whose status is neither ok nor unsupported, with its reason, and every run that ended before
its last case (exit 124: the part's cap; 1 without a failed row: the run stopped) with its log's last
error line (bench/gpu_run.sh upstream62).

    python bench/config_errors.py DIR      # DIR holds NAME.csv and NAME.rc for each config run
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

FINE = ("ok", "unsupported")
FINISHED = ("0", "3")  # every case ran (3: none measured, e.g. collectives on one GPU)


def main(folder: str) -> int:
    bad, stopped = [], []
    print("| config | exit | rows by status |\n|---|---|---|")
    for rc in sorted(Path(folder).glob("*.rc")):
        path = rc.with_suffix(".csv")
        rows = list(csv.DictReader(path.open())) if path.exists() else []
        counts = Counter(r["status"] for r in rows)
        print(f"| {rc.stem} | {rc.read_text().strip()} | {dict(counts) or 'no rows'} |")
        failed = [(rc.stem, r) for r in rows if r["status"] not in FINE]
        code = rc.read_text().strip()
        if code not in FINISHED and not failed:
            stopped.append((rc.stem, code, len(rows), _last_error(rc.with_suffix(".log"))))
        bad += failed
    print(f"\n{len(bad)} row(s) neither ok nor unsupported")
    for config, r in bad:
        what = " ".join(r.get(k, "") for k in ("op", "backend", "implementation", "recipe"))
        print(f"- {config}: {what.strip()} [{r['status']}] {r['error'][:240]}")
    print(f"\n{len(stopped)} run(s) ended before their last case")
    for config, code, count, line in stopped:
        print(f"- {config}: exit {code} after {count} rows: {line[:240]}")
    return 1 if bad or stopped else 0


def _last_error(log: Path) -> str:
    """The log's last line that starts with "error", else its last line."""
    lines = (
        [x.strip() for x in log.read_text(errors="replace").splitlines() if x.strip()]
        if log.exists()
        else []
    )
    said = [x for x in lines if x.lower().startswith("error")]
    return (said or lines or ["no log"])[-1]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
