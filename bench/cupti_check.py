"""Issue 63's follow-up on a GPU (not a test; needs CUDA, JAX and PyTorch): one CUPTI a process, and
where the cache flush's kernels are placed. Each step is meant to run in a process of its own
(`bash bench/gpu_run.sh cupti63`).

- order: `bench()` of a PyTorch function, then of a JAX one: the JAX row unsupported, naming the cause;
- config: one config listing a PyTorch case before a JAX case, run twice in one process: the first run
  times both (JAX first), the second refuses JAX (the held-out cold run's case);
- foreign: the user's own torch.profiler session, then JAX: found from the trace, then refused;
- teardown: PyTorch, JAX, PyTorch (CUDA graphs, then CUPTI) and JAX again through `bench()`, with the
  environment's TEARDOWN_CUPTI (the harness leaves it: unset, the refusal; 1, Kineto's teardown);
- cost: what TEARDOWN_CUPTI=1 costs a PyTorch profiler session (run with and without it);
- flush: the side-stream function of audit63 (cold, blocked) and a cold add, profiled as the CUPTI timer
  does: every kernel's records (runtime call, op) and where they and its execution lie (a window, the
  flush's range, neither), the iterations' kernel counts without and with the harness's ranges, and
  how far launch-placed kernels end past their window's host end (the two clocks' agreement);
- gaps: the held-out gemm_simple 4096³ through `microbench run` (eager and compiled scaled_mm, warm):
  each row's kernels, device, span and launch-inclusive times and audit: whether the compiled row's
  idle_gaps are the device waiting between the compiled call's launches.

    python bench/cupti_check.py STEP
"""

from __future__ import annotations

import functools
import os
import statistics
import sys
import tempfile
from collections import Counter
from typing import Any


def row_line(title: str, result: Any) -> None:
    r = result.row
    print(
        f"- {title}: {r.status.value}; {r.timing.timing_source}; {(r.median_s or 0) * 1e6:.2f} µs"
    )
    if r.identity.error:
        print(f"  reason: {r.identity.error}")
    if r.timing.audit:
        print(f"  audit: {r.timing.audit_detail}")


def order() -> None:
    import jax.numpy as jnp
    import torch

    import accelbench

    a = torch.ones(2048, 4096, device="cuda")
    row_line("PyTorch add", accelbench.bench(torch.add, a, a, name="torch_add"))
    x = jnp.ones((2048, 4096))
    row_line("JAX add, after it", accelbench.bench(lambda x: x + x, x, name="jax_add"))


CONFIG = """num_runs: 20
warmup: 3
cache: cold
benchmarks:
- benchmark_name: add
  backend: torch
  csv_path: {csv}
  benchmark_params: [{{m: 2048, n: 4096}}]
- benchmark_name: add
  backend: jax
  csv_path: {csv}
  benchmark_params: [{{m: 2048, n: 4096}}]
"""


def config() -> None:
    import csv

    from accelbench.cli import main

    folder = tempfile.mkdtemp(prefix="cupti63_")
    for run in (1, 2):
        out = os.path.join(folder, f"run{run}.csv")
        path = os.path.join(folder, f"run{run}.yaml")
        with open(path, "w") as f:
            f.write(CONFIG.format(csv=out))
        code = main(["run", "--config", path, "--no-progress", "-q"])
        print(f"- run {run} in this process (torch listed first): exit {code}")
        for r in csv.DictReader(open(out)):
            median = float(r["time_median_s"] or 0) * 1e6
            print(
                f"  {r['backend']}: {r['status']}; {r['timing_source']}; {median:.2f} µs; {r['error']}"
            )


def foreign() -> None:
    import jax.numpy as jnp
    import torch
    from torch.profiler import ProfilerActivity, profile

    import accelbench

    a = torch.ones(1024, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]):  # the user's own session, not the harness's
        (a + 1).sum().item()
    x = jnp.ones((2048, 4096))
    for attempt in (1, 2):
        row_line(f"JAX add {attempt} after torch.profiler", accelbench.bench(lambda x: x + x, x))


