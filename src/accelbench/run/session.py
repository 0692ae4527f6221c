"""One run of one config: the sinks opened (a bad path refused before any case), each row handed on
before the next case, the sinks closed however the run ends."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from accelbench.config.loader import LoadedConfig
from accelbench.core.case import Case
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, counted, visible
from accelbench.platform import interrupt, processes
from accelbench.platform.backends import run_hooks, run_order
from accelbench.platform.environment import base_environment, new_run_id, timestamp
from accelbench.platform.gpu_monitor import unlocked_note
from accelbench.results import run_store
from accelbench.results.console import format_seconds, shown
from accelbench.results.display import AUDITED
from accelbench.results.records import Row
from accelbench.results.remote import Staging
from accelbench.results.sinks import RunContext, Sink, open_sinks
from accelbench.run.runner import PairTracker, Worker, execute, flag_groups_apply

console = Console(stderr=True, soft_wrap=True)  # a message is one line, never wrapped


def execute_all(
    cases: list[Case],
    options: RunOptions,
    on_row: Callable[[Case, Row], None] | None = None,
    peak_overrides: dict[str, object] | None = None,
    run_id: str | None = None,
) -> list[Row]:
    """Run cases in order (JAX first, see BACKENDS); each row is handed on before the next case."""
    grouped = flag_groups_apply() and any(c.process_env for c in cases)
    # one worker per flag set, so a flag set's cases run together (in config order within it)
    todo = sorted(cases, key=lambda c: (run_order(c.backend), c.process_env if grouped else ()))
    workers = Worker(options.isolate) if grouped or options.isolate else None
    run_id = run_id or new_run_id()
    env = base_environment(run_id)
    pairing = PairTracker()
    finished: list[Row] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    run = workers or execute
    with (
        Progress(*columns, console=console, disable=not options.progress) as bar,
        contextlib.closing(workers) if workers else contextlib.nullcontext(),
    ):
        task = bar.add_task("cases", total=len(todo))
        for case in todo:
            interrupt.check()
            bar.update(task, description=shown(case.label))
            started = timestamp()
            row, digest = run(
                case, run_id, env, peak_overrides, case.run.timeout_s or options.timeout_s
            )
            row.started = started
            pairing.annotate(case, row, digest)
            if on_row is not None:
                on_row(case, row)
            finished.append(row)
            if options.verbosity > 0:
                bar.console.print(shown(case_line(row)))
            bar.advance(task)
            if case.run.cooldown_s:  # the device cools before the next case
                interrupt.pause(case.run.cooldown_s)
    return finished


def case_line(row: Row) -> str:  # --verbose: one finished case
    median = row.median_s
    timing = (
        f"{format_seconds(median)} {row.timing.timing_source}" if median else row.identity.error
    )
    return f"{row.status.value:<12} {row.identity.label}  {timing}"


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    code: int  # the process exit code
    cases: tuple[Case, ...] = ()  # as they ran: their results files assigned (a suite reads them)


def run_planned(loaded: LoadedConfig, cases: list[Case], options: RunOptions) -> int:
    return run_and_tell(loaded, cases, options).code


def run_and_tell(loaded: LoadedConfig, cases: list[Case], options: RunOptions) -> RunOutcome:
    peaks = getattr(loaded.model, "peaks", None)
    overrides = peaks.model_dump() if peaks else None
    hooks = run_hooks(cases)
    for hook in hooks:  # before the record: it keeps what they chose (env_flags)
        hook.setup(cases)
    if not processes.primary():  # process 0 of a many-process job writes; the others only take part
        quiet = dataclasses.replace(options, progress=False)
        done = _agreed(options, [False] * len(cases))  # what process 0 found in the rows
        todo = [c for c, held in zip(cases, done, strict=True) if not held]
        return RunOutcome(exit_code(execute_all(todo, quiet, None, overrides)))
    if options.output_dir_given:
        warn_overridden_output_dir(cases, options.output_dir)
    run_id = new_run_id()
    assigned = run_store.assign(cases, options, loaded.path, run_id, loaded.command_line)
    staging = Staging()
    try:
        cases = _traced_as(staging.stage(assigned.cases), run_id)
    except UserError as error:
        assigned.abandon()
        raise error.with_file(loaded.path) from None
    context = RunContext(options, tuple(cases))
    try:  # staged outputs reach their URLs however the run ends
        try:
            sinks = open_sinks(context)  # refuses bad paths before any case
        except BaseException:
            assigned.abandon()
            raise
        if assigned.number > 1 and options.verbosity >= 0:
            console.print(f"run {assigned.number} of this config (earlier runs are kept)")
        with interrupt.handled():
            return RunOutcome(_run_cases(cases, sinks, options, overrides, run_id), tuple(cases))
    finally:
        for hook in hooks:
            hook.teardown()
        if options.verbosity >= 0:
            say_where_traces_went(cases)
        for url in staging.upload():
            console.print(f"copied to {url}")


def _traced_as(cases: list[Case], run_id: str) -> list[Case]:
    """Traces name this run's profiler session: by when it started (sortable) and its id."""
    session = f"{time.strftime('%Y_%m_%d_%H_%M_%S')}_{run_id[-6:]}"
    return [
        dataclasses.replace(c, outputs=dataclasses.replace(c.outputs, trace_session=session))
        if c.outputs.trace_dir
        else c
        for c in cases
    ]


