"""Issue 39's figures: what adaptive sampling costs, per backend and implementation, and how long a
one-off run takes to its first row. Not a test; run on the GPU machine (`bash bench/gpu_run.sh adaptive`).

    python bench/adaptive_speed.py [--quick]

For a ~20 us kernel (add 2048x4096 bf16, cold) and a ~200 us GEMM (bf16 4096^3), on JAX, PyTorch eager
and compiled, each in a fresh process (so the first case of a process is the one measured):
- the samples, the precision reached and why timing stopped, for targets of +-0.5% and +-0.2%;
- the timing wall (`timed_loop_s`: the timed loop with its trace's stop and parse), the flushes' and
  the profiler sessions' share of it (`flush_s`, `profiler_session_s`), and samples per second of it;
- the process's start to its first row on disk, and its whole wall;
- per variant, the marginal cost of a case: a run of MARGINAL_CASES identical add cases (seeds 0..n-1,
  +-0.2%) against the one-case run, (wall of n - wall of 1) / (n - 1).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

CASES = {
    "add 2048x4096": ["--run", "add", "--m", "2048", "--n", "4096", "--dtype", "bfloat16"],
    "gemm 4096^3": [
        "--run",
        "gemm_simple_with_dtype",
        "--m",
        "4096",
        "--k",
        "4096",
        "--n",
        "4096",
        "--in_dtype",
        "bfloat16",
        "--out_dtype",
        "bfloat16",
    ],
}
VARIANTS = {
    "jax": ["--backend", "jax"],
    "torch eager": ["--backend", "torch", "--implementation", "eager"],
    "torch compile": ["--backend", "torch", "--implementation", "compile"],
}


MARGINAL_CASES = 5
SWEEP = """backend: [{backend}]
{implementation}target_precision: 0.002
max_time_s: {max_time}
num_runs: 20
benchmarks:
- benchmark_name: add
  csv_path: {csv}
  benchmark_sweep_params:
  - {{m: 2048, n: 4096, dtype: bfloat16, seed: {seeds}}}
"""


def process_wall(variant: list[str], cases: int, max_time: float) -> float:
    """Wall of one fresh process running `cases` identical add cases."""
    options = dict(zip(variant[::2], variant[1::2], strict=True))
    implementation = options.get("--implementation")
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "sweep.yaml")
        with open(config, "w") as f:
            f.write(
                SWEEP.format(
                    backend=options["--backend"],
                    implementation=f"implementation: {implementation}\n" if implementation else "",
                    max_time=max_time,
                    csv=os.path.join(folder, "r.csv"),
                    seeds=list(range(cases)),
                )
            )
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "accelbench.cli", "run", "--config", config, "-q"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start


def one(
    case: list[str],
    variant: list[str],
    target: float,
    max_time: float,
    env: dict[str, str] | None = None,
) -> dict[str, str]:
    """One fresh process (with `env` added to its environment): start to first row, its wall, and
    the row."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "r.csv")
        command = [
            sys.executable,
            "-m",
            "accelbench.cli",
            "run",
            *case,
            *variant,
            "--target_precision",
            str(target),
            "--max_time_s",
            str(max_time),
            "--num_runs",
            "20",
            "-o",
            out,
            "-q",
        ]
        start = time.perf_counter()
        proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        first_row = None
        while proc.poll() is None:
            if first_row is None and os.path.exists(out) and os.path.getsize(out) > 0:
                with open(out) as f:
                    if len(f.read().splitlines()) >= 2:
                        first_row = time.perf_counter() - start
            time.sleep(0.01)
        wall = time.perf_counter() - start
        first_row = first_row or wall
        _, err = proc.communicate()
        if proc.returncode != 0 or not os.path.exists(out):
            return {"_failure": err.strip()[-200:]}
        with open(out) as f:
            row = next(csv.DictReader(f))
        row.update(first_row_s=f"{first_row:.2f}", process_s=f"{wall:.2f}")
        return row


def startup(max_time: float) -> None:
    """Start to first row of a one-off compiled add, its compile caches (Inductor's, Triton's) empty
    and then filled by the run before, with Inductor's compile workers and without them."""
    print("| compile caches | compile workers | first row s | of it compile s | process s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as kept:
        for workers in ("default", "1"):
            threads = {} if workers == "default" else {"TORCHINDUCTOR_COMPILE_THREADS": workers}
            for state in ("empty", "filled"):
                with tempfile.TemporaryDirectory() as fresh:
                    caches = fresh if state == "empty" else os.path.join(kept, workers)
                    env = {
                        "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
                        "TRITON_CACHE_DIR": os.path.join(caches, "triton"),
                        **threads,
                    }
                    if state == "filled":  # the run that fills them
                        one(CASES["add 2048x4096"], VARIANTS["torch compile"], 0.002, max_time, env)
                    row = one(
                        CASES["add 2048x4096"], VARIANTS["torch compile"], 0.002, max_time, env
                    )
                print(
                    f"| {state} | {workers} | {row.get('first_row_s')} | {row.get('compile_s')} "
                    f"| {row.get('process_s')} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 20 us kernel only")
    parser.add_argument("--max-time", type=float, default=4.0, help="max_time_s of every case")
    parser.add_argument(
        "--startup", action="store_true", help="only the compiled case's start to first row"
    )
    args = parser.parse_args()
    if args.startup:
        startup(args.max_time)
        return
    print(
        "| case | backend | target | samples | reached | stop | timing wall s | of it flush s "
        "| of it profiler s | samples/s | median us | first row s | process s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, case in CASES.items():
        if args.quick and name != "add 2048x4096":
            continue
        for label, variant in VARIANTS.items():
            for target in (0.005, 0.002):
                row = one(case, variant, target, args.max_time)
                if "_failure" in row or row.get("status") != "ok":
                    why = row.get("_failure") or row.get("error")
                    print(f"| {name} | {label} | {target:.1%} | not measured: {why} |||||||||||")
                    continue
                loop = float(row.get("timed_loop_s") or "nan")
                samples = int(row.get("sample_count") or 0)
                median = float(row.get("time_median_s") or "nan") * 1e6
                reached = float(row.get("median_precision_ratio") or "nan")
                flush = float(row.get("flush_s") or 0.0)
                session = float(row.get("profiler_session_s") or 0.0)
                print(
                    f"| {name} | {label} | ±{target:.1%} | {samples} | ±{reached:.2%} "
                    f"| {row.get('stop_reason')} | {loop:.3f} | {flush:.3f} | {session:.3f} "
                    f"| {samples / loop:.0f} | {median:.1f} "
                    f"| {row['first_row_s']} | {row['process_s']} |",
                    flush=True,
                )
    print(f"\n| backend | one case s | {MARGINAL_CASES} cases s | marginal s per case |")
    print("|---|---|---|---|")
    for label, variant in VARIANTS.items():
        single = process_wall(variant, 1, args.max_time)
        several = process_wall(variant, MARGINAL_CASES, args.max_time)
        marginal = (several - single) / (MARGINAL_CASES - 1)
        print(f"| {label} | {single:.2f} | {several:.2f} | {marginal:.2f} |", flush=True)


if __name__ == "__main__":
    main()