def teardown() -> None:
    """The harness as it is, with the environment's TEARDOWN_CUPTI (`cupti63` runs this step unset
    and with 1), nothing cleared by hand."""
    import jax.numpy as jnp
    import torch

    import accelbench
    from accelbench.platform import frameworks

    print(f"- TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} in the environment")
    a, x = torch.ones(2048, 4096, device="cuda"), jnp.ones((2048, 4096))
    row_line("PyTorch add", accelbench.bench(torch.add, a, a, name="torch_add"))
    print(f"- TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} after it; {dict(frameworks.CUPTI)}")
    row_line("JAX add after it", accelbench.bench(lambda x: x + x, x, name="jax_add"))
    row_line(
        "PyTorch add, CUDA graph timer",
        accelbench.bench(torch.add, a, a, name="torch_graph", timer="cuda_graph"),
    )
    row_line("PyTorch add again", accelbench.bench(torch.add, a, a, name="torch_add2"))
    row_line("JAX add again", accelbench.bench(lambda x: x + x, x, name="jax_add2"))
    print(f"- {dict(frameworks.CUPTI)}")


COST = """num_runs: 50
warmup: 5
benchmarks:
- benchmark_name: add
  backend: torch
  implementation: eager
  csv_path: {csv}
  benchmark_sweep_params: [{{m: [1024, 2048, 3072, 4096], n: [2048, 4096, 8192]}}]
"""


def cost() -> None:
    """What TEARDOWN_CUPTI costs a PyTorch profiler session (`cupti63` runs this as the harness
    leaves it, Kineto keeping CUPTI, and again with TEARDOWN_CUPTI=1): the warm-up; 40 sessions of a
    20-call add loop as the cupti timer runs them, each session's own seconds (start, stop, read) and
    the next CUDA call's (where Kineto finalises CUPTI), with a CUDA call between sessions (a case's
    rounds) and back to back (Kineto's teardown can then land inside the next session: lost); and 12
    add cases through `microbench run`: the run's wall per case and each row's session seconds."""
    import csv
    import time

    import torch

    from accelbench.cli import main
    from accelbench.core.types import Prepared
    from accelbench.measure.attribution import AttributionError
    from accelbench.measure.timers import no_flush
    from torch_backend import profiling, timing

    device = torch.device("cuda", 0)
    print(f"- TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} in the environment")
    start = time.perf_counter()
    later = profiling.warm(device)
    print(
        f"- warm-up {(time.perf_counter() - start) * 1e3:.0f} ms (two sessions), its second "
        f"{later * 1e3:.1f} ms; TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')} now"
    )
    b = torch.ones(2048, 4096, device=device, dtype=torch.bfloat16)
    prepared = Prepared(call=lambda: b + b, sync=lambda out: torch.cuda.synchronize(device))
    for title, between in (("a CUDA call between sessions", True), ("back to back", False)):
        sessions, calls, lost = [], [], 0
        for _ in range(40):
            try:
                sessions.append(timing.cupti(prepared, 20, no_flush).session_s)
            except AttributionError:
                lost += 1
            if between:
                t0 = time.perf_counter()
                torch.cuda.synchronize(device)
                calls.append(time.perf_counter() - t0)
        said = f"{lost} without kernels; each session {_ms(sessions)}"
        print(
            f"- {title}: 40 sessions, {said}"
            + (f"; the next CUDA call {_ms(calls)}" if calls else "")
        )
    folder = tempfile.mkdtemp(prefix="cupti63_")
    out, path = os.path.join(folder, "cost.csv"), os.path.join(folder, "cost.yaml")
    with open(path, "w") as f:
        f.write(COST.format(csv=out))
    start = time.perf_counter()
    code = main(["run", "--config", path, "--no-progress", "-q"])
    wall = time.perf_counter() - start
    rows = list(csv.DictReader(open(out)))
    session = [float(r["profiler_session_s"] or 0) * 1e3 for r in rows]
    print(
        f"- microbench run, {len(rows)} add cases: exit {code}, {Counter(r['status'] for r in rows)}, "
        f"{wall / len(rows):.2f} s a case; profiler_session_s per row median "
        f"{statistics.median(session):.1f} ms (max {max(session):.1f})"
    )


