"""The run store at scale: one real run of a one-case config copied into N stored runs (each with its
results file, JSON lines and record, each copy measuring a commit of its own), then `runs`,
`runs --config`, `compare --config 1 N` and `history` timed cold as a user runs them (median of
three). Not a test.

    python bench/run_store_scale.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MICROBENCH = [sys.executable, "-m", "accelbench"]
CONFIG = """backend: numpy
num_runs: 2
warmup: 0
benchmarks:
- benchmark_name: fault
  csv_path: results/r.csv
  benchmark_params: [{n: 8}]
"""


def stored(work: str, n: int) -> None:
    """Runs 1 and 2 for real, then runs 3..n as copies of run 2 (its record naming its own files)."""
    with open(os.path.join(work, "c.yaml"), "w") as f:
        f.write(CONFIG)
    for _ in range(2):
        subprocess.run([*MICROBENCH, "run", "--config", "c.yaml", "-q"], cwd=work, check=True)
    results = os.path.join(work, "results")
    with open(os.path.join(results, "r.2.run.json")) as f:
        record = json.load(f)
    for i in range(3, n + 1):
        for ext in ("csv", "jsonl"):
            shutil.copy(os.path.join(results, f"r.2.{ext}"), os.path.join(results, f"r.{i}.{ext}"))
        files = [p.replace("r.2.", f"r.{i}.") for p in record["files"]]
        code = {"commit": f"{i:012x}", "date": f"2026-{1 + i // 200 % 12:02d}-{1 + i % 28:02d}"}
        with open(os.path.join(results, f"r.{i}.run.json"), "w") as f:
            json.dump({**record, "files": files, "tested": code}, f)


def timed(work: str, args: list[str]) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([*MICROBENCH, *args], cwd=work, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    n = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as work:
        stored(work, n)
        print(f"| command ({n} stored runs) | median of 3, s |\n|---|---|")
        start = timed(work, ["--version"])
        print(f"| `microbench --version` (start-up alone) | {start:.2f} |")
        for args in (
            ["runs"],
            ["runs", "--config", "c.yaml"],
            ["compare", "--config", "c.yaml", "1", str(n)],
            ["history"],
        ):
            print(f"| `microbench {' '.join(args)}` | {timed(work, args):.2f} |")


if __name__ == "__main__":
    main()
