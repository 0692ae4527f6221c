"""Harness cost per case, per backend and implementation (not a test; the speed targets live here).

A sweep of a tiny `add` (every case a new shape, so every case compiles) on JAX and on PyTorch eager and
compiled. Per case:
  wall   the case's time in the runner (inputs, compile, float64 check, warm-up, timing, row written);
  work   what the case is for: its timed iterations (host wall of each), its warm-up iterations (counted
         at the median iteration's wall) and its compilation;
  flush  the cache policy's eviction before each timed iteration (cache: cold; the CPU's last-level
         cache rewritten, a GPU's L2 cleared), timed apart: the price of the policy, not of the harness;
  cost   wall - work - flush: what the harness adds.

    python bench/overhead.py [--cases 16] [--num-runs 20] [--device cpu|cuda] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable

WARMUP = 2


def config_text(work: str, cases: int, num_runs: int, device: str) -> str:
    size = 8 if device == "cpu" else 1024
    return (
        f"num_runs: {num_runs}\nwarmup: {WARMUP}\nbackend: [jax, torch]\nbenchmarks:\n"
        f"- benchmark_name: add\n  csv_path: {work}/overhead.csv\n  benchmark_sweep_params:\n"
        f"  - {{m: {size}, n_range: {{start: 64, end: {64 + cases - 1}, increase_by: 1}}}}\n"
    )


def flush_seconds(device: str) -> float:
    """One cache flush of the kind the cold-cache timers do on this device."""
    if device == "cpu":
        from accelbench.measure.timers import flush_host_cache

        flush: Callable[[], None] = flush_host_cache
    else:
        import torch

        from torch_backend.timing import L2Flush

        flush = L2Flush(torch.device(device))  # waits for the device itself
    flush()
    start = time.perf_counter()
    for _ in range(20):
        flush()
    return (time.perf_counter() - start) / 20


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=16)
    parser.add_argument("--num-runs", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--profile", default=None, help="write a cProfile of the whole run here")
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from accelbench.core.options import RunOptions
    from accelbench.results.reading import read_rows
    from accelbench.run import planning, runner, session

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
    with open(config, "w") as f:
        f.write(config_text(work, args.cases, args.num_runs, args.device))
    profiler = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    if profiler:
        profiler.enable()
    code = planning.run_config(config, RunOptions(progress=False, verbosity=-1))
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    total = time.perf_counter() - t0
    rows = read_rows(os.path.join(work, "overhead.csv"), series="all")
    per_flush = flush_seconds(args.device)
    by: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row, wall in zip(rows, durations, strict=True):
        iterations = row.series.wall_samples_s or row.series.samples_s
        typical = statistics.median(iterations) if iterations else 0.0
        done = sum(iterations) + WARMUP * typical + (row.timing.compile_s or 0.0)
        flush = per_flush * len(iterations)
        by[f"{row.identity.backend}:{row.identity.implementation}"].append((wall - flush, done))
    print(
        f"{len(rows)} cases, exit {code}, {total:.1f} s in all, on {args.device} ({os.cpu_count()} cpus)"
    )
    print(f"cache flush: {per_flush * 1e3:.2f} ms an iteration, left out of the harness cost")
    print(
        "| backend | cases | wall less flushes, per case | work per case | harness cost per case (median) | p90 |"
    )
    print("|---|---|---|---|---|---|")
    result = {}
    for name, pairs in by.items():
        # the first case of each backend also starts it (imports, device, compiler): shown apart
        costs = sorted(w - d for w, d in pairs[1:]) or [pairs[0][0] - pairs[0][1]]
        p90 = costs[min(len(costs) - 1, int(0.9 * len(costs)))]
        wall = statistics.median(w for w, _ in pairs[1:] or pairs)
        done = statistics.median(d for _, d in pairs[1:] or pairs)
        cost = statistics.median(costs)
        result[name] = {"first_case_s": pairs[0][0], "wall_s": wall, "work_s": done, "cost_s": cost}
        print(
            f"| {name} | {len(pairs)} | {wall:.3f} s | {done:.3f} s | **{cost:.3f} s** | {p90:.3f} s |"
        )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