def flush() -> None:
    import torch
    from torch.autograd.profiler import record_function

    from accelbench.core.types import Prepared
    from accelbench.measure import audit
    from accelbench.measure.attribution import attribute, launched_in
    from torch_backend import profiling, timing

    device = torch.device("cuda", 0)
    a = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    side = torch.cuda.Stream()

    def half_on_side() -> Any:
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = a @ a
        x = a @ a
        torch.cuda.current_stream().wait_stream(side)
        return x, y

    b = torch.randn(2048, 4096, device=device, dtype=torch.bfloat16)
    cases = {"side stream (joined)": half_on_side, "add 2048x4096": lambda: b + b}
    sync = functools.partial(torch.cuda.synchronize, device)
    flusher = timing._l2_flush(str(device))
    for title, call in cases.items():
        prepared = Prepared(call=call, sync=lambda out: sync(), device=device)
        for _ in range(3):
            prepared.sync(prepared.call())
        window = timing._named(None, lambda: record_function(timing.ITERATION))
        marked = functools.partial(record_function, timing.FLUSH)
        with profiling.recording(device) as prof:
            timing._event_loop(prepared, 50, flusher, window, False, marked)
        read = timing.windows_and_kernels(profiling.raw_events(prof), 0)
        windows, flushes = sorted(read.windows), sorted(read.flushes)
        in_window, in_flush = (
            launched_in(windows, read.launches),
            launched_in(flushes, read.launches),
        )
        print(f"\n### {title}, cold, blocked: 50 iterations\n")
        places = Counter()
        for k in read.kernels:
            where = tuple(
                "window" if key in in_window else "flush" if key in in_flush else "none"
                for key in k.keys
            )
            ran = _inside(k, windows) or _inside(k, flushes, "flush") or "neither"
            places[(k.name[:50], *where, ran)] += 1
        print("| kernel | runtime record | op record | ran in | count |\n|---|---|---|---|---:|")
        for (name, launch, op, ran), n in sorted(places.items()):
            print(f"| {name} | {launch} | {op} | {ran} | {n} |")
        for label, ranges in (("without", ()), ("with", read.flushes)):
            iterations = attribute(read.windows, read.launches, read.kernels, True, ranges)
            counts = Counter(len(it.kernels) for it in iterations)
            loop = timing.audited_loop(read, iterations, True)
            found = [f.detail for f in audit.findings(loop)]
            print(
                f"- {label} the flush's ranges: kernels per iteration {dict(counts)}; audit {found}"
            )
        by_launch = [
            k.end_ns - windows[in_window[k.keys[0]]][1]
            for k in read.kernels
            if k.keys[0] in in_window
        ]
        if by_launch:
            print(
                f"- launch-placed kernels' end past their window's host end: max "
                f"{max(by_launch) / 1e3:.2f} µs, median {statistics.median(by_launch) / 1e3:.2f} µs "
                "(above 0: the device clock reads late against the host's)"
            )


GAPS = """num_runs: 50
warmup: 10
cache: warm
benchmarks:
- benchmark_name: gemm_simple
  backend: torch
  csv_path: {csv}
  benchmark_params: [{{m: 4096, k: 4096, n: 4096}}]
"""


def gaps() -> None:
    import csv

    from accelbench.cli import main

    folder = tempfile.mkdtemp(prefix="cupti63_")
    out, path = os.path.join(folder, "gaps.csv"), os.path.join(folder, "gaps.yaml")
    with open(path, "w") as f:
        f.write(GAPS.format(csv=out))
    print(f"- exit {main(['run', '--config', path, '--no-progress', '-q'])}")
    for r in csv.DictReader(open(out)):
        us = {k: float(r[k] or 0) * 1e6 for k in ("time_median_s", "device_span_median_s")}
        launch = float(r["launch_median_s"] or 0) * 1e6
        print(
            f"- {r['implementation']}: {r['status']}; device {us['time_median_s']:.1f} µs, span "
            f"{us['device_span_median_s']:.1f} µs, launch-inclusive {launch:.1f} µs\n"
            f"  kernels: {r['top_kernels']}\n  audit: {r['audit_detail'] or 'clean'}"
        )


def _ms(seconds: list[float]) -> str:
    return (
        f"{statistics.median(seconds) * 1e3:.2f} ms median (max {max(seconds) * 1e3:.2f})"
        if seconds
        else "none"
    )


def _inside(k: Any, ranges: list[tuple[float, float]], name: str = "window") -> str | None:
    return next((name for a, b in ranges if a <= k.start_ns and k.end_ns <= b), None)


if __name__ == "__main__":
    steps = {
        "order": order,
        "config": config,
        "foreign": foreign,
        "teardown": teardown,
        "cost": cost,
        "flush": flush,
        "gaps": gaps,
    }
    if len(sys.argv) != 2 or sys.argv[1] not in steps:
        sys.exit(f"usage: cupti_check.py {'|'.join(steps)}")
    print(f"\n## {sys.argv[1]}\n")
    steps[sys.argv[1]]()
