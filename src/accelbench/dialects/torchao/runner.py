"""The torchao rows in the formats of torchao's own runner, for what was written against it: its
results CSV and the CI dashboard's records (PyTorch OSS benchmark database, v3)."""

from __future__ import annotations

import csv
import json
import os
import sys
import time
from typing import Any

from accelbench.catalogue import P, get_spec
from accelbench.dialects.torchao import DASHBOARD, TORCHAO_CSV
from accelbench.errors import Status, UserError, visible
from accelbench.ops.torchao import (
    TorchaoExtras,
    TorchaoInferenceParams,
    TorchaoModelParams,
    TorchaoTrainingExtras,
    TorchaoTrainingParams,
)
from accelbench.results.reading import read_rows
from accelbench.results.records import Row
from accelbench.results.sinks import RunContext, Sink, register_sink
from accelbench.results.sinks.seed_json import scaled
from accelbench.results.writer import check_new_file, write_atomically, write_json_atomically

MODES = {"torchao_inference": "inference", "torchao_training": "training"}

# (metric name, unit): one dashboard record per metric and case
METRICS = (
    ("Fwd Speedup (x)", "x"),
    ("Bfloat16 Fwd Time (ms)", "ms"),
    ("Quantized Fwd Time (ms)", "ms"),
    ("Allocated Memory (MB)", "MB"),
)


def _cell(value: Any) -> Any:
    """Floats to six significant digits (a millisecond time to the nanosecond), text `visible`."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return visible(value) if isinstance(value, str) else value


def _ms(seconds: float | None) -> float | None:
    return scaled(seconds, 1e3)  # the runner's milliseconds


def _mb(nbytes: int | None) -> float | None:
    return scaled(nbytes, 2**-20)  # the runner's MB: torch's memory counters over 2**20


def _params(row: Row, kind: type[P]) -> P:
    params = get_spec(row.identity.op).resolve(row.params.as_dict(), "torchao row")
    assert isinstance(params, kind)
    return params


def _compiled(p: TorchaoModelParams) -> bool:
    return p.compile_mode not in ("", "off")


def _mode(p: TorchaoModelParams) -> str:
    """The runner's spelling of the compile setting ("false" when the model ran eagerly)."""
    return p.compile_mode if _compiled(p) else "false"


def _case(
    p: TorchaoInferenceParams | TorchaoTrainingParams, variant: dict[str, Any]
) -> dict[str, Any]:
    """The case in the runner's names and order (variant after recipe): both CSVs' first columns."""
    compiled = "_compile" if _compiled(p) else ""
    return {
        "name": f"benchmark_{p.recipe}_{p.model_type}_m{p.m}_k{p.k}_n{p.n}{compiled}",
        "quantization": p.recipe,
        **variant,
        "m": p.m,
        "k": p.k,
        "n": p.n,
        "high_precision_dtype": f"torch.{p.high_precision_dtype}",
        "torch_compile_mode": _mode(p),
        "device": p.device,
        "model_type": p.model_type,
        "output_dir": p.output_dir,
    }


def _visualization(x: TorchaoExtras | None) -> str:
    note = (x.memory_profile_note if x else None) or ""
    return note.removeprefix("visualisation: ") if note.startswith("visualisation: ") else ""


def inference_line(row: Row) -> dict[str, Any]:
    p = _params(row, TorchaoInferenceParams)
    x = row.extras if isinstance(row.extras, TorchaoExtras) else None
    memory = {  # the quantized model's; reserved and fragmentation as torchao's profiling has them
        "max_memory_allocated_mb": _mb(getattr(x, "quantized_peak_memory_bytes", None)),
        "max_memory_reserved_mb": _mb(getattr(x, "quantized_peak_reserved_bytes", None)),
        "fragmentation_mb": _mb(getattr(x, "quantized_fragmentation_bytes", None)),
    }
    return {
        **_case(p, {"sparsity": "" if p.sparsity == "none" else p.sparsity}),
        "enable_profiler": p.enable_profiler,
        "enable_memory_profiler": p.enable_memory_profiler,
        "baseline_model_eager_inference_time_in_ms": _ms(x.baseline_eager_s if x else None),
        "quantized_model_eager_inference_time_in_ms": _ms(x.quantized_eager_s if x else None),
        "baseline_model_compiled_inference_time_in_ms": _ms(x.baseline_compiled_s if x else None),
        "quantized_model_compiled_inference_time_in_ms": _ms(x.quantized_compiled_s if x else None),
        "eager speedup on baseline": x.eager_speedup_ratio if x else None,
        "compile speedup on baseline": x.compiled_speedup_ratio if x else None,
        "eager vs compile speedup": x.compiled_over_eager_speedup_ratio if x else None,
        "profiler_json_path": x.profiler_trace_path if x else None,
        "memory_profile_path": x.memory_profile_path if x else None,
        "memory_visualization_path": _visualization(x),
        "memory_stats": json.dumps(memory) if memory["max_memory_allocated_mb"] is not None else "",
    }