def say_where_traces_went(cases: list[Case]) -> None:
    roots = sorted({c.outputs.trace_dir for c in cases if c.outputs.trace_dir})
    for root in (r for r in roots if os.path.isdir(r)):
        found = {p.suffix for p in Path(root).rglob("*") if p.suffix in (".pb", ".json")}
        how = []
        if ".pb" in found:  # JAX's XSpace
            how.append(f"microbench traces {shlex.quote(root)} (xprof on 127.0.0.1)")
        if ".json" in found:  # PyTorch's Kineto trace
            how.append("its .pt.trace.json files in Perfetto or chrome://tracing")
        if how:
            print(
                visible(f"traces: {root} (a folder per case); open {' or '.join(how)}"),
                file=sys.stderr,
            )


def warn_overridden_output_dir(cases: list[Case], output_dir: str) -> None:
    """--output-dir only places rows of benchmarks that name no csv_path: say so when the config wins."""
    root = os.path.realpath(output_dir)
    paths = {c.outputs.csv_path for c in cases}
    elsewhere = sorted(p for p in paths if os.path.commonpath([root, os.path.realpath(p)]) != root)
    if elsewhere:
        print(
            f"note: --output-dir {output_dir} does not apply where the config names csv_path; "
            f"rows go to {', '.join(elsewhere)}",
            file=sys.stderr,
        )


def _module_of(script: str) -> str | None:
    """`python -m NAME`'s NAME for a file inside a package (its folders hold __init__.py)."""
    path = Path(script).resolve()
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts).removesuffix(".__main__") if len(parts) > 1 else None


def resume_command(argv: list[str]) -> str:
    """The command that finishes an interrupted sweep, as the user typed it (a worker names its
    launcher's); a package's file as a module: as a script, its folder would shadow the stdlib."""
    if launched_by := os.environ.get(processes.LAUNCHED_BY):
        argv = json.loads(launched_by)
    module = _module_of(argv[0]) if argv and argv[0].endswith(".py") else None
    if module:
        head = [sys.executable, "-m", module]
    elif argv and argv[0].endswith(".py"):
        head = [sys.executable, argv[0]]
    else:
        head = argv[:1]
    rest = [a for a in argv[1:] if a not in ("--resume", "--overwrite")]
    return " ".join(shlex.quote(a) for a in [*head, *rest, "--resume"])


