"""Probe what the profilers report on this GPU (not a test): kineto's device events for one add, a JAX
trace with the cold-cache flush, and whether torch.compile compiled the quantization op.

    python bench/probe_timers.py
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def jax_cold() -> None:
    """Cold-cache JAX add in variations, to find which one loses the GPU trace."""
    import subprocess
    import sys

    config = (
        "num_runs: {runs}\nwarmup: {warmup}\nbenchmarks:\n- benchmark_name: add\n  cache: {cache}\n"
        "  csv_path: {csv}\n{trace}  benchmark_params: [{{m: 1024, n: 1024}}]\n"
    )
    for name, runs, warmup, cache, trace in (
        ("cli cold 100", 100, 10, "cold", ""),
        ("cli cold 5", 5, 1, "cold", ""),
        ("cli cold 100 traced", 100, 10, "cold", "  trace_dir: /tmp/tr\n"),
        ("cli warm 100", 100, 10, "warm", ""),
    ):
        work = tempfile.mkdtemp()
        path = os.path.join(work, "c.yaml")
        with open(path, "w") as f:
            f.write(
                config.format(
                    runs=runs, warmup=warmup, cache=cache, csv=f"{work}/o.csv", trace=trace
                )
            )
        subprocess.run(
            [sys.executable, "-m", "microbench.cli", "run", "--config", path, "--no-progress"],
            capture_output=True,
        )
        import csv

        (row,) = list(csv.DictReader(open(f"{work}/o.csv")))
        print(name, row["status"], row["time_median_s"], row["error"][:100])


def torch_events() -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        x + x
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("mb::iteration"):
            x + x
            torch.cuda.synchronize()
    for e in prof.profiler.kineto_results.events():
        if "CUDA" in str(e.device_type()):
            print(
                "device event:",
                e.name()[:60],
                e.start_ns(),
                e.duration_ns(),
                e.device_resource_id(),
                e.activity_type() if hasattr(e, "activity_type") else "",
            )


def torch_compile() -> None:
    import torch
    import torch._dynamo

    from torch_backend.ops.gemm import quantize

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)

    def fn(x):
        q, s = quantize(x, 1, torch.float8_e4m3fn)
        return {"q": q.contiguous(), "scale": s}

    torch._dynamo.reset()
    compiled = torch.compile(fn)
    with torch.inference_mode():
        compiled(x)
    from torch._dynamo.utils import counters

    print("dynamo counters:", {k: dict(v) for k, v in counters.items() if v})
    try:
        explanation = torch._dynamo.explain(fn)(x)
        print(
            "graphs:",
            explanation.graph_count,
            "breaks:",
            explanation.graph_break_count,
            explanation.break_reasons[:3],
        )
    except Exception as error:
        print("explain failed:", error)


if __name__ == "__main__":
    for probe in (jax_cold, torch_events, torch_compile):
        try:
            probe()
        except Exception as error:
            print(probe.__name__, "failed:", type(error).__name__, str(error)[:300])
