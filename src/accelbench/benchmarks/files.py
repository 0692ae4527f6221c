"""The reference harness's `summary.csv` and `detailed.json`: each case upstream's record, ours under
`microbench`. Unlike upstream's, both are rewritten whole (atomically) after every case, so a crash
loses none, and belong to one run of the run store (`c.2.csv` -> `c.2.summary.csv`)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from accelbench.benchmarks.base import Upstream
from accelbench.benchmarks.flags import UPSTREAM_FILES
from accelbench.catalogue import get_spec
from accelbench.core.case import Case
from accelbench.errors import UserError, visible
from accelbench.platform import processes
from accelbench.platform.environment import installed
from accelbench.results.records import Row, used_devices
from accelbench.results.run_store import numbered
from accelbench.results.sinks import RunContext, Sink
from accelbench.results.writer import check_new_file, write_atomically
from accelbench.specs import HardwareStats

SUMMARY, DETAILED = "summary.csv", "detailed.json"
OURS_KEY = "microbench"  # detailed.json: this project's additions, under one key of their own
DEVICE_CLOCKS = ("xprof", "cupti", "cuda_event", "cuda_graph")  # timing sources on a device clock
RECORDED = 999  # upstream records calls 1-999 of its loop
# metadata summary.csv holds under other names, or not at all
NOT_FLATTENED = ("benchmark_name", "test_name", "start_time", "end_time", "params", "device_info")


@dataclass(frozen=True)
class UpstreamStats:
    """calculate_metrics: above 3 samples, those outside 1.5 IQR of the quartiles are left out."""

    p50_ms: float
    p90_ms: float
    avg_ms: float
    std_ms: float

    @classmethod
    def of(cls, samples_ms: list[float]) -> UpstreamStats:
        x = np.asarray(samples_ms, dtype=np.float64)
        if x.size == 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        if x.size > 3:
            q1, q3 = np.percentile(x, [25, 75])
            low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
            kept = x[(x >= low) & (x <= high)]
            x = kept if kept.size else x
        p50, p90 = np.percentile(x, [50, 90])
        return cls(float(p50), float(p90), float(x.mean()), float(x.std()))


def ms(samples_s: list[float]) -> list[float]:
    return [s * 1e3 for s in samples_s]


def device_span_ms(row: Row) -> list[float]:
    """The device's time per iteration as upstream's trace parser measures it (first marked op's
    start to the last one's end), where the row has a device clock."""
    if not (row.timing.timing_source or "").startswith(DEVICE_CLOCKS):
        return []
    return ms(row.series.span_samples_s or row.series.samples_s)


def device_info(row: Row) -> dict[str, Any]:
    env = row.environment
    versions = installed()
    local = env.device_count
    info: dict[str, Any] = {
        "platform": env.platform,
        "device_count": (local or 0) * processes.count(),
        "local_device_count": local,
        "jax_version": versions.get("jax"),
    }
    if libtpu := versions.get("libtpu") or versions.get("libtpu-nightly"):
        info["libtpu_version"] = libtpu
    info["chip_version"] = env.device_kind
    return info


def _iso(epoch_s: float) -> str:
    """UTC, microseconds, as upstream's datetime.now(tz=utc).isoformat() gives it."""
    return _dt.datetime.fromtimestamp(epoch_s, tz=_dt.timezone.utc).isoformat()


def _ours(case: Case, origin: Upstream, row: Row) -> dict[str, Any]:
    samples_ms = ms(row.series.samples_s)
    spec, bench = get_spec(case.op), origin.benchmark
    name = {"name_given": origin.tpums.name} if origin.tpums else {}
    return {
        **{p.name: getattr(origin.fields, p.name) for p in bench.ours},
        "generation": "tpums" if origin.tpums else "jax-bench",
        **name,
        "conditions": origin.conditions,
        "cache": case.run.cache,
        "used_device_count": used_devices(row),
        "timing_source": row.timing.timing_source,
        "device_p50_ms": float(np.percentile(samples_ms, 50)) if samples_ms else None,
        "device_p90_ms": float(np.percentile(samples_ms, 90)) if samples_ms else None,
        "device_avg_ms": float(np.mean(samples_ms)) if samples_ms else None,
        "check": row.timing.check,
        "model_flops": spec.flops(case.params),
        "model_bytes": spec.bytes(case.params),
        "backend": f"{case.backend}:{row.identity.implementation}",
        "run_id": bench.run_id(origin.fields),
        "case_id": row.identity.case_id,
    }


@dataclass(frozen=True)
class Generation:
    """How one generation's entries differ (params in its names; metrics from them and host ms)."""

    params: Callable[[Case, Upstream, Any], dict[str, Any]]
    metrics: Callable[[Case, Upstream, Any, list[float], Row], dict[str, Any]]
    metadata: Callable[[Case], dict[str, Any]] = lambda case: {}
    ket_and_throughput: bool = True
    console: Callable[[list[dict[str, Any]]], list[str]] = lambda entries: []


def detailed_entry(case: Case, row: Row, generation: Generation) -> dict[str, Any]:
    """One case as upstream's detailed.json holds it, this project's additions under `microbench`."""
    origin: Upstream = case.origin
    bench = origin.benchmark
    # what ran: --num-runs and the like change the run settings after the config gave its fields
    ran = replace(origin.fields, num_runs=case.run.num_runs, warmup_tries=case.run.warmup)
    host_ms = ms(row.series.wall_samples_s or row.series.samples_s)
    metrics = generation.metrics(case, origin, ran, host_ms[:RECORDED], row)
    metrics.update(total_duration_s=row.timing.timed_loop_s, actual_runs=len(host_ms))
    started = row.loop_started or time.time()
    ended = started + (row.timing.timed_loop_s or 0.0)
    return {
        "metadata": {
            "benchmark_name": bench.class_name,
            "test_name": f"{bench.class_name}_{int(ended)}",
            "start_time": _iso(started),
            "end_time": _iso(ended),
            "params": generation.params(case, origin, ran),
            "device_info": device_info(row),
            **generation.metadata(case),
        },
        "metrics": metrics,
        "raw_times_ms": host_ms[:RECORDED],
        OURS_KEY: _ours(case, origin, row),
    }


def summary_row(entry: dict[str, Any], ket_and_throughput: bool = True) -> dict[str, Any]:
    """A detailed entry as upstream flattens it (a metric overwrites a like-named param), then ours."""
    meta, metrics = entry["metadata"], entry["metrics"]
    row = {**meta["params"], **metrics, **meta["device_info"]}
    row.update({k: v for k, v in meta.items() if k not in NOT_FLATTENED})
    row.update(benchmark=meta["benchmark_name"], test_name=meta["test_name"])
    if ket_and_throughput:  # a later generation dropped these
        row.update(
            KET_ms=metrics.get("avg_ms", 0.0),
            throughput=metrics.get("tflops_per_sec", metrics.get("bandwidth_gb_s", 0.0)),
        )
    row["start"] = meta["start_time"]
    ours = {k: v for k, v in entry.get(OURS_KEY, {}).items() if k not in row}
    return {**row, **ours}


def write_summary(f: IO[str], entries: list[dict[str, Any]], ket: bool) -> None:
    """pandas writes it, as upstream's does: the same cells (floats, booleans, None, dicts)."""
    import pandas as pd

    rows = [  # a name's control characters spelt out, as in every other CSV
        {k: visible(v) if isinstance(v, str) else v for k, v in summary_row(e, ket).items()}
        for e in entries
    ]
    added = {k for e in entries for k in e.get(OURS_KEY, {})}
    upstream = list(dict.fromkeys(k for r in rows for k in r if k not in added))
    ours = list(dict.fromkeys(k for r in rows for k in r if k not in upstream))
    pd.DataFrame(rows)[[*upstream, *ours]].to_csv(f, index=False)


def _earlier_entries(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as error:
        raise UserError(f"cannot resume from it: {error}", key=f"detailed.json '{path}'") from None
    if not isinstance(entries, list):
        raise UserError("cannot resume from it: not a JSON list", key=f"detailed.json '{path}'")
    return entries


def pair_beside(results_csv: str) -> tuple[str, str]:
    """A run's pair beside its results file: `c.csv` -> `c.summary.csv`, `c.detailed.json`."""
    stem = str(Path(results_csv).with_suffix(""))
    return f"{stem}.{SUMMARY}", f"{stem}.{DETAILED}"


@dataclass(eq=False)
class UpstreamFiles(Sink):
    restores = True  # the pair is rewritten after the rows: a kill between them is mended on resume

    generation: Generation
    summary: str
    detailed: str
    resume: bool
    overwrite: bool
    claimed: bool = False  # created empty, exclusively, for this run (the upstream names)
    tables_to: IO[str] | None = None  # stdout, unless it carries a machine format (--format csv)
    entries: list[dict[str, Any]] = field(default_factory=list)
    foreign_presets: set[str] = field(default_factory=set)  # presets said to be another chip's

    def open(self) -> None:
        if self.resume:
            self.entries = _earlier_entries(self.detailed)
        if self.claimed:
            return
        for path, key in ((self.summary, "summary.csv"), (self.detailed, "detailed.json")):
            check_new_file(path, key, overwrite=self.overwrite or self.resume)

    def holds(self, case: Case) -> bool:
        return any(e.get(OURS_KEY, {}).get("case_id") == case.id for e in self.entries)

    def row(self, case: Case, row: Row) -> None:
        if not isinstance(case.origin, Upstream) or not row.ok:
            return
        self._check_preset(case.origin.hardware, row.environment.device_kind)
        self.entries.append(detailed_entry(case, row, self.generation))
        ket = self.generation.ket_and_throughput
        write_atomically(self.detailed, lambda f: json.dump(self.entries, f, indent=2, default=str))
        write_atomically(self.summary, lambda f: write_summary(f, self.entries, ket))

    def _check_preset(self, stats: HardwareStats | None, device_kind: str | None) -> None:
        """Say once per preset when its peaks are another chip's (the summary cannot show it)."""
        if stats is None or stats.describes(device_kind) or stats.name in self.foreign_presets:
            return
        self.foreign_presets.add(stats.name)
        print(
            f"warning: system '{stats.name}' gives {', '.join(stats.chips)} peaks; this run is on "
            f"{device_kind}: summary.csv's roofline fields compare it with that chip, not its own peaks",
            file=sys.stderr,
        )

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if self.entries:
            for table in self.generation.console(self.entries):  # TPUMS's tables and matrices
                out = self.tables_to or sys.stdout
                print("\n" + "\n".join(visible(line) for line in table.splitlines()), file=out)
            print(visible(f"jax-bench summary: {self.summary}, {self.detailed}"), file=sys.stderr)
        elif self.claimed:  # nothing measured: the names go back
            for path in (self.summary, self.detailed):
                with contextlib.suppress(OSError):
                    if os.lstat(path).st_size == 0:
                        os.unlink(path)


def _claim_upstream_names(directory: str, resume: bool, overwrite: bool) -> tuple[str, str]:
    """The upstream command lines' pair in the output folder, the first number free, created empty
    and exclusively (two runs never share one); --resume and --overwrite take the latest pair."""

    def pair(n: int) -> tuple[str, str]:
        summary = numbered(os.path.join(directory, SUMMARY), n)
        return summary, numbered(os.path.join(directory, DETAILED), n)

    while True:  # until a number is claimed: another run may take one between scan and claim
        n = 1
        while any(os.path.lexists(p) for p in pair(n)):
            n += 1
        if resume or overwrite:
            return pair(max(1, n - 1))
        os.makedirs(directory or ".", exist_ok=True)
        made: list[str] = []
        try:
            for path in pair(n):
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
                os.close(os.open(path, flags, 0o666))
                made.append(path)
            return pair(n)
        except FileExistsError:  # another run took the number meanwhile: scan again
            for path in made:
                os.unlink(path)


def upstream_files(
    context: RunContext, generation: Generation, mine: Callable[[Upstream], bool]
) -> Sink | None:
    """A generation's pair, for runs with cases a file of that generation named."""
    named = [c for c in context.cases if isinstance(c.origin, Upstream) and mine(c.origin)]
    if not named:
        return None
    options = context.options
    tables_to = None if options.output_format == "table" else sys.stderr
    claim = options.flag(UPSTREAM_FILES)
    folder = os.path.dirname(named[0].outputs.csv_path) or "."
    try:
        pair = (
            _claim_upstream_names(folder, options.resume, options.overwrite)
            if claim
            else pair_beside(named[0].outputs.csv_path)
        )
    except OSError as error:
        raise UserError(
            f"cannot write in it: {error.strerror}", key=f"--output '{folder}'"
        ) from None
    claimed = claim and not options.resume
    return UpstreamFiles(generation, *pair, options.resume, options.overwrite, claimed, tables_to)
