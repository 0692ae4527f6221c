"""Issue 63 on a GPU (not a test; needs CUDA, JAX and PyTorch): the audit of each timed window and the
device state, on cases built to show each finding, on the timing tables' held-out kernels, and the
audit's cost.

1. half a function's work on a side stream (joined, and not joined as KernelBench#106's): flagged,
   each stream's time beside the CUDA-event time of the same function;
2. a loop of ~1 µs kernels in eager PyTorch: flagged launch-bound, with its gaps;
3. a torch.compile function that recompiles on its fifth call: flagged;
4. a cold-cache add: the flush's kernels against the timed windows (PyTorch, read from the same trace
   as the timer), and cold-cache rows of both backends reading clean;
5. the held-out kernels of the timing tables (bench/heldout_check.py's cases, warm and cold, JAX and
   PyTorch eager and compiled) through `microbench run`: every row's audit, and the audit's own
   seconds (the events' second walk, timed around it in this process) against the rows' timing wall;
6. the device state of the rows and the end-of-run note.

    python bench/audit_check.py [--out audit63.json]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import heldout_check  # noqa: E402  (the timing tables' held-out cases)

FIGURES: dict[str, Any] = {}


def show(title: str, result: Any) -> dict[str, Any]:
    """One row's time and audit, printed and kept."""
    row = result.row
    kept = {
        "status": row.status.value,
        "error": row.identity.error,
        "device_median_us": (row.median_s or 0) * 1e6,
        "launch_median_us": (row.timing.launch_median_s or 0) * 1e6,
        "span_median_us": (row.timing.device_span_median_s or 0) * 1e6,
        "timing": row.timing.timing_source,
        "audit": row.timing.audit,
        "audit_detail": row.timing.audit_detail,
    }
    print(f"\n### {title}\n")
    for key, value in kept.items():
        print(f"- {key}: {value if not isinstance(value, float) else f'{value:.2f}'}")
    FIGURES[title] = kept
    return kept


def side_stream() -> None:
    import torch

    import accelbench

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()

    def half_on_side(a: Any, join: bool = True) -> Any:
        main = torch.cuda.current_stream()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            y = a @ a
        x = a @ a
        if join:
            main.wait_stream(side)
        return x, y

    for join in (True, False):
        fn = functools.partial(half_on_side, join=join)
        fn.__name__ = f"half_on_side_{'joined' if join else 'unjoined'}"  # type: ignore[attr-defined]
        show(
            f"side stream ({'joined' if join else 'not joined'}): device time",
            accelbench.bench(fn, a),
        )
        events = accelbench.bench(fn, a, timer="cuda_events", name=f"{fn.__name__}_events")
        show(f"side stream ({'joined' if join else 'not joined'}): CUDA events", events)


def launch_bound() -> None:
    import torch

    import accelbench

    x = torch.zeros(1, device="cuda")

    def tiny_loop(x: Any) -> Any:
        for _ in range(200):
            x = x + 1
        return x

    result = accelbench.bench(tiny_loop, x)
    kept = show("200 tiny kernels in eager PyTorch", result)
    kernels = result.row.series.kernels
    kept["kernel_mean_us"] = kernels[0].mean_s * 1e6 if kernels else None
    print(f"- one kernel's mean: {kept['kernel_mean_us']:.2f} µs")


def recompile() -> None:
    import torch

    import accelbench

    @torch.compile
    def scaled(x: Any, k: int) -> Any:
        return x * k if k < 3 else torch.sin(x) * k  # another graph, another kernel, from k = 3

    calls = [0]

    def recompiling(x: Any) -> Any:
        calls[0] += 1  # the check's call is the first, no warm-up: the fifth is timed
        return scaled(x, 2 if calls[0] < 5 else 3)

    x = torch.randn(1 << 20, device="cuda")
    show("torch.compile recompiling on its fifth call", accelbench.bench(recompiling, x, warmup=0))
    calls[0] = 10
    show("the same, compiled before timing", accelbench.bench(recompiling, x, name="settled"))


def cold_flush() -> None:
    """The flush's kernels read from the trace the CUPTI timer reads: where each ran against the
    next timed window's kernels; then cold rows of both backends."""
    import jax.numpy as jnp
    import torch
    from torch.autograd.profiler import record_function

    import accelbench
    from accelbench.core.types import Prepared
    from accelbench.measure import audit
    from accelbench.measure.attribution import attribute
    from torch_backend import profiling, timing

    # JAX first: once PyTorch's profiler has started CUPTI in a process, JAX's GPU timings are refused
    x = jnp.ones((2048, 4096), jnp.bfloat16)
    show(
        "cold add, JAX row",
        accelbench.bench(lambda x, y: x + y, x, x, cache="cold", name="jax_add"),
    )
    device = torch.device("cuda", 0)
    a = torch.randn(2048, 4096, device=device, dtype=torch.bfloat16)
    prepared = Prepared(
        call=lambda: a + a, sync=lambda out: torch.cuda.synchronize(), device=device
    )
    flush = timing._l2_flush(str(device))
    for sustained in (False, True):
        window = timing._named(None, lambda: record_function(timing.ITERATION))
        marked = functools.partial(record_function, timing.FLUSH)
        with profiling.recording(device) as prof:
            timing._event_loop(prepared, 50, flush, window, sustained, marked)
        read = timing.windows_and_kernels(profiling.raw_events(prof), 0)
        iterations = attribute(
            read.windows, read.launches, read.kernels, not sustained, read.flushes
        )
        loop = timing.audited_loop(read, iterations, not sustained)
        firsts = [min(k.start_ns for k in it.kernels) for it in iterations]
        lead = [
            min((f - h.end_ns for f in firsts if f >= h.end_ns), default=None) for h in loop.harness
        ]
        lead = [x for x in lead if x is not None]
        kept = {
            "flush_kernels": len(loop.harness),
            "flush_us_median": statistics.median(h.duration_ns for h in loop.harness) / 1e3,
            "flush_end_to_next_timed_kernel_us_median": statistics.median(lead) / 1e3,
            "flush_end_to_next_timed_kernel_us_min": min(lead) / 1e3,
            "audit": [f.name for f in audit.findings(loop)],
        }
        title = f"cold add 2048x4096, the flush against the windows ({'sustained' if sustained else 'blocked'})"
        print(f"\n### {title}\n\n" + "\n".join(f"- {k}: {v}" for k, v in kept.items()))
        FIGURES[title] = kept
    b = torch.randn(2048, 4096, device=device, dtype=torch.bfloat16)
    show("cold add, PyTorch row", accelbench.bench(torch.add, a, b, cache="cold"))


