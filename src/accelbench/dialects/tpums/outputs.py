"""TPUMS's summary.csv and detailed.json for the cases a TPUMS file planned (benchmarks/files.py writes
them): TPUMS's names, both timing domains, its telemetry and console matrices."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from accelbench.benchmarks.base import Upstream
from accelbench.benchmarks.files import Generation, UpstreamStats, device_span_ms, upstream_files
from accelbench.catalogue import params_of
from accelbench.core.case import Case
from accelbench.dialects.tpums.metrics import nvml_telemetry, tpums_metrics, unmeasured_device
from accelbench.dialects.tpums.report import console_report
from accelbench.ops import collective_model as collectives
from accelbench.results.records import Row
from accelbench.results.sinks import RunContext, Sink, register_sink


def params(case: Case, origin: Upstream, fields: Any, ours: bool = False) -> dict[str, Any]:
    """The case's fields in TPUMS's names (a soak's samples_per_run: soak_chunk); `ours`: ours too."""
    assert origin.tpums is not None
    out = origin.tpums.written(fields, ours)
    if origin.tpums.soak:
        out["samples_per_run"] = case.run.soak_chunk
    return out


def given_fields(case: Case) -> tuple[str, dict[str, Any]]:
    """The case's TPUMS name and fields (`validate --json`'s view of a file)."""
    origin: Upstream = case.origin
    return origin.name, params(case, origin, origin.fields, ours=True)


def _metrics(
    case: Case, origin: Upstream, fields: Any, host_ms: list[float], row: Row
) -> dict[str, Any]:
    """TPUMS's metrics in both timing domains, then a TPU's firmware figures (a GPU's NVML ones)."""
    bench = origin.benchmark
    group = (
        collectives.groups(case.op, params_of(case, collectives.CollectiveParams))[0]
        if bench.collective
        else None
    )
    domains, figures = {}, {}
    device = device_span_ms(row) if fields.xprof_timing else []
    for domain, samples in (("wall_clock", host_ms), ("xprof", device)):
        if samples:
            up = UpstreamStats.of(samples)
            domains[domain] = (up.p50_ms, up.p90_ms, up.avg_ms, up.std_ms)
            figures[domain] = bench.figures(fields, up.p50_ms / 1e3, origin.group_size)
    device_kind = row.environment.device_kind
    metrics = tpums_metrics(origin, fields, domains, figures, device_kind, group, _soak(row))
    if fields.xprof_timing and not device:
        metrics.update(unmeasured_device(metrics))
    metrics.update(row.series.telemetry or nvml_telemetry(row.series.gpu_monitor))
    return metrics


def _soak(row: Row) -> dict[str, tuple[float, float]] | None:
    """A soak's initial and sustained ms: the first and last untraced chunks on the host clock, the
    baseline and worst windows on the device's."""
    t = row.timing
    if t.soak_first_chunk_s is None or t.soak_last_chunk_s is None:
        return None
    phases = {"wall_clock": (t.soak_first_chunk_s * 1e3, t.soak_last_chunk_s * 1e3)}
    worst = device_span_ms(row)
    if worst and t.soak_baseline_median_s is not None:
        phases["xprof"] = (t.soak_baseline_median_s * 1e3, float(np.percentile(worst, 50)))
    return phases


def _flags(case: Case) -> dict[str, Any]:
    """The XLA and libtpu flags the case ran with (its process's, or the environment's)."""
    env = {**os.environ, **dict(case.process_env)}
    return {
        "xla_flags": env.get("XLA_FLAGS", ""),
        "libtpu_init_args": env.get("LIBTPU_INIT_ARGS", ""),
    }


TPUMS = Generation(params, _metrics, _flags, ket_and_throughput=False, console=console_report)


@register_sink("tpums", order=30)
def tpums_files(context: RunContext) -> Sink | None:
    return upstream_files(context, TPUMS, lambda origin: origin.tpums is not None)
