"""Why a bf16 8192³ GEMM's kernel time and triton's do_bench differ on this GPU (not a test): the same
GEMM timed five ways in one process, with the SM clock read before and after each.

    python bench/gemm_vs_do_bench.py
"""

from __future__ import annotations

import statistics
import subprocess

import torch
import triton.testing


def sm_clock() -> str:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def events(fn, n: int, before=None) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        if before:
            before()
            torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return times


def main() -> None:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")

    def gemm() -> torch.Tensor:
        return a @ b

    for _ in range(20):
        gemm()
    torch.cuda.synchronize()
    print("idle:", sm_clock())
    print(f"blocked, no flush: {statistics.median(events(gemm, 50)):.0f} µs  [{sm_clock()}]")
    print(
        f"blocked, flush+sync before: {statistics.median(events(gemm, 50, flush.zero_)):.0f} µs  [{sm_clock()}]"
    )
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(200):
        gemm()
    e.record()
    e.synchronize()
    print(f"back-to-back 200: {s.elapsed_time(e) * 1e3 / 200:.0f} µs  [{sm_clock()}]")
    for mode in ("median", "min", "mean"):
        t = triton.testing.do_bench(gemm, warmup=100, rep=500, return_mode=mode) * 1e3
        print(f"do_bench {mode}: {t:.0f} µs  [{sm_clock()}]")


if __name__ == "__main__":
    main()
