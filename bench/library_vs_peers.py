"""`accelbench.bench()` beside the timers kernel authors use, on held-out kernels, in one process
(issue 48; not a test; needs CUDA, JAX, PyTorch and Triton): each kernel's profiler truth (CUPTI
through torch.profiler, or the JAX profiler's trace, as bench/heldout_check.py takes them: each
kernel's median, summed over one call, every call waited for), then triton's do_bench and
do_bench_cudagraph, torch.utils.benchmark's blocked_autorange, CUDA events around each call, a
host-clock loop (JAX), and bench() with a 0.2% precision target, all warm-cache medians. JAX first:
once PyTorch's profiler has held CUPTI in a process, JAX's gets no GPU events.

    python bench/library_vs_peers.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from heldout_check import jax_kernel_us, torch_kernel_us

import accelbench

ITERS = 200
Timed = dict[str, float]  # peer -> µs


def ours(fn: Callable[..., Any], *args: Any) -> tuple[float, float]:
    r = accelbench.bench(fn, *args, cache="warm", target_precision=0.002, max_time_s=10.0)
    assert r.ok, str(r)
    return (r.median_s or 0.0) * 1e6, r.row.timing.timed_loop_s or 0.0


def host_clock(fn: Callable[[], Any], sync: Callable[[Any], Any]) -> float:
    times = []
    for _ in range(ITERS):
        start = time.perf_counter()
        sync(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def torch_peers(fn: Callable[[], Any]) -> Timed:
    import torch
    import torch.utils.benchmark as tb
    import triton.testing

    def events() -> float:
        times = []
        for _ in range(ITERS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        return statistics.median(times)

    return {
        "do_bench": triton.testing.do_bench(fn, return_mode="median") * 1e3,
        "do_bench_cudagraph": triton.testing.do_bench_cudagraph(fn, return_mode="median") * 1e3,
        "blocked_autorange": tb.Timer("fn()", globals={"fn": fn}).blocked_autorange().median * 1e6,
        "cuda_events": events(),
    }


def jax_cases() -> list[tuple[str, Callable[..., Any], list[Any]]]:
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (3072, 6144), jnp.bfloat16)
    y = jax.random.normal(key, (3072, 6144), jnp.bfloat16)
    a = jax.random.normal(key, (8192, 4096), jnp.bfloat16)
    b = jax.random.normal(key, (4096, 4096), jnp.bfloat16)
    return [
        ("add 3072x6144 bf16, JAX", jax.jit(jnp.add), [x, y]),
        ("GEMM 8192x4096x4096 bf16, JAX", jax.jit(jnp.matmul), [a, b]),
    ]


def torch_cases() -> list[tuple[str, Callable[..., Any], list[Any]]]:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(
            out_ptr + offs,
            tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
            mask=mask,
        )

    def triton_add(x: Any, y: Any) -> Any:
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        return out

    x = torch.randn(3072, 6144, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(3072, 6144, device="cuda", dtype=torch.bfloat16)
    a = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    return [
        ("add 3072x6144 bf16, torch", torch.add, [x, y]),
        ("add 3072x6144 bf16, torch.compile", torch.compile(torch.add), [x, y]),
        ("GEMM 8192x4096x4096 bf16, torch", torch.matmul, [a, b]),
        ("add 3072x6144 bf16, Triton kernel", triton_add, [x, y]),
    ]


def rounds(
    name: str, truth: Callable[[], float], peers: Timed, fn: Any, args: list[Any], n: int = 3
) -> dict[str, Any]:
    """The truth and bench() taking turns, `n` rounds: a GPU's clock drifts between moments (a large
    GEMM's by several percent as it heats), so each side is its median over the rounds, and the
    truth's spread across them says how far apart two moments can be."""
    truths, mine, spent = [], [], []
    for _ in range(n):
        truths.append(truth())
        us, s = ours(fn, *args)
        mine.append(us)
        spent.append(s)
    middle = statistics.median(truths)
    return {
        "kernel": name,
        "truth_us": middle,
        "truth_spread": (max(truths) - min(truths)) / middle,
        "peers_us": peers,
        "bench_us": statistics.median(mine),
        "bench_timing_s": statistics.median(spent),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=None)
    out_path = parser.parse_args().out
    import jax

    results: list[dict[str, Any]] = []

    def jax_truth(fn: Any, args: list[Any]) -> float:
        with tempfile.TemporaryDirectory() as where:
            return jax_kernel_us(fn, args, ITERS, where)[0]

    for name, fn, args in jax_cases():
        peers = {"host_clock_blocked": host_clock(lambda: fn(*args), jax.block_until_ready)}
        results.append(rounds(name, lambda: jax_truth(fn, args), peers, fn, args))
    for name, fn, args in torch_cases():
        peers = torch_peers(lambda fn=fn, args=args: fn(*args))
        results.append(rounds(name, lambda: torch_kernel_us(fn, args, ITERS)[0], peers, fn, args))
    names = [
        "do_bench",
        "do_bench_cudagraph",
        "blocked_autorange",
        "cuda_events",
        "host_clock_blocked",
    ]
    print("| kernel | truth (spread, 3 rounds) | " + " | ".join(names) + " | bench() |")
    print("|---|---|" + "---|" * (len(names) + 1))
    for r in results:
        dev = lambda us: f"{(us / r['truth_us'] - 1) * 100:+.1f}%"  # noqa: E731
        cells = [dev(r["peers_us"][n]) if n in r["peers_us"] else "—" for n in names]
        print(
            f"| {r['kernel']} | {r['truth_us']:.1f} µs ({r['truth_spread']:.1%}) | "
            + " | ".join(cells)
            + f" | {dev(r['bench_us'])} ({r['bench_timing_s']:.3f} s of timing) |"
        )
    if out_path:
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
