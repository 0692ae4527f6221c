"""Harness cost per case on a GPU: the stock Ironwood add config (10 small cases) through the runner,
each case's wall time (inputs, compile, check, warm-up, trace, parse, row written) against its timed
device time. Not a test.

    python bench/case_cost.py [--backend jax|torch]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

PARAMS = "{m: 2048, n: 7168}, {m: 4096, n: 8192}, {m: 128, n: 7168}, {m: 2048, n: 8192}, {m: 512, n: 7168}, {m: 256, n: 16384}, {m: 1024, n: 16384}, {m: 4096, n: 16384}, {m: 256, n: 8192}, {m: 2048, n: 16384}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="jax")
    args = parser.parse_args()
    from accelbench.core.options import RunOptions
    from accelbench.results.reading import read_rows
    from accelbench.run import planning, runner, session

    durations: list[float] = []
    original = runner.execute

    def timed_execute(*a, **k):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        result = original(*a, **k)
        durations.append(time.perf_counter() - t0)
        return result

    session.execute = timed_execute  # type: ignore[assignment]
    work = tempfile.mkdtemp(prefix="mb_cost_")
    config = os.path.join(work, "add.yaml")
    with open(
        config, "w"
    ) as f:  # Ironwood/configs/training/add.yaml's shapes, as its users run them
        f.write(
            f"benchmarks:\n- benchmark_name: add\n  backend: {args.backend}\n  implementation: eager\n"
            f"  num_runs: 100\n  csv_path: {work}/add.csv\n  benchmark_params: [{PARAMS}]\n"
        )
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    planning.run_config(config, RunOptions(progress=False))
    profiler.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(r"microbench|torch_backend", 25)
    rows = read_rows(os.path.join(work, "add.csv"), series="all")
    print(
        json.dumps(
            {
                "backend": args.backend,
                "cases": len(rows),
                "total_s": round(total, 2),
                "per_case_s": [round(d, 3) for d in durations],
                "median_case_s": round(statistics.median(durations), 3),
                "timed_device_s": round(sum(sum(r.series.samples_s) for r in rows), 4),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
