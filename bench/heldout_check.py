"""The harness's device times against kernel times taken outside it, on shapes no config here uses
(issue 27's held-out checks; not a test; needs CUDA, JAX and PyTorch).

The harness runs each case as a user would (one `microbench run`, cache warm). Then, in a fresh process
of its own, this script builds the same op from the catalogue and times it without the harness:
PyTorch's kernels with CUPTI through torch.profiler (eager and torch.compile), JAX's from the Perfetto
trace the JAX profiler writes (parsed here, not by the harness's xplane reader). Both sides take each
kernel's median over the iterations and sum the kernels of one call; each call is waited for before
the next, as the harness's default cadence (`blocked`) does.

The two sides alternate, each round a fresh process of each (`--rounds`, default 3): a 170 µs GEMM drifted
3.7% between two outside runs minutes apart, more than the 2% the check is to resolve. Each side's
figure is its median over the rounds, shown with its own spread across them (max - min over median); a
difference is called within or beyond 2% only where both spreads are under 2%, else "unresolved".

    python bench/heldout_check.py [--out DIR] [--iters 200] [--rounds 3]
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

    from accelbench.catalogue import get_spec

    spec = get_spec(op)
    params = spec.resolve(given, "heldout")
    assert spec.make_inputs is not None
    host = spec.make_inputs(params, np.random.default_rng(params.placement.seed))
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

    from accelbench.catalogue import ArrayImplementation, implementation_of
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


TOLERANCE = 0.02  # the check's bound on |harness / outside - 1|


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values) if values else float("nan")


def verdict(harness: list[float], other: list[float]) -> str:
    """Within or beyond TOLERANCE, or unresolved where either side moved that much across rounds."""
    if not harness or not other:
        return "missing"
    if max(spread(harness), spread(other)) >= TOLERANCE:
        return "unresolved"
    difference = statistics.median(harness) / statistics.median(other) - 1
    return "within" if abs(difference) < TOLERANCE else "beyond"


def harness_round(folder: str, iters: int) -> dict[str, tuple[float, str]]:
    """One `microbench run` of every case: key -> (µs, timing source)."""
    from accelbench.catalogue import get_spec
    from accelbench.results.reading import read_rows

    os.makedirs(folder, exist_ok=True)
    csv, config = os.path.join(folder, "heldout.csv"), os.path.join(folder, "heldout.yaml")
    with open(config, "w") as f:
        f.write(config_text(csv, iters))
    subprocess.run(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", config, "--no-progress"],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    found = {}
    for r in read_rows(csv):
        shape = get_spec(r.identity.op).shape(r.params)
        key = f"{r.identity.op}|{shape}|{r.identity.backend}|{r.identity.implementation}"
        if r.median_s:
            found[key] = (float(r.median_s) * 1e6, r.timing.timing_source or "")
    return found


def outside_round(folder: str, iters: int) -> dict[str, float]:
    """The outside side in a fresh process of its own (the JAX profiler cannot trace again in a
    process whose torch.profiler has held CUPTI)."""
    os.makedirs(folder, exist_ok=True)
    subprocess.run(
        [sys.executable, __file__, "--outside-only", "--out", folder, "--iters", str(iters)],
        check=True,
    )
    with open(os.path.join(folder, "outside.json")) as f:
        return dict(json.load(f)["outside_us"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="mb_heldout_"))
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--outside-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.outside_only:
        truth, kernels = outside(args.iters, args.out)
        with open(os.path.join(args.out, "outside.json"), "w") as f:
            json.dump({"outside_us": truth, "kernels_us": kernels}, f, indent=1)
        return 0
    harness: dict[str, list[float]] = defaultdict(list)
    other: dict[str, list[float]] = defaultdict(list)
    sources: dict[str, str] = {}
    for i in range(args.rounds):
        t0 = time.perf_counter()
        for key, (us, source) in harness_round(os.path.join(args.out, f"h{i}"), args.iters).items():
            harness[key].append(us)
            sources[key] = source
        for key, us in outside_round(os.path.join(args.out, f"o{i}"), args.iters).items():
            other[key].append(us)
        print(f"round {i + 1}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(
        "| op | shape | backend | implementation | harness timer | harness µs (spread) "
        "| outside µs (spread) | difference | verdict |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for key in [*other, *(k for k in harness if k not in other)]:
        op, shape, backend, implementation = key.split("|")
        mine, theirs = harness.get(key, []), other.get(key, [])
        mid = statistics.median(mine) if mine else float("nan")
        ref = statistics.median(theirs) if theirs else float("nan")
        print(
            f"| {op} | {shape} | {backend} | {implementation} | {sources.get(key, '')} "
            f"| {mid:.2f} ({spread(mine):.1%}) | {ref:.2f} ({spread(theirs):.1%}) "
            f"| {100 * (mid / ref - 1):+.2f}% | {verdict(mine, theirs)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
