"""The one per-case procedure every backend and suite follows: check, then warm up and time."""

from __future__ import annotations

import time
from dataclasses import replace

from accelbench.catalogue import OpSpec, get_spec
from accelbench.core.case import Case, RunSettings, shape_label
from accelbench.core.types import (
    CheckResult,
    DeviceInfo,
    Finding,
    Measurement,
    Prepared,
    SoakPhases,
    Timing,
    merged_telemetry,
)
from accelbench.errors import CaseFailure, Status
from accelbench.measure import garbage
from accelbench.measure.timers import (
    Described,
    Timer,
    timed_iterations,
    wall_clock,
    warm_up,
)
from accelbench.platform import interrupt
from accelbench.platform.environment import cpu_wait_s

# iterations a round times at most (one trace, one parse: ~1 s of a 20 µs kernel's)
MAX_ROUND = 10_000
MAX_SOAK_SAMPLES = 100_000  # a soak of tiny kernels stops recording here (and stops)
# a round sized for the precision target asks this much more than the 1/sqrt(n) estimate: each round
# is a profiler session (~15 ms of JAX's on an H100), and an estimate that just misses costs a round
ROUND_MARGIN = 1.2
# ...but at most this many times the samples so far: a pilot that caught a slow burst asked for 1 757
# samples (1.16 s) where ~400 sufficed (PyTorch compiled, H100); one more session costs less
MAX_GROWTH = 4
# ...and its iterations last this many times its session: the session is at most half the round's wall
SESSION_SHARE = 1.0