def training_line(row: Row) -> dict[str, Any]:
    p = _params(row, TorchaoTrainingParams)
    x = row.extras if isinstance(row.extras, TorchaoTrainingExtras) else None
    scaling = {
        "scaling_granularity": p.scaling_granularity,
        "scaling_type_input": p.scaling_type_input,
        "scaling_type_weight": p.scaling_type_weight,
        "scaling_type_grad_output": p.scaling_type_grad_output,
        "use_fast_accum": p.use_fast_accum,
    }
    # the training branch never released a CSV; its columns follow the inference ones' conventions
    return {
        **_case(p, scaling),
        "baseline_model_fwd_bwd_time_in_ms": _ms(x.baseline_s if x else None),
        "float8_model_fwd_bwd_time_in_ms": _ms(x.float8_s if x else None),
        "speedup on baseline": x.speedup_ratio if x else None,
        "tops": row.derived.tflop_per_s,
    }


LINES = {"inference": inference_line, "training": training_line}


def unused_path(path: str) -> str:
    """`path`, or `path` with _1, _2, ... before the suffix: nothing is replaced."""
    stem, suffix = os.path.splitext(path)
    candidate, i = path, 0
    while os.path.exists(candidate):
        i += 1
        candidate = f"{stem}_{i}{suffix}"
    return candidate


def write_runner_csvs(rows: list[Row], now: float | None = None) -> list[str]:
    """The ok torchao rows as the runner's `<output_dir>/<benchmark_mode>/results_<ddmmYYYY_HHMMSS>.csv`."""
    stamp = time.strftime("%d%m%Y_%H%M%S", time.localtime(now))
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        mode = MODES.get(row.identity.op)
        if mode and row.ok:
            groups.setdefault((_params(row, TorchaoModelParams).output_dir, mode), []).append(row)
    written = []
    for (output_dir, mode), group in groups.items():
        lines = [{k: _cell(v) for k, v in LINES[mode](r).items()} for r in group]
        path = unused_path(os.path.join(output_dir, mode, f"results_{stamp}.csv"))

        def write(f: Any, lines: list[dict[str, Any]] = lines) -> None:
            writer = csv.DictWriter(f, fieldnames=tuple(lines[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(lines)

        write_atomically(path, write)
        written.append(path)
    return written


DASHBOARD_OP = "torchao_inference"  # the dashboard holds inference records only


def to_oss_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Four records per ok inference case, as the CI runner wrote them (compiled times if compiled)."""
    records = []
    for row in rows:
        if row.status is not Status.OK or row.identity.op != DASHBOARD_OP:
            continue
        p = _params(row, TorchaoInferenceParams)
        x = row.extras
        if not isinstance(x, TorchaoExtras):  # no figures: no records
            continue
        compiled = _compiled(p)
        values = (
            x.compiled_speedup_ratio if compiled else x.eager_speedup_ratio,
            _ms(x.baseline_compiled_s if compiled else x.baseline_eager_s),
            _ms(x.quantized_compiled_s if compiled else x.quantized_eager_s),
            _mb(x.quantized_peak_memory_bytes),
        )
        extra: dict[str, Any] = {
            # where it ran: a config's cuda falls back to the CPU on a machine without one
            "device": "cpu" if row.environment.platform == "cpu" else p.device,
            "arch": row.environment.device_kind,
            "torch_compile_mode": _mode(p),
        }
        if p.sparsity != "none":
            extra["sparsity"] = p.sparsity
        for (metric, unit), value in zip(METRICS, values, strict=True):
            if value is None:
                continue
            records.append(
                {
                    "benchmark": {
                        "name": "micro-benchmark api",
                        "mode": "inference",
                        "dtype": p.recipe,
                        "extra_info": dict(extra),
                    },
                    "model": {
                        "name": f"{p.m}-{p.k}-{p.n}",  # the tutorial's M-K-N (the recipe: dtype)
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
    return RunnerCsv() if context.options.flag(TORCHAO_CSV) else None


class Dashboard(Sink):
    """`dashboard --output FILE`: every planned case's records, from the results files (a resumed
    run's earlier cases too), written when all succeeded."""

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
    path = context.options.flag(DASHBOARD)
    return Dashboard(path, context.cases, context.options.overwrite) if path else None
