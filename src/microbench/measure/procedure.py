"""The one per-case procedure every backend and suite follows: check, then warm up and time."""

from __future__ import annotations

from microbench.catalogue import OpSpec
from microbench.core.case import Case, shape_label
from microbench.core.types import CheckResult, DeviceInfo, Measurement, Prepared
from microbench.errors import CaseFailure, Status
from microbench.measure.timers import Timer


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


def measure(case: Case, prepared: Prepared, timer: Timer, device: DeviceInfo) -> Measurement:
    """Run once and check against the reference, then time the op and its companions."""
    out = prepared.call()
    prepared.sync(out)
    check = run_check(case.run.check, prepared, out)
    digest = prepared.digest(out)
    del out  # release the checked outputs before timing
    timing = timer(prepared, case.run.warmup, case.run.num_runs)
    companions = dict(prepared.known_timings)
    for name, companion in prepared.companions.items():
        if name not in companions:
            companions[name] = timer(companion, case.run.warmup, case.run.num_runs)
    extras = prepared.finish(timing, companions) if prepared.finish else None
    return Measurement(
        timing=timing,
        device=device,
        check=check,
        compile_s=prepared.compile_s,
        implementation=prepared.implementation,
        extras=extras,
        companion_timings=companions,
        outputs_digest=digest,
    )
