"""The Ironwood dialect's YAML schema: `benchmarks:` blocks of `benchmark_name` with parameters or
sweeps, and the run settings at the top level, per block or per parameter entry."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from accelbench.config.schema import CaseCap, PeakOverrides, RunSettingFields, Warmup


class Benchmark(RunSettingFields):  # type: ignore[valid-type,misc]
    """One entry of the Ironwood dialect's ``benchmarks:`` list."""

    benchmark_name: str
    benchmark_params: list[dict[str, Any]] | None = None
    benchmark_sweep_params: list[dict[str, Any]] | None = None
    warmup_tries: Warmup | None = None  # the reference's spelling of warmup (it ignored it)
    topology: str | None = None  # injected into params that lack it (all-to-all's bandwidth model)
    backend: str | list[str] | None = None
    csv_path: str | None = None
    trace_dir: str | None = None
    xla_dump_dir: str | None = None
    xlml_metrics_dir: str | None = None  # metrics_report.jsonl, one {metrics, dimensions} per case
    implementation: str | list[str] | None = None
    description: str | None = None


class IronwoodConfig(RunSettingFields):  # type: ignore[valid-type,misc]
    benchmarks: list[Benchmark] = Field(min_length=1)
    peaks: PeakOverrides | None = None
    max_cases: CaseCap | None = None
    backend: str | list[str] | None = None
    implementation: str | list[str] | None = None  # each benchmark's, where it names none
