"""The harness's device times against kernel times taken outside it, on shapes no config here uses
(issue 27's held-out checks; not a test; needs CUDA, JAX and PyTorch).

The harness runs each case as a user would (one `microbench run`, cache warm). Then, in a fresh process
of its own, this script builds the same op from the catalogue and times it without the harness:
PyTorch's kernels with CUPTI through torch.profiler (eager and torch.compile), JAX's from the Perfetto
trace the JAX profiler writes (parsed here, not by the harness's xplane reader). Both sides take each
kernel's median over the iterations and sum the kernels of one call; each call is waited for before
the next, as the harness's default cadence (`blocked`) does.

    python bench/heldout_check.py [--out DIR] [--iters 200]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from typing import Any

CASES: list[tuple[str, dict[str, Any]]] = [
    ("add", {"m": 2048, "n": 4096}),
    ("add", {"m": 4096, "n": 8192}),
    ("quantization", {"m": 8192, "n": 8192}),
    ("gemm_multiple_run", {"m": 4096, "k": 8192, "n": 2048, "dtype": "bfloat16"}),
    ("gemm_simple", {"m": 4096, "k": 4096, "n": 4096}),
]


def config_text(csv: str, num_runs: int) -> str:
    blocks = "".join(
        f"- benchmark_name: {op}\n  csv_path: {csv}\n  benchmark_params: [{json.dumps(p)}]\n"
        for op, p in CASES
    )
    return f"num_runs: {num_runs}\nwarmup: 10\ncache: warm\nbackend: [jax, torch]\nbenchmarks:\n{blocks}"


def inputs(op: str, given: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    import numpy as np

    from microbench.catalogue import get_spec

    spec = get_spec(op)
    params = spec.resolve(given, "heldout")
    assert spec.make_inputs is not None
    host = spec.make_inputs(params, np.random.default_rng(params.get("seed", 0)))
    return params, list(host.values())


def per_call(durations: dict[str, list[float]], iters: int) -> float:
    """µs of kernel time in one call, robust to a stray slow iteration as the harness's median is:
    each kernel's median duration times how many times a call launches it, summed."""
    return sum(statistics.median(d) * len(d) / iters for d in durations.values())


def torch_kernel_us(fn: Any, args: list[Any], iters: int) -> tuple[float, dict[str, float]]:
    """CUPTI kernel time of one call (torch.profiler), from `iters` calls; and each kernel's µs."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with torch.inference_mode():
        for _ in range(10):
            fn(*args)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):  # each call waited for, as the harness's default cadence does
                fn(*args)
                torch.cuda.synchronize()
    durations: dict[str, list[float]] = defaultdict(list)
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            durations[e.name].append(e.time_range.elapsed_us())
    return per_call(durations, iters), {k: per_call({k: d}, iters) for k, d in durations.items()}


def jax_kernel_us(
    fn: Any, args: list[Any], iters: int, where: str
) -> tuple[float, dict[str, float]]:
    """Kernel time of one call from the JAX profiler's Perfetto trace (the events of every GPU stream
    line, "Stream #..."), from `iters` calls; and the µs per call of each kernel name."""
    import jax

    for _ in range(10):
        jax.block_until_ready(fn(*args))
    with jax.profiler.trace(where, create_perfetto_trace=True):
        for _ in range(iters):  # each call waited for, as the harness's default cadence does
            jax.block_until_ready(fn(*args))
    path = sorted(glob.glob(os.path.join(where, "**", "perfetto_trace.json.gz"), recursive=True))[
        -1
    ]
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace

    def named(kind: str, e: dict[str, Any]) -> str:
        return str(e.get("args", {}).get("name", "")) if e.get("name") == kind else ""

    gpu_pids = {
        e["pid"] for e in events if e.get("ph") == "M" and "GPU" in named("process_name", e)
    }
    streams = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e["pid"] in gpu_pids
        and named("thread_name", e).startswith("Stream")
    }
    durations: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in streams:
            durations[e["name"]].append(float(e.get("dur", 0)))
    return per_call(durations, iters), {k: per_call({k: d}, iters) for k, d in durations.items()}


def shape_of(given: dict[str, Any]) -> str:
    return "x".join(str(given[d]) for d in ("m", "k", "n") if d in given)


def outside(iters: int, work: str) -> tuple[dict[str, float], dict[str, Any]]:
    """(op|shape|backend|implementation) -> µs, measured here without the harness; and its kernels.
    Every JAX trace comes first: once torch.profiler has held CUPTI, the JAX profiler cannot subscribe."""
    import jax
    import torch

    from microbench.catalogue import ArrayImplementation, implementation_of
    from torch_backend.arrays import array_builder
    from torch_backend.tensors import to_torch

    found: dict[str, float] = {}
    kernels: dict[str, Any] = {}
    for op, given in CASES:
        params, host = inputs(op, given)
        impl = implementation_of(ArrayImplementation, op, "jax")
        placed = [jax.device_put(a) for a in host]
        key = f"{op}|{shape_of(given)}|jax|jit"
        where = os.path.join(work, f"trace_{op}_{shape_of(given)}")
        found[key], kernels[key] = jax_kernel_us(jax.jit(impl.build(params)), placed, iters, where)
        del placed
    device = torch.device("cuda", 0)
    for op, given in CASES:
        params, host = inputs(op, given)
        build = array_builder(op)
        assert build is not None, f"{op} has no eager array builder"
        fn, label = build(params, device)
        tensors = [to_torch(a, device) for a in host]
        key = f"{op}|{shape_of(given)}|torch|{label}"
        found[key], kernels[key] = torch_kernel_us(fn, tensors, iters)
        torch._dynamo.reset()
        compiled = "compile" if label == "eager" else f"compile:{label}"
        key = f"{op}|{shape_of(given)}|torch|{compiled}"
        found[key], kernels[key] = torch_kernel_us(torch.compile(fn), tensors, iters)
        del tensors
        torch.cuda.empty_cache()
    return found, kernels


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="mb_heldout_"))
    parser.add_argument("--iters", type=int, default=200)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    csv, config = os.path.join(args.out, "heldout.csv"), os.path.join(args.out, "heldout.yaml")
    with open(config, "w") as f:
        f.write(config_text(csv, args.iters))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "microbench.cli", "run", "--config", config, "--no-progress"],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    print(f"{time.perf_counter() - t0:.1f} s for the harness's run", file=sys.stderr)
    truth, kernels = outside(args.iters, args.out)

    from microbench.catalogue import get_spec
    from microbench.results.writer import read_rows

    print(
        "| op | shape | backend | implementation | harness timer | harness µs | outside µs | "
        "difference |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in read_rows(csv):
        spec = get_spec(r.identity.op)
        shape = spec.shape(r.params)
        key = f"{r.identity.op}|{shape}|{r.identity.backend}|{r.identity.implementation}"
        harness = float(r.median_s or 0) * 1e6
        other = truth.get(key)
        diff = f"{100 * (harness / other - 1):+.2f}%" if other and harness else r.status.value
        print(
            f"| {r.identity.op} | {shape} | {r.identity.backend} | {r.identity.implementation} | "
            f"{r.timing.timing_source} | {harness:.2f} | {other or 0:.2f} | {diff} |"
        )
    with open(os.path.join(args.out, "outside.json"), "w") as f:
        json.dump({"outside_us": truth, "kernels_us": kernels}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
