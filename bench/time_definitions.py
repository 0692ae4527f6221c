"""One definition of time, checked on a GPU: the harness's rows against independent measurements taken in
the same process (not a test; needs CUDA, JAX and PyTorch).

    python bench/time_definitions.py [--out DIR]

Prints one Markdown table per check (docs/results_gpu.md keeps them) and writes the raw CSV to DIR.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from accelbench.results.reading import read_rows

ADD_BLOCKS = """
- benchmark_name: add
  backend: [jax, torch]
  cache: {cache}
  csv_path: {csv}
  benchmark_params: [{{m: 1024, n: 1024}}, {{m: 256, n: 512}}, {{m: 8192, n: 8192}}]
- benchmark_name: add
  backend: torch
  timer: cuda_graph
  cache: {cache}
  implementation: eager
  csv_path: {csv}
  benchmark_params: [{{m: 1024, n: 1024}}, {{m: 256, n: 512}}]
"""
CONFIG = """
num_runs: 100
warmup: 10
benchmarks:
{add_warm}{add_cold}
- benchmark_name: quantization
  backend: [jax, torch]
  csv_path: {csv}
  benchmark_params: [{{m: 16384, n: 16384}}]
- benchmark_name: gemm_multiple_run
  backend: [jax, torch]
  implementation: eager
  num_runs: 30
  csv_path: {csv}
  benchmark_params: [{{m: 8192, k: 8192, n: 8192, dtype: bfloat16}}]
- benchmark_name: gemm_multiple_run
  backend: [jax, torch]
  implementation: eager
  cadence: sustained
  num_runs: 200
  csv_path: {csv}
  benchmark_params: [{{m: 8192, k: 8192, n: 8192, dtype: bfloat16}}]
- benchmark_name: gemm_multiple_run
  backend: jax
  cadence: sustained
  cache: warm
  num_runs: 200
  csv_path: {csv}
  benchmark_params: [{{m: 8192, k: 8192, n: 8192, dtype: bfloat16}}]
"""


def copy_gbps() -> float:
    import torch

    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        y.copy_(x)
    end.record()
    end.synchronize()
    return 2 * x.numel() * 20 / (start.elapsed_time(end) * 1e-3) / 1e9


def add_truth(m: int, n: int) -> dict[str, float]:
    """PyTorch add, warm: CUPTI kernel time (profiler, mean) and CUDA-graph replay (events over 1000)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn_like(x)
    for _ in range(10):
        x + y
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(200):
            x + y
        torch.cuda.synchronize()
    kernels = [e for e in prof.key_averages() if getattr(e, "device_time_total", 0) > 0]
    cupti_us = sum(e.device_time_total for e in kernels) / 200
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x + y
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):  # 100 adds per replay, so the replay's own launch is amortised
        outs = [x + y for _ in range(100)]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        graph.replay()
    start.record()
    for _ in range(20):
        graph.replay()
    end.record()
    end.synchronize()
    del outs
    return {"cupti_us": cupti_us, "graph_us": start.elapsed_time(end) * 1e3 / 2000}


def gemm_do_bench_us() -> float:
    import torch
    import triton.testing

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    return triton.testing.do_bench(lambda: a @ b, warmup=100, rep=500, return_mode="median") * 1e3


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="mb_time_"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    # one process for everything, as a user would run it (JAX cases first, then PyTorch's)
    path, config = os.path.join(args.out, "time.csv"), os.path.join(args.out, "time.yaml")
    with open(config, "w") as f:
        f.write(
            CONFIG.format(
                csv=path,
                add_warm=ADD_BLOCKS.format(cache="warm", csv=path).lstrip("\n"),
                add_cold=ADD_BLOCKS.format(cache="cold", csv=path).lstrip("\n"),
            )
        )
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", config, "--no-progress"],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    print(f"{time.perf_counter() - t0:.1f} s for the config", file=sys.stderr)
    rows = read_rows(path)
    copy = copy_gbps()
    truth = {(m, n): add_truth(m, n) for m, n in ((1024, 1024), (256, 512))}
    do_bench = gemm_do_bench_us()

    def us(seconds: float | None) -> str:
        return f"{seconds * 1e6:.2f}" if seconds else ""

    print(f"\ndevice-to-device copy: {copy:.0f} GB/s (read + write)\n")
    print(
        "| op | shape | cache | backend | implementation | timer | device time µs | device span µs | "
        "launch-incl. µs | kernels/iter | status |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        p, timing = r.params.as_dict(), r.timing
        per_iter = "" if timing.kernels_per_iter is None else f"{timing.kernels_per_iter:g}"
        print(
            f"| {r.identity.op} | {p['m']}x{p.get('k') or ''}x{p['n']} | {r.conditions.cache} | "
            f"{r.identity.backend} | {r.identity.implementation} | {timing.timing_source} | "
            f"{us(r.median_s)} | {us(timing.device_span_median_s)} | {us(timing.launch_median_s)} | "
            f"{per_iter} | {r.status.value} {r.identity.error[:60]} |"
        )
    print(
        "\n| add bf16, warm | harness cupti µs | independent CUPTI µs | harness cuda_graph µs | "
        "independent graph (100 per replay) µs | harness JAX µs | cupti vs CUPTI / vs graph |"
    )
    print("|---|---|---|---|---|---|---|")
    for (m, n), t in truth.items():
        same = [
            r
            for r in rows
            if r.identity.op == "add"
            and r.conditions.cache == "warm"
            and int(r.params.value("m")) == m
            and int(r.params.value("n")) == n
            and r.identity.implementation in ("eager", "jit")
        ]

        def pick(source: str, same: list = same) -> float:
            return next(
                (float(r.median_s or 0) * 1e6 for r in same if r.timing.timing_source == source),
                float("nan"),
            )

        torch_us, graph_us, jax_us = pick("cupti"), pick("cuda_graph"), pick("xprof_gpu")
        print(
            f"| {m}x{n} | {torch_us:.2f} | {t['cupti_us']:.2f} | {graph_us:.2f} | {t['graph_us']:.2f} | "
            f"{jax_us:.2f} | {100 * (torch_us / t['cupti_us'] - 1):+.1f}% / {100 * (torch_us / t['graph_us'] - 1):+.1f}% |"
        )
    print(
        "\n| quantization 16384², cold | backend | implementation | device µs | GB/s | % of copy |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r.identity.op == "quantization" and r.conditions.cache == "cold" and r.ok:
            gbps = float(r.derived.gb_per_s or 0)
            print(
                f"| | {r.identity.backend} | {r.identity.implementation} | {us(r.median_s)} | "
                f"{gbps:.0f} | {100 * gbps / copy:.0f}% |"
            )
    print(
        f"\n| bf16 gemm 8192³, cold | cadence | device µs | vs triton do_bench ({do_bench:.0f} µs) |"
    )
    print("|---|---|---|---|")
    for r in rows:
        if r.identity.op == "gemm_multiple_run" and r.ok:
            t = float(r.median_s or 0) * 1e6
            print(
                f"| {r.identity.backend} {r.identity.implementation} {r.conditions.cache} | "
                f"{r.conditions.cadence} | {t:.0f} | {100 * (t / do_bench - 1):+.1f}% |"
            )
    walls = [
        r.timing.wall_median_s for r in rows if r.identity.op == "add" and r.timing.wall_median_s
    ]
    print(
        f"\nmedian host wall per add iteration: {statistics.median(walls) * 1e6:.0f} µs",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
