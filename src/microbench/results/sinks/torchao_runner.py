"""The torchao suite's rows in the formats of torchao's own runner: its results CSV and the CI
dashboard's records (PyTorch OSS benchmark database, v3). The richer rows stay the default output;
these are for the dashboards and scripts already written against the runner
(../shared/reference/UPSTREAM_TORCHAO.md, "Outputs")."""

from __future__ import annotations

import csv
import json
import os
import sys
import time
from typing import Any

from microbench.errors import Status, UserError
from microbench.results.records import Row
from microbench.results.sinks import RunContext, Sink, register_sink
from microbench.results.sinks.seed_json import scaled
from microbench.results.writer import (
    check_new_file,
    read_rows,
    write_atomically,
    write_json_atomically,
)

# what a case is, in the runner's names and order; both CSVs carry it
CASE_COLUMNS = (
    "m",
    "k",
    "n",
    "high_precision_dtype",
    "torch_compile_mode",
    "device",
    "model_type",
    "output_dir",
)
INFERENCE_COLUMNS = (
    "name",
    "quantization",
    "sparsity",
    *CASE_COLUMNS,
    "enable_profiler",
    "enable_memory_profiler",
    "baseline_model_eager_inference_time_in_ms",
    "quantized_model_eager_inference_time_in_ms",
    "baseline_model_compiled_inference_time_in_ms",
    "quantized_model_compiled_inference_time_in_ms",
    "eager speedup on baseline",
    "compile speedup on baseline",
    "eager vs compile speedup",
    "profiler_json_path",
    "memory_profile_path",
    "memory_visualization_path",
    "memory_stats",
)
# the training branch never released a CSV; these columns follow the inference ones' conventions
TRAINING_COLUMNS = (
    "name",
    "quantization",
    "scaling_granularity",
    "scaling_type_input",
    "scaling_type_weight",
    "scaling_type_grad_output",
    "use_fast_accum",
    *CASE_COLUMNS,
    "baseline_model_fwd_bwd_time_in_ms",
    "float8_model_fwd_bwd_time_in_ms",
    "speedup on baseline",
    "tops",
)
MODES = {"torchao_inference": "inference", "torchao_training": "training"}

# (metric name, unit): one dashboard record per metric and case
METRICS = (
    ("Fwd Speedup (x)", "x"),
    ("Bfloat16 Fwd Time (ms)", "ms"),
    ("Quantized Fwd Time (ms)", "ms"),
    ("Allocated Memory (MB)", "MB"),
)


def _cell(value: Any) -> Any:
    """Floats to six significant digits (a millisecond time to the nanosecond), the rest as given."""
    return f"{value:.6g}" if isinstance(value, float) else value


def _ms(row: dict[str, Any], column: str) -> float | None:
    return scaled(row.get(column), 1e3)  # the runner's milliseconds


def _mb(row: dict[str, Any], column: str) -> float | None:
    return scaled(row.get(column), 2**-20)  # the runner's MB: torch's memory counters over 2**20


def _compiled(row: dict[str, Any]) -> bool:
    return row.get("compile_mode") not in (None, "", "off")


def _mode(row: dict[str, Any]) -> str:
    """The runner's spelling of the compile setting ("false" when the model ran eagerly)."""
    return str(row["compile_mode"]) if _compiled(row) else "false"


def _name(row: dict[str, Any]) -> str:
    compiled = "_compile" if _compiled(row) else ""
    return f"benchmark_{row['recipe']}_{row['model_type']}_m{row['m']}_k{row['k']}_n{row['n']}{compiled}"


def _visualization(row: dict[str, Any]) -> str:
    note = str(row.get("memory_profile_note") or "")
    return note.removeprefix("visualisation: ") if note.startswith("visualisation: ") else ""


def inference_line(row: dict[str, Any]) -> dict[str, Any]:
    peak = _mb(row, "quantized_peak_memory_bytes")
    return {
        "name": _name(row),
        "quantization": row["recipe"],
        "sparsity": "" if row.get("sparsity") in (None, "none") else row["sparsity"],
        "m": row["m"],
        "k": row["k"],
        "n": row["n"],
        "high_precision_dtype": f"torch.{row['high_precision_dtype']}",
        "torch_compile_mode": _mode(row),
        "device": row["device"],
        "model_type": row["model_type"],
        "output_dir": row["output_dir"],
        "enable_profiler": row["enable_profiler"],
        "enable_memory_profiler": row["enable_memory_profiler"],
        "baseline_model_eager_inference_time_in_ms": _ms(row, "baseline_eager_s"),
        "quantized_model_eager_inference_time_in_ms": _ms(row, "quantized_eager_s"),
        "baseline_model_compiled_inference_time_in_ms": _ms(row, "baseline_compiled_s"),
        "quantized_model_compiled_inference_time_in_ms": _ms(row, "quantized_compiled_s"),
        "eager speedup on baseline": row.get("eager_speedup_ratio"),
        "compile speedup on baseline": row.get("compiled_speedup_ratio"),
        "eager vs compile speedup": row.get("compiled_over_eager_speedup_ratio"),
        "profiler_json_path": row.get("profiler_trace_path"),
        "memory_profile_path": row.get("memory_profile_path"),
        "memory_visualization_path": _visualization(row),
        "memory_stats": json.dumps({"max_memory_allocated_mb": peak}) if peak is not None else "",
    }


