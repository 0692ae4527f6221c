"""Harness overhead: a 200-case sweep of a tiny op on CPU, compilation included (not a test).

Per case: overhead = the case's wall time in the runner (inputs, compile, numerics check, warm-up,
timing loop, statistics, row written and flushed) minus the timed samples themselves.

    python bench/overhead.py [--cases 200] [--num-runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--num-runs", type=int, default=10)
    args = parser.parse_args()
    from microbench.core.options import RunOptions
    from microbench.results.writer import read_rows
    from microbench.run import runner, session

    durations: list[float] = []
    original = runner.execute

    def timed_execute(*a, **k):
        t0 = time.perf_counter()
        result = original(*a, **k)
        durations.append(time.perf_counter() - t0)
        return result

    session.execute = timed_execute
    work = tempfile.mkdtemp(prefix="mb_overhead_")
    config = os.path.join(work, "overhead.yaml")
    with open(config, "w") as f:  # every case a new shape, so every case compiles
        f.write(
            f"benchmarks:\n- benchmark_name: add\n  num_runs: {args.num_runs}\n  warmup: 2\n"
            f"  csv_path: {work}/overhead.csv\n  benchmark_sweep_params:\n"
            f"  - {{m: 8, n_range: {{start: 1, end: {args.cases}, increase_by: 1}}}}\n"
        )
    t0 = time.perf_counter()
    code = session.run_config(config, RunOptions(progress=False))
    total = time.perf_counter() - t0
    records = read_rows(os.path.join(work, "overhead.csv"), series=True)
    timed = [sum(r.series.samples_s) for r in records]
    overheads = [d - t for d, t in zip(durations, timed, strict=True)]
    compile_s = [r.timing.compile_s or 0.0 for r in records]
    result = {
        "cases": len(records),
        "exit_code": code,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "total_wall_s": total,
        "timed_s": sum(timed),
        "per_case_overhead_median_s": statistics.median(overheads),
        "per_case_overhead_p90_s": sorted(overheads)[int(0.9 * len(overheads))],
        "per_case_overhead_mean_incl_startup_s": (total - sum(timed)) / len(records),
        "compile_median_s": statistics.median(compile_s),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
