"""One jax-bench case through upstream's own benchmark object and through this project's prepared case,
in one process, taking turns: the host clock around each blocked call, as both loops time it (not a test).

    python bench/jax_bench_pair.py --upstream CHECKOUT [--rounds 5] NAME --field value ...
    JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=4 python bench/jax_bench_pair.py \
        --upstream CHECKOUT swiglu --batch 256 --dim 256

Per round, 200 blocked calls of each (after 10 untimed): upstream's `reset_data` then `run_op` (reset
outside the clock, as its loop does; imported from the checkout and run, never copied here), and this
project's `Prepared.call` + `sync` of the case `jax-bench --run NAME ...` plans. Printed: the median of the
per-round p50s of each and their ratio. One process, so start-up, imports and the two tools' loop
bookkeeping stay out of it: what is left is the work each one times (bench/jax_bench_beside.py runs the two
command lines instead).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def upstream_step(checkout: str, name: str, fields: dict[str, Any]) -> Callable[[], float]:
    sys.path.insert(0, os.path.join(os.path.abspath(checkout), "src"))
    import accelerator_microbenchmarks.benchmarks  # noqa: F401  (registers upstream's benchmarks)
    import jax
    from accelerator_microbenchmarks.core import registry

    cls = registry.benchmark_registry.get_benchmark(name)
    bench = cls(cls.Config(**fields).expand_test_cases()[0])
    bench.mesh = bench._create_default_mesh()
    bench.setup()
    state = {"inputs": bench.generate_inputs()}

    def step() -> float:
        state["inputs"] = bench.reset_data(*state["inputs"])
        t0 = time.perf_counter()
        jax.block_until_ready(bench.run_op(*state["inputs"]))
        return time.perf_counter() - t0

    return step


def our_step(name: str, args: list[str]) -> tuple[Callable[[], float], str]:
    import jax

    from accelbench.catalogue import PreparedImplementation, get_implementation, get_spec
    from accelbench.config.loader import one_off_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions
    from accelbench.jax_backend.backend import JaxBackend

    cases = plan(one_off_config(name, args), RunOptions(), lambda: len(jax.devices()))
    case = next(c for c in cases if c.backend == "jax")
    backend, impl = JaxBackend(), get_implementation(case.op, "jax", case.implementation)
    prepared = (
        impl.build(backend, case)
        if isinstance(impl, PreparedImplementation)
        else backend.prepare(case, get_spec(case.op), impl)
    )

    def step() -> float:
        t0 = time.perf_counter()
        prepared.sync(prepared.call())
        return time.perf_counter() - t0

    return step, f"{case.op} ({prepared.implementation})"


def p50_ms(step: Callable[[], float], calls: int = 200) -> float:
    for _ in range(10):
        step()
    return statistics.median(step() for _ in range(calls)) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--upstream", required=True, help="a checkout of accelerator-microbenchmarks"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("name")
    known, fields = parser.parse_known_args()
    given = {k.lstrip("-"): v for k, v in zip(fields[::2], fields[1::2], strict=True)}
    typed = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in given.items()}
    theirs = upstream_step(known.upstream, known.name, typed)
    ours, what = our_step(known.name, fields)
    up, our = [], []
    for _ in range(known.rounds):  # taking turns
        up.append(p50_ms(theirs))
        our.append(p50_ms(ours))
    u, o = statistics.median(up), statistics.median(our)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"| {known.name} {' '.join(fields)} | {what} | {u:.4f} | {o:.4f} | {o / u:.2f} | "
        f"{load:.1f} on {os.cpu_count()} cores |"
    )


if __name__ == "__main__":
    main()
