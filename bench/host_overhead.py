"""Where a jax-bench case's host-clock time goes: upstream's own benchmark object and this project's, the
same op and size, in one process, taking turns (not a test).

    python bench/host_overhead.py --upstream .upstream [--m 8192 --n 8192] [--rounds 5]

For `quantization` (the case whose host-clock p50 differed most between the two tools) it times, per
round, 200 blocked calls of each of:
  upstream   upstream's QuantizationBenchmark.run_op on its own inputs (imported from the checkout and
             run, never copied here);
  ours-jit   this project's op function under a plain jax.jit, on the same bf16 input;
  ours-call  this project's prepared case (`Prepared.call` + `sync`: what its host-clock loop calls),
and reads each one's device time per call from a profiler trace of 50 more calls (the sum of its
kernels). host - device is what the host adds. The medians over the rounds are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

HOST_CALLS, TRACED_CALLS = 200, 50


def blocked_p50_us(fn: Callable[[], Any], calls: int = HOST_CALLS) -> float:
    import jax

    for _ in range(20):
        jax.block_until_ready(fn())
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def device_us(fn: Callable[[], Any], module: str) -> float:
    """The median device time per call of `module`'s executions in a trace of TRACED_CALLS calls."""
    import jax

    from accelbench.jax_backend import timers, xplane

    def run() -> list[float]:
        for _ in range(TRACED_CALLS):
            jax.block_until_ready(fn())
        return []

    profile, _ = timers.profiled(run, None)
    iters = xplane.read(profile, module, TRACED_CALLS).iterations
    return statistics.median(i.total_ns for i in iters) / 1e3


def upstream_quantization(checkout: str, m: int, n: int) -> tuple[Callable[[], Any], str]:
    sys.path.insert(0, os.path.join(os.path.abspath(checkout), "src"))
    import jax
    import numpy as np
    from accelerator_microbenchmarks.benchmarks import compute_ops

    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("device",))
    bench = compute_ops.QuantizationBenchmark(compute_ops.QuantParams(m=m, n=n), mesh)
    bench.setup()
    (x,) = bench.generate_inputs()
    return lambda: bench.run_op(x), "jit_quant_fn"


def ours(m: int, n: int) -> tuple[Callable[[], Any], Callable[[], Any], Any]:
    """(our op under a plain jit, our prepared case's call, the prepared case)."""
    import jax

    from accelbench.config.loader import one_off_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions
    from accelbench.jax_backend.backend import JaxBackend
    from accelbench.ops.quantize import VARIANTS, jax_builder

    loaded = one_off_config("quantization", ["--m", str(m), "--n", str(n)])
    (case,) = [c for c in plan(loaded, RunOptions(), lambda: 1) if c.backend == "jax"]
    fn = jax.jit(jax_builder(VARIANTS["quantization"])(case.params))
    x = jax.random.normal(jax.random.PRNGKey(0), (m, n), dtype=jax.numpy.bfloat16)
    backend = JaxBackend()
    from accelbench.catalogue import get_implementation, get_spec

    spec = get_spec(case.op)
    prepared = backend.prepare(case, spec, get_implementation(case.op, "jax", case.implementation))

    def call() -> Any:
        out = prepared.call()
        prepared.sync(out)
        return out

    return (lambda: fn(x)), call, case


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--upstream", required=True, help="a checkout of accelerator-microbenchmarks"
    )
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from accelbench.jax_backend.timers import module_name

    up, up_module = upstream_quantization(args.upstream, args.m, args.n)
    jit_ours, call_ours, case = ours(args.m, args.n)
    rows: dict[str, tuple[Callable[[], Any], str]] = {
        "upstream (its run_op)": (up, up_module),
        "ours-jit (our op, plain jit)": (jit_ours, "jit_fn"),
        "ours-call (Prepared.call + sync)": (call_ours, module_name(case)),
    }
    host: dict[str, list[float]] = {k: [] for k in rows}
    device: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.rounds):
        for name, (fn, module) in rows.items():  # taking turns, round after round
            host[name].append(blocked_p50_us(fn))
            device[name].append(device_us(fn, module))
    print(
        f"quantization {args.m}x{args.n} bf16, {args.rounds} rounds, median of per-round medians\n"
    )
    print("| callable | host p50 us | device us | host - device us |\n|---|---|---|---|")
    for name in rows:
        h, d = statistics.median(host[name]), statistics.median(device[name])
        print(f"| {name} | {h:.1f} | {d:.1f} | {h - d:.1f} |")


if __name__ == "__main__":
    main()
