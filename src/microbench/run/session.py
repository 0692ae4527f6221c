"""One run of one config: plan, check outputs are writable, execute every case, summarise."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from collections import defaultdict
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from microbench.catalogue import get_spec
from microbench.config.dialects import default_csv, plan_cases
from microbench.config.loader import LoadedConfig, load_config
from microbench.core.case import Case, shape_label
from microbench.errors import UserError
from microbench.platform import interrupt, processes
from microbench.platform.backends import run_order
from microbench.platform.environment import base_environment, new_run_id, timestamp
from microbench.results.columns import header
from microbench.results.console import distinguishing, fixed, table_console
from microbench.results.remote import Staging
from microbench.results.seed_formats import to_seed_records
from microbench.results.torchao_runner import to_oss_records, write_runner_csvs
from microbench.results.writer import ResultFile, check_writable, read_rows, write_json_atomically
from microbench.results.xlml import REPORT, append_record, metrics_record
from microbench.run.runner import PairTracker, execute, execute_isolated

console = Console(stderr=True)


def load_and_plan(
    path: str,
    *,
    output_dir: str = "results",
    max_cases: int | None = None,
    max_dim: int | None = None,
    num_runs: int | None = None,
    output_path: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    output: str | None = None,
) -> tuple[LoadedConfig, list[Case]]:
    loaded = load_config(path)
    cases = plan_cases(
        loaded.dialect,
        loaded.model,
        path=loaded.path,
        config_id=loaded.config_id,
        output_dir=output_dir,
        max_cases=max_cases,
        max_dim=max_dim,
        output_path=output_path,
    )
    if num_runs:
        cases = [
            dataclasses.replace(c, run=dataclasses.replace(c.run, num_runs=num_runs)) for c in cases
        ]
    if output:
        named = sorted({c.outputs.csv_path for c in cases} - {default_csv(path, output_dir)})
        if named:
            print(
                f"note: --output {output} takes every row; the config's result files "
                f"({', '.join(named)}) are not written",
                file=sys.stderr,
            )
        cases = [
            dataclasses.replace(c, outputs=dataclasses.replace(c.outputs, csv_path=output))
            for c in cases
        ]
    return loaded, select(cases, only or [], skip or [], loaded.path)


def select(cases: list[Case], only: list[str], skip: list[str], path: str) -> list[Case]:
    """--only / --skip: shell patterns matched against each case's op and label."""

    def matches(case: Case, patterns: list[str]) -> bool:
        return any(fnmatch(case.op, p) or fnmatch(case.label, p) for p in patterns)

    kept = [c for c in cases if (not only or matches(c, only)) and not matches(c, skip)]
    if not kept:
        raise UserError(
            f"--only {only} / --skip {skip} leave none of the {len(cases)} cases",
            file=path,
            key="(command line)",
        )
    return kept


def plan_from_file(path: str, **options: Any) -> list[Case]:
    return load_and_plan(path, **options)[1]


def open_result_files(
    cases: list[Case], resume: bool, overwrite: bool = False
) -> dict[str, ResultFile]:
    """One ResultFile per results file, whatever the spellings of its path (`out/x.csv`, `./out/x.csv`),
    its header the union of its cases' parameters and declared extras. Every path is checked first."""
    by_file: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_file[os.path.realpath(case.outputs.csv_path)].append(case)
    for metrics_dir in {c.outputs.xlml_metrics_dir for c in cases if c.outputs.xlml_metrics_dir}:
        check_writable(os.path.join(metrics_dir, REPORT), key="xlml_metrics_dir")
    for group in by_file.values():
        check_writable(group[0].outputs.csv_path)
        check_writable(
            str(Path(group[0].outputs.csv_path).with_suffix(".jsonl")), key="csv_path's .jsonl twin"
        )
    files: dict[str, ResultFile] = {}
    try:
        for group in by_file.values():
            params: list[str] = []
            extras: list[type | None] = []
            for case in group:
                params += [p for p in case.params if p not in params]
                declared = get_spec(case.op).row_extras
                extras += [declared] if declared not in extras else []
            shared = ResultFile(
                group[0].outputs.csv_path,
                header(params, extras),
                group[0].config_id,
                resume,
                overwrite,
            )
            files.update({case.outputs.csv_path: shared for case in group})
    except BaseException:
        close_all(files)
        raise
    return files


def close_all(files: dict[str, ResultFile]) -> None:
    for f in set(files.values()):
        f.close()