def check_fits(spec: OpSpec, case: Case, capacity_bytes: float | None) -> None:
    """Refuse, before inputs are made, a case whose inputs and outputs alone exceed device memory."""
    if not capacity_bytes:
        return
    need = spec.bytes(case.params)
    if need > capacity_bytes:
        raise CaseFailure(
            Status.OOM,
            f"out of device memory at {shape_label(case.params.as_dict(), named=True)}: inputs and "
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


def stop_reason(timing: Timing, run: RunSettings, elapsed_s: float) -> str | None:
    """Why timing may stop now (None: another round). A soak lasts min_duration_s whatever the precision."""
    if timing.count >= MAX_SOAK_SAMPLES:
        return "sample_cap"
    if elapsed_s < run.min_duration_s:
        return None
    if run.target_precision is None:
        return "min_duration" if run.min_duration_s else "num_runs"
    if timing.meets_confidence(run.target_precision):
        return "precision"
    if elapsed_s >= run.max_time_s:  # the time a user gave, named first where both ceilings are met
        return "max_time"
    if timing.count >= run.max_runs:
        return "max_runs"
    return None


def next_round(timing: Timing, run: RunSettings, elapsed_s: float, session_s: float = 0.0) -> int:
    """Iterations for the next round: the rest of a soak, or what the precision target needs if the
    interval narrows as 1/sqrt(n) (see the constants above), within the ceilings."""
    per_iteration = elapsed_s / timing.count
    if elapsed_s < run.min_duration_s:
        wanted = int((run.min_duration_s - elapsed_s) / per_iteration) + 1
    else:
        reached, target = timing.precision_ratio, run.target_precision or 1.0
        grow = (reached / target) ** 2 * ROUND_MARGIN if reached else 2.0
        looping = max(elapsed_s - timing.session_s, 1e-9) / timing.count  # less the sessions
        wanted = max(
            min(int(timing.count * (grow - 1)) + 1, MAX_GROWTH * timing.count),
            timing.count // 4,
            int(SESSION_SHARE * session_s / looping),
        )
        wanted = min(
            wanted,
            run.max_runs - timing.count,
            int((run.max_time_s - elapsed_s) / per_iteration) + 1,
        )
    return max(1, min(MAX_ROUND, wanted, MAX_SOAK_SAMPLES - timing.count))


def pilot_size(run: RunSettings, per_call_s: float | None, session_s: float) -> int:
    """The first round: num_runs; under a precision target, on a timer that pays a profiler session per
    round, enough to outlast it (20 samples of a 20 µs add: ~25 ms of H100 wall in their session)."""
    if run.target_precision is None or not per_call_s or not session_s:
        return run.num_runs
    wanted = int(SESSION_SHARE * session_s / per_call_s) + 1
    ceiling = min(run.max_runs, MAX_ROUND, int(run.max_time_s / 2 / per_call_s) + 1)
    return max(run.num_runs, min(wanted, ceiling))


def timed(timer: Timer, prepared: Prepared, run: RunSettings) -> Timing:
    """Warm-up (a soak's: at least min(1 s, min_duration_s / 5), as jax-bench), then `pilot_size`
    iterations, then, under min_duration_s or target_precision, rounds (one timer call, one trace)
    until `stop_reason`; the loop's start and length (post-processing included, warm-up not) kept
    on the timing."""
    agree = prepared.agree
    warm_until = time.perf_counter() + min(1.0, run.min_duration_s / 5)
    per_call = warm_up(prepared, run.warmup)
    while agree(time.perf_counter() < warm_until):
        warm_up(prepared, 1)
    session = timer.session_s if isinstance(timer, Described) else 0.0
    loop = _Loop()
    timing = last = timer(prepared, 0, int(agree(pilot_size(run, per_call, session))))
    if run.min_duration_s or run.target_precision is not None:
        # on while any process that runs these iterations with this one would go on
        while agree((reason := stop_reason(timing, run, time.perf_counter() - loop.start)) is None):
            interrupt.check()
            elapsed = time.perf_counter() - loop.start
            wanted = next_round(timing, run, elapsed, last.session_s)
            last = timer(prepared, 0, int(agree(wanted)))
            timing.extend(last)
        assert reason is not None  # every process has stopped, this one too
        timing.stop_reason = reason
    return loop.close(timing, timer, prepared)


class _Loop:
    """A timed loop's start (after a full collection, when due) and what its timing keeps of it."""

    def __init__(self) -> None:
        garbage.COLLECTOR.before_window()  # a full collection, when due, is not the loop's time
        self.at, self.start, self.waited = time.time(), time.perf_counter(), cpu_wait_s()

    def close(self, timing: Timing, timer: Timer, prepared: Prepared) -> Timing:
        """The loop's start, length and CPU wait; a `Described` timer's breakdown after, outside it."""
        timing.loop_started_at, timing.loop_s = self.at, time.perf_counter() - self.start
        now = cpu_wait_s()
        timing.loop_wait_s = None if now is None or self.waited is None else now - self.waited
        if isinstance(timer, Described) and timer.breakdown and not timing.kernels:
            timing.kernels = timer.breakdown(prepared)
        return timing


def soak_phases(timer: Timer, prepared: Prepared, run: RunSettings) -> Timing:
    """TPUMS's soak (soak_chunk = n), as upstream's executor: a traced window of n, untraced chunks of n
    (one wait each) for min_duration_s, then a traced worst window of n: the timing's samples."""
    n = run.soak_chunk or run.num_runs
    warm_up(prepared, run.warmup)
    loop = _Loop()
    baseline = timer(prepared, 0, n)
    chunks: list[float] = []
    soaking = time.perf_counter()
    while prepared.agree(not chunks or time.perf_counter() - soaking < run.min_duration_s):
        interrupt.check()
        chunks.append(timed_iterations(prepared, n, sustained=True)[0])
    worst = timer(prepared, 0, n)
    worst.soak = SoakPhases(baseline.samples_s, chunks, baseline.telemetry)
    worst.telemetry = merged_telemetry(baseline.telemetry, worst.telemetry)  # upstream's maxima
    worst.stop_reason = "min_duration"
    return loop.close(worst, timer, prepared)


def host_clock(timing: Timing, prepared: Prepared, run: RunSettings) -> None:
    """The host clock of an untraced, blocked loop (jax-bench's) in place of the device timer's wall
    samples and loop: a profiler's overhead stays out of it."""
    blocked = replace(run, warmup=0, target_precision=None)
    host = timed(wall_clock, prepared, blocked)
    timing.wall_samples_s = host.samples_s
    timing.loop_started_at, timing.loop_s = host.loop_started_at, host.loop_s
    timing.loop_wait_s = host.loop_wait_s


def audited(case: Case, found: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The audit's findings less those the op's work is made of; under `audit: strict`, an error row."""
    expected = get_spec(case.op).traits.audit_expects
    kept = tuple(f for f in found if f.name not in expected)
    if kept and case.run.audit == "strict":
        said = "; ".join(f"{f.name}: {f.detail}" for f in kept)
        raise CaseFailure(Status.ERROR, f"audit (strict): {said}")
    return kept


def measure(case: Case, prepared: Prepared, timer: Timer, device: DeviceInfo) -> Measurement:
    """Run once and check against the reference, then time the op and its companions."""
    out = prepared.call()
    prepared.sync(out)
    check = run_check(case.run.check, prepared, out)
    digest = prepared.digest(out)
    del out  # release the checked outputs before timing
    if case.run.soak_chunk:
        timing = soak_phases(timer, prepared, case.run)
    else:
        timing = timed(timer, prepared, case.run)
        if case.run.host_loop and timing.source != "wall_clock":
            host_clock(timing, prepared, case.run)
    timing.audit = audited(case, timing.audit)
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
        outputs_digest=digest,
        input_sets=prepared.input_sets,
    )
