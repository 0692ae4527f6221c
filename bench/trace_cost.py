"""What one traced JAX case costs in profiler work: start_trace/stop_trace to disk and read back, against
the same session kept in memory (what the harness does when no trace_dir is kept). Not a test.

    python bench/trace_cost.py
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp

from accelbench.jax_backend import timers


def main() -> None:
    x = jnp.ones((256, 8192), jnp.bfloat16)
    f = jax.jit(lambda a: a + a)
    f(x).block_until_ready()

    def run() -> list[float]:
        for _ in range(100):
            f(x).block_until_ready()
        return []

    for name, profile in (
        ("disk", lambda: timers._profile_to_disk(run, firmware=False)),
        ("memory", lambda: timers._profile_in_memory(run, False, host_events=False)),
    ):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            profile()
            times.append(time.perf_counter() - t0)
        print(f"{name}: median {statistics.median(times):.3f} s per traced case of 100 iterations")


if __name__ == "__main__":
    main()