class Timed:
    """Seconds spent in the audit's own functions (the outermost call counted once)."""

    seconds = 0.0
    depth = 0

    @classmethod
    def wrap(cls, owner: Any, name: str) -> None:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        def timed(*args: Any, **kwargs: Any) -> Any:
            cls.depth += 1
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                cls.depth -= 1
                if not cls.depth:
                    cls.seconds += time.perf_counter() - start

        setattr(owner, name, timed)


def heldout(out_dir: str) -> None:
    """The held-out cases through `microbench run` in this process, warm and cold, the audit's
    functions timed; each row's audit and device state, and the audit's share of the timing wall."""
    import csv

    from accelbench.cli import main
    from accelbench.jax_backend import timers as jax_timers
    from accelbench.measure import audit
    from torch_backend import timing

    Timed.wrap(audit, "findings")
    Timed.wrap(timing, "audited_loop")
    Timed.wrap(jax_timers, "_audit")
    rows = []
    for cache in ("warm", "cold"):
        csv_path = os.path.join(out_dir, f"heldout_{cache}.csv")
        text = heldout_check.config_text(csv_path, 200).replace("cache: warm", f"cache: {cache}")
        config = os.path.join(out_dir, f"heldout_{cache}.yaml")
        with open(config, "w") as f:
            f.write(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["run", "--config", config, "--no-progress", "-q", "--overwrite"])
        print(
            f"\nheld-out, cache {cache}: exit {code}; last lines: {err.getvalue().strip()[-600:]}"
        )
        rows += list(csv.DictReader(open(csv_path)))
    print("\n### held-out kernels\n\n| op | backend | impl | cache | status | device µs | audit |")
    print("|---|---|---|---|---|---:|---|")
    for r in rows:
        median = float(r["time_median_s"] or 0) * 1e6
        print(
            f"| {r['op']} | {r['backend']} | {r['implementation']} | {r['cache']} | {r['status']} "
            f"| {median:.1f} | {r['audit'] or 'clean'} |"
        )
    wall = sum(float(r["timed_loop_s"] or 0) for r in rows)
    FIGURES["heldout"] = {
        "rows": len(rows),
        "clean": sum(not r["audit"] for r in rows),
        "findings": {
            f"{r['op']} {r['backend']} {r['implementation']} {r['cache']}": r["audit_detail"]
            for r in rows
            if r["audit"]
        },
        "audit_s": Timed.seconds,
        "timing_wall_s": wall,
        "audit_share_of_timing_wall": Timed.seconds / wall if wall else None,
        "device_state": {k: v for k, v in rows[0].items() if k in STATE} if rows else {},
    }
    print(
        f"\naudit: {Timed.seconds:.4f} s against {wall:.3f} s of timing wall "
        f"({100 * Timed.seconds / wall:.2f}%)"
        if wall
        else "no timing wall"
    )
    print("device state of the first row: " + json.dumps(FIGURES["heldout"]["device_state"]))


STATE = (
    "clocks_set",
    "sm_clock_set_mhz",
    "memory_clock_set_mhz",
    "sm_clock_default_mhz",
    "power_limit_w",
    "power_limit_default_w",
    "persistence_mode",
    "mig_mode",
    "ecc_mode",
    "pcie_link",
    "nvlink",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="audit63.json")
    parser.add_argument("--only", default="side_stream,launch_bound,recompile,cold_flush,heldout")
    args = parser.parse_args()
    steps = {
        "side_stream": side_stream,
        "launch_bound": launch_bound,
        "recompile": recompile,
        "cold_flush": cold_flush,
        "heldout": lambda: heldout(tempfile.mkdtemp(prefix="audit63_")),
    }
    for name in args.only.split(","):
        try:
            steps[name]()
        except Exception as error:  # one step's failure is said, the others still run
            print(f"\n{name} failed: {type(error).__name__}: {error}")
            FIGURES[name] = {"failed": f"{type(error).__name__}: {error}"}
    with open(args.out, "w") as f:
        json.dump(FIGURES, f, indent=2, default=str)


if __name__ == "__main__":
    main()
