"""`compare`, `report` and a bad config's answer at scale: two N-row results files (with their JSON
lines) made from one small real run, its rows repeated with distinct seeds and the candidate slower,
then each command timed cold as a user runs it. The candidate is twice as slow by default, so every
case is a regression compare must report. Not a test.

    python bench/large_files.py [--rows 100000] [--no-jsonl] [--slower 2.0]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

MICROBENCH = [sys.executable, "-m", "accelbench"]


def seed_run(work: str) -> str:
    """A real run's CSV and JSON lines: the CPU quick-start at two iterations per case."""
    out = os.path.join(work, "seed.csv")
    subprocess.run(
        [*MICROBENCH, "run", "--num-runs", "2", "-o", out, "--no-progress"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def scaled(seed: str, out: str, rows: int, factor: float, with_jsonl: bool) -> None:
    """`rows` rows cycling through the seed's, each a distinct case (its seed), times scaled."""
    with open(seed, newline="") as f:
        reader = csv.reader(f)
        header, body = next(reader), list(reader)
    lines = [json.loads(line) for line in open(seed.replace(".csv", ".jsonl"))]
    case, seed_at = header.index("case_id"), header.index("seed")
    times = [i for i, c in enumerate(header) if c.startswith("time_") and c.endswith("_s")]
    with open(out, "w", newline="") as f, open(out.replace(".csv", ".jsonl"), "w") as j:
        writer = csv.writer(f)
        writer.writerow(header)
        for i in range(rows):
            row, line = list(body[i % len(body)]), dict(lines[i % len(lines)])
            row[case] = line["case_id"] = f"c{i}"
            row[seed_at] = str(i)
            for i in times:
                row[i] = str(float(row[i]) * factor) if row[i] else ""
            line["samples_s"] = [x * factor for x in line.get("samples_s", [])]
            writer.writerow(row)
            if with_jsonl:
                j.write(json.dumps(line) + "\n")


def timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, the command's peak resident GiB and its exit code."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 2**20, child.returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--no-jsonl", action="store_true")
    parser.add_argument("--slower", type=float, default=2.0, help="the candidate's time factor")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="mb_large_")
    seed = seed_run(work)
    a, b = os.path.join(work, "a.csv"), os.path.join(work, "b.csv")
    scaled(seed, a, args.rows, 1.0, not args.no_jsonl)
    scaled(seed, b, args.rows, args.slower, not args.no_jsonl)
    bad = os.path.join(work, "bad.yaml")
    with open(bad, "w") as f:
        f.write("benchmarks:\n  - name: gemm_generalized\n    sweep: {m: [64]}\n    num_runz: 3\n")
    commands = {
        "compare": [*MICROBENCH, "compare", a, b],
        "compare --json": [*MICROBENCH, "compare", a, b, "--json"],
        "report": [*MICROBENCH, "report", a, "--output-dir", os.path.join(work, "report")],
        "run (a bad config)": [*MICROBENCH, "run", "--config", bad],
    }
    jsonl = "no" if args.no_jsonl else "yes"
    print(f"{args.rows} rows per file, JSON lines {jsonl}, candidate x{args.slower}; {work}")
    print(f"{'command':<20} {'wall s':>8} {'peak GiB':>9} {'exit':>5}")
    for name, command in commands.items():
        wall, peak, code = timed(command)
        print(f"{name:<20} {wall:8.1f} {peak:9.2f} {code:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