def summary_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="results", show_lines=False)
    for col in (
        "op",
        "backend",
        "shape",
        "params",
        "status",
        "median µs",
        "TFLOP/s",
        "GB/s",
        "% peak",
        "timing",
    ):
        table.add_column(
            col,
            justify="right"
            if col[0].isdigit() or col in ("median µs", "TFLOP/s", "GB/s", "% peak")
            else "left",
        )
    for r, params in zip(rows, distinguishing(rows), strict=True):
        shape = shape_label(r)
        pct = (
            r.get("compute_of_peak_pct")
            if r.get("roofline_bound_by") == "compute"
            else r.get("bandwidth_of_peak_pct")
        )
        table.add_row(
            r["op"],
            r["backend"],
            shape,
            params,
            r["status"],
            fixed(r.get("time_median_s"), 1e6, 2),
            fixed(r.get("tflop_per_s"), 1, 2),
            fixed(r.get("gb_per_s"), 1, 1),
            fixed(pct, 1, 1),
            r.get("timing_source") or (r.get("error") or "")[:60],
        )
    return table


def execute_all(
    cases: list[Case],
    files: dict[str, ResultFile] | None = None,
    *,
    isolate: bool = False,
    timeout_s: float | None = None,
    progress: bool = True,
    peak_overrides: dict[str, Any] | None = None,
    verbosity: int = 0,
) -> list[dict[str, Any]]:
    """Run cases in order (JAX first, see BACKEND_ORDER); each row reaches its file before the next case."""
    todo = sorted(cases, key=lambda c: run_order(c.backend))
    run_id = new_run_id()
    env = base_environment(run_id)
    pairing = PairTracker()
    finished: list[dict[str, Any]] = []
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
        task = bar.add_task("cases", total=len(todo))
        for case in todo:
            interrupt.check()
            bar.update(task, description=case.label)
            timeout = case.run.timeout_s or timeout_s
            run = execute_isolated if isolate else execute
            started = timestamp()
            row, digest = run(case, run_id, env, peak_overrides, timeout)
            pairing.annotate(case, row, digest)
            if files is not None:
                files[case.outputs.csv_path].append(row)
            flat = row.as_dict()
            if files is not None and case.outputs.xlml_metrics_dir and flat["status"] == "ok":
                record = metrics_record(
                    flat, case.params, row.raw["samples_s"], started, timestamp()
                )
                append_record(case.outputs.xlml_metrics_dir, record)
            finished.append(flat)
            if verbosity > 0:
                bar.console.print(case_line(flat))
            bar.advance(task)
    return finished


def case_line(row: dict[str, Any]) -> str:
    """--verbose: one finished case."""
    median = row.get("time_median_s")
    timing = f"{median * 1e6:.2f} µs {row.get('timing_source')}" if median else row.get("error", "")
    return f"{row['status']:<12} {row['label']}  {timing}"


def run_config(
    path: str,
    *,
    output_dir: str = "results",
    resume: bool = False,
    overwrite: bool = False,
    max_cases: int | None = None,
    max_dim: int | None = None,
    num_runs: int | None = None,
    isolate: bool = False,
    timeout_s: float | None = None,
    progress: bool = True,
    seed_json: str | None = None,
    torchao_csv: bool = False,
    output_path: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    output_dir_given: bool = False,
    verbosity: int = 0,
    output: str | None = None,
) -> int:
    """Run every case of a config (or those --only/--skip select). Returns the process exit code."""
    if output and output_dir_given:
        raise UserError("--output and --output-dir both place the rows; give one", key="--output")
    loaded, cases = load_and_plan(
        path,
        output_dir=output_dir,
        max_cases=max_cases,
        max_dim=max_dim,
        num_runs=num_runs,
        output_path=output_path,
        only=only,
        skip=skip,
        output=output,
    )
    if resume and processes.count() > 1:  # only process 0 could see what is done: the others would
        # run cases it skips, and wait in their collectives for ever
        raise UserError("--resume is not available in a many-process job", key="(command line)")
    if not processes.primary():  # process 0 of a many-process job writes; the others only take part
        rows = execute_all(cases, None, isolate=isolate, timeout_s=timeout_s, progress=False)
        return exit_code(rows)
    if seed_json:
        check_writable(seed_json, key="--seed-json")
    if output_dir_given:
        warn_overridden_output_dir(cases, output_dir)
    staging = Staging()
    try:
        cases = staging.stage(cases)
    except UserError as error:
        raise error.with_file(loaded.path) from None
    try:  # staged outputs reach their URLs however the run ends
        files = open_result_files(cases, resume, overwrite)  # refuses bad paths before any case
        try:
            with interrupt.handled():
                return _run_cases(
                    loaded,
                    cases,
                    files,
                    resume=resume,
                    isolate=isolate,
                    timeout_s=timeout_s,
                    progress=progress,
                    seed_json=seed_json,
                    torchao_csv=torchao_csv,
                    verbosity=verbosity,
                )
        finally:
            close_all(files)
    finally:
        for url in staging.upload():
            console.print(f"copied to {url}")


