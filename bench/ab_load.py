"""Issue 59's figures: verdicts that follow the code, not the neighbours, on a shared CPU host.

1. A/A through `compare`: a 6-case config run twice, a load generator on for one run and off for the
   other (which one alternates); every pair compared. Wanted: no conclusive "slower".
2. A real 1.25x slowdown through `ab`: the same 6 cases against a copy whose sizes do 1.25x the work,
   in alternating rounds while the load generator switches on and off every `--period` seconds.
   Wanted: "slower" in at least 19 of 20 tries, and no false verdict ("faster", "within", "noise").

    python bench/ab_load.py --pairs 3 --tries 3      # a first look (minutes)
    python bench/ab_load.py                          # 20 and 20 (about an hour on 2 busy cores)

The default config is the NumPy backend's one op (x * 2 over n float32s, warm cache: no framework to
start, so 40 runs and 400 rounds fit in an hour here); `--backend jax` times JAX adds and GEMMs instead.

Prints a Markdown summary; every comparison's JSON goes to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

JAX = """# issue 59's 6-case config (bench/ab_load.py --backend jax)
num_runs: 20
warmup: 2
backend: jax
benchmarks:
- benchmark_name: add
  benchmark_sweep_params:
  - {{m: 256, n: [{n}]}}
- benchmark_name: gemm
  benchmark_sweep_params:
  - {{m: [{m}], k: 192, n: 192}}
"""
NUMPY = """# issue 59's 6-case config (bench/ab_load.py --backend numpy): x * 2 over n float32s
num_runs: 10
warmup: 2
cache: warm
backend: numpy
benchmarks:
- benchmark_name: fault
  benchmark_sweep_params:
  - {{n: [{n}]}}
"""
# each backend's config and sizes, the base's and the slowed copy's: 1.25x the work in every case
CONFIGS = {
    "jax": (JAX, {"n": "1024, 2048, 4096", "m": "128, 256, 384"},
            {"n": "1280, 2560, 5120", "m": "160, 320, 480"}),
    "numpy": (NUMPY, {"n": "262144, 524288, 1048576, 786432, 1572864, 3145728"},
              {"n": "327680, 655360, 1310720, 983040, 1966080, 3932160"}),
}  # fmt: skip
RUN = [sys.executable, "-m", "accelbench"]


class Load:
    """`workers` processes spinning on the CPU while on."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.procs: list[subprocess.Popen[bytes]] = []

    def on(self) -> None:
        if not self.procs:
            spin = [sys.executable, "-c", "while True: pass"]
            self.procs = [subprocess.Popen(spin) for _ in range(self.workers)]

    def off(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []


def run(config: Path, out: Path) -> None:
    subprocess.run([*RUN, "run", "--config", str(config), "-o", str(out), "-q", "--no-progress"],
                   check=False, capture_output=True)  # fmt: skip


def verdicts(args: list[str]) -> list[dict[str, object]]:
    done = subprocess.run([*RUN, *args, "--format", "json"], capture_output=True, text=True)
    return json.loads(done.stdout)["pairs"] if done.stdout.strip() else []


def count(pairs: list[dict[str, object]]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for p in pairs:
        kind = str(p["verdict"]).split(" (")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="A/A pairs through compare")
    parser.add_argument("--tries", type=int, default=20, help="ab tries of the 1.25x slowdown")
    parser.add_argument("--rounds", type=int, default=40, help="ab --rounds")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--period", type=float, default=10.0, help="load on/off every this many s")
    parser.add_argument("--out", default="/tmp/ab_load")
    parser.add_argument("--backend", choices=tuple(CONFIGS), default="numpy")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base, slowed = out / "base.yaml", out / "slowed.yaml"
    template, sizes, slowed_sizes = CONFIGS[args.backend]
    base.write_text(template.format(**sizes))
    slowed.write_text(template.format(**slowed_sizes))
    load = Load(args.workers)
    print(
        f"host: {os.cpu_count()} cores; {args.backend} config; load generator {args.workers} "
        f"spinning processes; ab --rounds {args.rounds}, load switched every {args.period:g} s\n"
    )
    try:
        compare_rows = compare_pairs(args.pairs, base, out, load)
        ab_rows = ab_tries(args, base, slowed, out, load)
    finally:
        load.off()
    report(compare_rows, ab_rows)


def compare_pairs(pairs: int, base: Path, out: Path, load: Load) -> list[dict[str, int]]:
    rows = []
    for i in range(pairs):
        a, b = out / f"aa{i}_a.csv", out / f"aa{i}_b.csv"
        for path, loaded in ((a, i % 2 == 0), (b, i % 2 == 1)):
            load.on() if loaded else load.off()
            time.sleep(2 if loaded else 0)
            run(base, path)
        load.off()
        pairs_json = verdicts(["compare", str(a), str(b)])
        (out / f"aa{i}.json").write_text(json.dumps(pairs_json, indent=1))
        rows.append(count(pairs_json))
        print(f"A/A pair {i + 1}: {rows[-1]}", file=sys.stderr)
    return rows


def ab_tries(
    args: argparse.Namespace, base: Path, slowed: Path, out: Path, load: Load
) -> list[dict[str, int]]:
    rows = []
    for i in range(args.tries):
        stop = threading.Event()

        def switch() -> None:
            on = i % 2 == 0
            while not stop.is_set():
                load.on() if on else load.off()
                on = not on
                stop.wait(args.period)

        switcher = threading.Thread(target=switch)
        switcher.start()
        try:
            pairs_json = verdicts(
                ["ab", str(base), str(slowed), "--rounds", str(args.rounds), "-q",
                 "--output-dir", str(out / "ab")]
            )  # fmt: skip
        finally:
            stop.set()
            switcher.join()
            load.off()
        (out / f"ab{i}.json").write_text(json.dumps(pairs_json, indent=1))
        rows.append(count(pairs_json))
        print(f"ab try {i + 1}: {rows[-1]}", file=sys.stderr)
    return rows


def report(compare_rows: list[dict[str, int]], ab_rows: list[dict[str, int]]) -> None:
    print("| test | runs | cases | slower | faster | within/noise | inconclusive |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in (("A/A via compare, load on for one run", compare_rows),
                       ("1.25x via ab, load switching", ab_rows)):  # fmt: skip
        total = {k: sum(r.get(k, 0) for r in rows) for k in
                 ("slower", "faster", "within threshold", "noise", "inconclusive")}  # fmt: skip
        cases = sum(sum(r.values()) for r in rows)
        print(
            f"| {name} | {len(rows)} | {cases} | {total['slower']} | {total['faster']} | "
            f"{total['within threshold'] + total['noise']} | {total['inconclusive']} |"
        )
    detected = sum(1 for r in ab_rows if r and r.get("slower", 0) == sum(r.values()))
    print(f"\nab tries with every case 'slower': {detected} of {len(ab_rows)}")
    clean = sum(1 for r in compare_rows if not r.get("slower"))
    print(f"A/A pairs with no case 'slower': {clean} of {len(compare_rows)}")


if __name__ == "__main__":
    main()
