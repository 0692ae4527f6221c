"""The one per-case procedure every backend and suite follows: check, then warm up and time."""

from __future__ import annotations

import time

from microbench.catalogue import OpSpec
from microbench.core.case import Case, RunSettings, shape_label
from microbench.core.types import CheckResult, DeviceInfo, Measurement, Prepared, Timing
from microbench.errors import CaseFailure, Status
from microbench.measure.timers import Timer, warm_up
from microbench.platform import interrupt

MAX_ROUND = 1000  # iterations one round of a soak times at most (one trace, one parse)
MAX_SOAK_SAMPLES = 100_000  # a soak of tiny kernels stops recording here (and stops)


def check_fits(spec: OpSpec, case: Case, capacity_bytes: float | None) -> None:
    """Refuse, before inputs are made, a case whose inputs and outputs alone exceed device memory."""
    if not capacity_bytes:
        return
    need = spec.bytes(case.params)
    if need > capacity_bytes:
        raise CaseFailure(
            Status.OOM,
            f"out of device memory at {shape_label(case.params, named=True)}: inputs and "
            f"outputs alone need {need / 2**30:.1f} GiB, the framework can allocate "
            f"{capacity_bytes / 2**30:.1f} GiB",
        )


def run_check(mode: str, prepared: Prepared, out: object) -> CheckResult:
    """strict: a wrong result raises (the case is not timed); flag: it is timed and flagged; off: skipped."""
    if mode == "off":
        return CheckResult(mode, "off")
    if prepared.check is None:
        return CheckResult(mode, "skipped", "no reference for this op")
    try:
        err = prepared.check(out)
    except CaseFailure as failure:
        if mode == "strict" or failure.status != "wrong_result":
            raise
        return CheckResult(mode, "flagged", failure.reason)
    if err is None:
        return CheckResult(mode, "skipped", "the reference is too large to compute")
    return CheckResult(mode, "passed", max_rel_error_ratio=err)


def timed(timer: Timer, prepared: Prepared, run: RunSettings) -> Timing:
    """num_runs iterations; with min_duration_s, warm-up for at least min(1 s, min_duration_s / 5), then
    rounds of iterations back to back until num_runs are done and min_duration_s has passed. Each round
    is one call of the timer (one trace for a device timer), sized to what is left of the duration."""
    if not run.min_duration_s:
        return timer(prepared, run.warmup, run.num_runs)
    warm_until = time.perf_counter() + min(1.0, run.min_duration_s / 5)
    warm_up(prepared, run.warmup)
    while time.perf_counter() < warm_until:
        warm_up(prepared, 1)
    start = time.perf_counter()
    timing = timer(prepared, 0, run.num_runs)
    while time.perf_counter() - start < run.min_duration_s and timing.count < MAX_SOAK_SAMPLES:
        interrupt.check()
        elapsed = time.perf_counter() - start
        per_iteration = elapsed / timing.count
        left = run.min_duration_s - elapsed
        timing.extend(timer(prepared, 0, max(1, min(MAX_ROUND, int(left / per_iteration) + 1))))
    return timing


def measure(case: Case, prepared: Prepared, timer: Timer, device: DeviceInfo) -> Measurement:
    """Run once and check against the reference, then time the op and its companions."""
    out = prepared.call()
    prepared.sync(out)
    check = run_check(case.run.check, prepared, out)
    digest = prepared.digest(out)
    del out  # release the checked outputs before timing
    timing = timed(timer, prepared, case.run)
    companions = dict(prepared.known_timings)
    for name, companion in prepared.companions.items():
        if name not in companions:
            companions[name] = timed(timer, companion, case.run)
    extras = prepared.finish(timing, companions) if prepared.finish else None
    return Measurement(
        timing=timing,
        device=device,
        check=check,
        compile_s=prepared.compile_s,
        compiler=prepared.compiler,
        implementation=prepared.implementation,
        extras=extras,
        companion_timings=companions,
        outputs_digest=digest,
    )