def training_line(row: dict[str, Any]) -> dict[str, Any]:
    tflops = row.get("tflop_per_s")
    return {
        **{c: row.get(c) for c in TRAINING_COLUMNS if c in row},
        "name": _name(row),
        "quantization": row["recipe"],
        "high_precision_dtype": f"torch.{row['high_precision_dtype']}",
        "torch_compile_mode": _mode(row),
        "baseline_model_fwd_bwd_time_in_ms": _ms(row, "baseline_s"),
        "float8_model_fwd_bwd_time_in_ms": _ms(row, "float8_s"),
        "speedup on baseline": row.get("speedup_ratio"),
        "tops": tflops,
    }


LINES = {
    "inference": (INFERENCE_COLUMNS, inference_line),
    "training": (TRAINING_COLUMNS, training_line),
}


def unused_path(path: str) -> str:
    """`path`, or `path` with _1, _2, ... before the suffix when it exists: nothing is replaced."""
    stem, suffix = os.path.splitext(path)
    candidate, i = path, 0
    while os.path.exists(candidate):
        i += 1
        candidate = f"{stem}_{i}{suffix}"
    return candidate


def write_runner_csvs(rows: list[Row], now: float | None = None) -> list[str]:
    """The ok torchao rows as the runner's `<output_dir>/<benchmark_mode>/results_<ddmmYYYY_HHMMSS>.csv`."""
    stamp = time.strftime("%d%m%Y_%H%M%S", time.localtime(now))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for typed in rows:
        mode = MODES.get(typed.identity.op)
        if mode and typed.ok:
            row = typed.as_dict()
            groups.setdefault((str(row["output_dir"]), mode), []).append(row)
    written = []
    for (output_dir, mode), group in groups.items():
        columns, line = LINES[mode]
        path = unused_path(os.path.join(output_dir, mode, f"results_{stamp}.csv"))

        def write(f: Any, columns: tuple[str, ...] = columns, group: list[Any] = group) -> None:
            writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: _cell(v) for k, v in line(r).items()} for r in group)

        write_atomically(path, write)
        written.append(path)
    return written


DASHBOARD_OP = "torchao_inference"  # the dashboard holds inference records only


def to_oss_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Four records per ok inference case, as the CI runner wrote them: compiled times where the case
    was compiled (eager otherwise), peak allocated memory where the device reports it."""
    records = []
    for typed in rows:
        if typed.status is not Status.OK or typed.identity.op != DASHBOARD_OP:
            continue
        row = typed.as_dict()
        when = "compiled" if _compiled(row) else "eager"
        values = (
            row.get(f"{when}_speedup_ratio"),
            _ms(row, f"baseline_{when}_s"),
            _ms(row, f"quantized_{when}_s"),
            _mb(row, "quantized_peak_memory_bytes"),
        )
        extra: dict[str, Any] = {
            "device": row.get("device"),
            "arch": row.get("device_kind"),
            "torch_compile_mode": _mode(row),
        }
        if row.get("sparsity") not in (None, "", "none"):
            extra["sparsity"] = row["sparsity"]
        for (metric, unit), value in zip(METRICS, values, strict=True):
            if value is None:
                continue
            records.append(
                {
                    "benchmark": {
                        "name": "micro-benchmark api",
                        "mode": "inference",
                        "dtype": row["recipe"],
                        "extra_info": dict(extra),
                    },
                    "model": {
                        "name": f"{row['recipe']}-{row['m']}-{row['k']}-{row['n']}",
                        "type": "micro-benchmark custom layer",
                        "origins": ["torchao"],
                    },
                    "metric": {
                        "name": metric,
                        "benchmark_values": [value],
                        "target_value": 0.0,
                        "extra_info": {"unit": unit},
                    },
                    "runners": [],
                    "dependencies": {},
                }
            )
    return records


class RunnerCsv(Sink):
    """`--torchao-csv`: this run's ok torchao rows as the runner's CSV, when the run ends."""

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if not interrupted:
            for path in write_runner_csvs(rows):
                print(f"torchao runner CSV: {path}", file=sys.stderr)


@register_sink("torchao_csv", order=30)
def runner_csv(context: RunContext) -> Sink | None:
    return RunnerCsv() if context.options.torchao_csv else None


class Dashboard(Sink):
    """`microbench dashboard --output FILE`: the CI dashboard's records of every planned case, from the
    results files (so cases an earlier, resumed run finished are included), written when all succeeded."""

    def __init__(self, path: str, cases: tuple[Any, ...], overwrite: bool) -> None:
        self.path = path
        self.cases = cases
        self.overwrite = overwrite

    def open(self) -> None:
        if not any(c.op == DASHBOARD_OP for c in self.cases):  # refused before anything runs
            raise UserError(
                f"the dashboard's records are of torchao inference cases ({DASHBOARD_OP}) and this "
                "config has none; run it with `microbench run`",
                key="--output",
            )
        check_new_file(self.path, "--output", self.overwrite)

    def close(self, rows: list[Row], interrupted: bool) -> None:
        if interrupted or any(r.status.failed for r in rows):
            return
        ids = {c.id for c in self.cases}
        paths = sorted({c.outputs.csv_path for c in self.cases})
        found = [r for path in paths for r in read_rows(path) if r.identity.case_id in ids]
        write_json_atomically(self.path, to_oss_records(found))
        print(f"dashboard records: {self.path}", file=sys.stderr)


@register_sink("dashboard", order=40)
def dashboard(context: RunContext) -> Sink | None:
    path = context.options.dashboard
    return Dashboard(path, context.cases, context.options.overwrite) if path else None