def warn_overridden_output_dir(cases: list[Case], output_dir: str) -> None:
    """--output-dir only places rows of benchmarks that name no csv_path: say so when the config wins."""
    root = os.path.realpath(output_dir)
    elsewhere = sorted(
        {
            c.outputs.csv_path
            for c in cases
            if os.path.commonpath([root, os.path.realpath(c.outputs.csv_path)]) != root
        }
    )
    if elsewhere:
        print(
            f"note: --output-dir {output_dir} does not apply where the config names csv_path; "
            f"rows go to {', '.join(elsewhere)}",
            file=sys.stderr,
        )


def resume_command(argv: list[str]) -> str:
    """The command that finishes an interrupted sweep, runnable as printed."""
    head = [sys.executable, argv[0]] if argv and argv[0].endswith(".py") else argv[:1]
    rest = [a for a in argv[1:] if a != "--resume"]
    return " ".join(shlex.quote(a) for a in [*head, *rest, "--resume"])


def _run_cases(
    loaded: LoadedConfig,
    cases: list[Case],
    files: dict[str, ResultFile],
    *,
    resume: bool,
    isolate: bool,
    timeout_s: float | None,
    progress: bool,
    seed_json: str | None,
    torchao_csv: bool,
    verbosity: int,
) -> int:
    todo = [c for c in cases if c.id not in files[c.outputs.csv_path].done]
    if resume and len(todo) < len(cases):
        console.print(f"resuming: {len(cases) - len(todo)} of {len(cases)} cases already done")
    peaks = getattr(loaded.model, "peaks", None)
    finished: list[dict[str, Any]] = []
    try:
        finished = execute_all(
            todo,
            files,
            isolate=isolate,
            timeout_s=timeout_s,
            progress=progress,
            peak_overrides=peaks.model_dump() if peaks else None,
            verbosity=verbosity,
        )
    except KeyboardInterrupt:
        unique = {str(f.csv_path): f for f in files.values()}
        done = sum(len(f.done) for f in unique.values())
        print(
            f"interrupted: {done} finished cases are saved in {', '.join(sorted(unique))}; to finish the "
            f"sweep run: {resume_command(sys.argv)}",
            file=sys.stderr,
            flush=True,
        )
        return 130
    if finished and verbosity >= 0:
        table_console().print(summary_table(finished))
    for result in {str(f.csv_path): f for f in files.values()}.values():
        if verbosity >= 0:
            console.print(f"rows: {result.csv_path}  (raw samples: {result.jsonl_path})")
    failed = [r for r in finished if r["status"] not in ("ok", "unsupported")]
    unsupported = sum(r["status"] == "unsupported" for r in finished)
    if failed:
        console.print(
            f"{len(failed)} of {len(finished)} cases did not produce a clean number (see status/error)"
        )
    console.print(
        f"{len(finished) - len(failed) - unsupported} ok, {len(failed)} failed, {unsupported} unsupported"
    )
    if seed_json:
        write_json_atomically(seed_json, to_seed_records(finished))
        console.print(f"seed-format JSON: {seed_json}")
    if torchao_csv:
        for path in write_runner_csvs(finished):
            console.print(f"torchao runner CSV: {path}")
    return exit_code(finished)


def exit_code(rows: list[dict[str, Any]]) -> int:
    """1 when a case failed (error, wrong result, oom, timeout, crash); `unsupported` rows, which say the
    platform cannot run a case (fp8 on a CPU, a missing package), do not fail a run."""
    return 1 if any(r["status"] not in ("ok", "unsupported") for r in rows) else 0


def run_dashboard(config: str, output: str, **run_options: Any) -> int:
    """Run a config, then write its torchao rows as PyTorch OSS benchmark records."""
    check_writable(output, key="--output")
    code = run_config(
        config,
        **{k: v for k, v in run_options.items() if k != "seed_json"},
    )
    if code != 0:
        return code
    cases = plan_from_file(
        config,
        output_dir=run_options.get("output_dir", "results"),
        max_cases=run_options.get("max_cases"),
        max_dim=run_options.get("max_dim"),
        num_runs=run_options.get("num_runs"),
        output_path=run_options.get("output_path"),
        only=run_options.get("only"),
        skip=run_options.get("skip"),
    )
    ids = {c.id for c in cases}
    rows = [
        r
        for path in sorted({c.outputs.csv_path for c in cases})
        for r in read_rows(path)
        if r["case_id"] in ids
    ]
    write_json_atomically(output, to_oss_records(rows))
    print(f"dashboard records: {output}")
    return 0