def _run_cases(
    cases: list[Case],
    sinks: list[Sink],
    options: RunOptions,
    peak_overrides: dict[str, object] | None,
    run_id: str,
) -> int:
    held = _agreed(options, [any(s.holds(c) for s in sinks) for c in cases])
    todo = [c for c, done in zip(cases, held, strict=True) if not done]
    done = len(cases) - len(todo)
    restore([c for c, kept in zip(cases, held, strict=True) if kept], sinks)
    if options.resume and len(todo) < len(cases):
        console.print(f"resuming: {done} of {counted(len(cases), 'case')} already done")
    finished: list[Row] = []

    def hand_on(case: Case, row: Row) -> None:
        for sink in sinks:
            sink.row(case, row)
        finished.append(row)

    try:
        execute_all(todo, options, hand_on, peak_overrides, run_id)
    except KeyboardInterrupt:
        close_all(sinks, finished, interrupted=True)
        where = sorted({loc for s in sinks for loc in s.locations() if os.path.exists(loc)})
        saved = done + len(finished)
        kept = f"{counted(saved, 'finished case')} kept in {', '.join(where)}"
        kept = kept if saved and where else "no case had finished: nothing was saved"
        print(
            visible(f"interrupted: {kept}; to finish the sweep run: {resume_command(sys.argv)}"),
            file=sys.stderr,
            flush=True,
        )
        return interrupt.exit_code()
    except BaseException:
        close_all(sinks, finished, interrupted=True)
        raise
    close_all(sinks, finished, interrupted=False)
    report_counts(finished, sinks, options)
    return exit_code(finished)


def _agreed(options: RunOptions, held: list[bool]) -> list[bool]:
    """Which cases are done, as process 0 found them: every process of a job runs the same cases."""
    if not options.resume or processes.count() == 1:
        return held
    from accelbench.jax_backend.distributed import from_process_0

    return from_process_0(held)


def restore(done: list[Case], sinks: list[Sink]) -> None:
    """An output that lacks a finished case (killed between two writes) gets the stored row."""
    for case in done:
        lacking = [s for s in sinks if s.restores and not s.holds(case)]
        stored = next((r for s in sinks if lacking and (r := s.stored(case))), None)
        for sink in lacking:
            if stored is not None:
                sink.row(case, stored)


def close_all(sinks: list[Sink], finished: list[Row], interrupted: bool) -> None:
    """Every sink closed (its files whole) even when one fails; then the first failure raised."""
    failure: BaseException | None = None
    for sink in sinks:
        try:
            sink.close(finished, interrupted=interrupted)
        except BaseException as error:  # noqa: BLE001 - raised below, after the others closed
            failure = failure or error
    if failure is not None:
        raise failure


def report_counts(rows: list[Row], sinks: list[Sink], options: RunOptions) -> None:
    if options.verbosity >= 0:
        for location in sorted({loc for s in sinks for loc in s.locations()}):
            twin = os.path.splitext(location)[0] + ".jsonl"
            console.print(shown(f"rows: {location}  (raw samples: {twin})"))
    failed = [r for r in rows if r.status.failed]
    unsupported = sum(not r.ok and not r.status.failed for r in rows)
    for what, labels in (
        (
            "that ran partly below the clock threshold (throttled_share_ratio; throttle: discard "
            "drops those samples)",
            [r.identity.label for r in rows if r.doubt == "throttled"],
        ),
        (
            f"with audit findings ({AUDITED}; audit: strict makes them errors)",
            [r.identity.label for r in rows if r.timing.audit],
        ),
    ):
        if labels:
            more = " ..." if len(labels) > 10 else ""
            console.print(
                shown(f"{counted(len(labels), 'case')} {what}: {', '.join(labels[:10])}{more}")
            )
    free = next((r.device_state for r in rows if r.device_state.clocks_set == "default"), None)
    if free is not None:
        console.print(shown(unlocked_note(free)))
    if failed:
        console.print(
            f"{len(failed)} of {counted(len(rows), 'case')} did not produce a clean number "
            "(see status/error)"
        )
    console.print(
        f"{len(rows) - len(failed) - unsupported} ok, {len(failed)} failed, {unsupported} unsupported"
    )
    if exit_code(rows) == NOTHING_MEASURED:
        console.print(
            shown(
                f"nothing was measured: {counted(len(rows), 'case')}, all unsupported here "
                f"(first: {rows[0].identity.label}: {rows[0].identity.error})"
            )
        )


NOTHING_MEASURED = 3


def exit_code(rows: list[Row]) -> int:
    """1 when a case failed; `unsupported` rows (fp8 on a CPU) do not fail a run, but a run that
    measured nothing is not green (3)."""
    if any(r.status.failed for r in rows):
        return 1
    return NOTHING_MEASURED if rows and not any(r.ok for r in rows) else 0
