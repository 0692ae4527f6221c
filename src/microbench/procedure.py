"""The one per-case procedure every backend follows: check numerics, then warm up and time."""

from __future__ import annotations

import numpy as np

from microbench.errors import CaseFailure
from microbench.measurement import DeviceInfo, Measurement, Prepared
from microbench.numerics import check_outputs, spread_rows
from microbench.plan import Case
from microbench.registry import OpSpec
from microbench.timers import Timer


def _digest(spec: OpSpec, case: Case, prepared: Prepared, out: object) -> dict[str, np.ndarray]:
    """A few output rows kept so two backends' results for the same case can be compared."""
    if spec.output_rows is None or spec.reference is None:
        return {}
    rows = spread_rows(spec.output_rows(case.params))
    names = spec.reference(prepared.inputs, case.params, rows[:1]).keys()
    return {name: np.asarray(prepared.fetch(out, name, rows)).astype(np.float64) for name in names}


def check_fits(spec: OpSpec, case: Case, capacity_bytes: float | None) -> None:
    """Refuse, before inputs are made, a case whose inputs and outputs alone exceed device memory."""
    if not capacity_bytes:
        return
    need = spec.bytes(case.params)
    if need > capacity_bytes:
        dims = "x".join(f"{k}={case.params[k]}" for k in ("m", "k", "n") if k in case.params)
        raise CaseFailure("oom", f"out of device memory at {dims}: inputs and outputs alone need "
                                 f"{need / 2**30:.1f} GiB, the framework can allocate {capacity_bytes / 2**30:.1f} GiB")


def measure(case: Case, spec: OpSpec, prepared: Prepared, timer: Timer, device: DeviceInfo) -> Measurement:
    """Run once and check against the reference (a wrong result is not timed unless check: flag)."""
    out = prepared.call()
    prepared.sync(out)
    check, err = "off", None
    if case.run.check != "off":
        try:
            err = check_outputs(spec, case.params, prepared.inputs, lambda name, rows: prepared.fetch(out, name, rows))
            check = "passed"
        except CaseFailure as failure:
            if case.run.check == "strict":
                raise
            check = f"flagged: {failure.reason}"
    digest = _digest(spec, case, prepared, out)
    out = None  # release the checked outputs before timing
    timing = timer(prepared, case.run.warmup, case.run.num_runs)
    return Measurement(timing=timing, device=device, max_rel_error=err, check=check,
                       compile_s=prepared.compile_s, implementation=prepared.implementation,
                       extra=dict(prepared.extra), outputs_digest=digest)
