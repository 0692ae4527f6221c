"""microbench: device-accurate accelerator microbenchmarks. Commands: run (a config's benchmarks),
dashboard (torchao's CI records), list (the ops), compare (two runs), report (charts and pages),
validate (a config, without running it). Bad input: one line on stderr, exit code 2.
Example: microbench run   (the CPU quick-start; then: microbench report results/quickstart.csv)"""

from __future__ import annotations

import microbench.quiet_start  # noqa: F401  (first: a signal while importing is a quiet exit)

# isort: split

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, NoReturn

from microbench import __version__
from microbench.errors import UserError
from microbench.limits import (
    MAX_CASES,
    MAX_ITERATIONS,
    MAX_PROCESSES,
    MAX_QUOTED,
    MAX_SECONDS,
)
from microbench.platform import chatter, interrupt, processes, streams

# Shipped inside the package, so a wheel install runs the default job (configs/quickstart.yaml links here)
QUICKSTART = str(resources.files("microbench") / "configs" / "quickstart.yaml")


class OneLineParser(argparse.ArgumentParser):
    """Option errors like config errors: one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def count(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:  # ASCII digits only, as a config's YAML reads them ('١٠٢٤' is no number there)
            value = int(text[:40]) if text.isascii() else None
        except ValueError:
            value = None
        if value is None or not low <= value <= high or len(text) > 40:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low} to {high:,}, got {text[:MAX_QUOTED]!r}"
            )
        return value

    return parse


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, got {text!r}"
        ) from None
    if not 0 < value <= MAX_SECONDS:  # NaN and infinity fail this too
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds up to {MAX_SECONDS:g}, got {text[:MAX_QUOTED]}"
        )
    return value


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """Where rows go, and what happens to a results file that is already there."""
    p.add_argument(
        "--output-dir",
        default=None,
        help="where rows go when the config names no csv_path (default: results)",
    )
    p.add_argument("--resume", action="store_true", help="skip cases already in the output files")
    p.add_argument("--overwrite", action="store_true", help="replace existing results files")
    p.add_argument(
        "--output_path",
        "--output-path",
        dest="output_path",
        default=None,
        help="as the Ironwood reference: traces and HLO dumps under <path>/<benchmark_name>/",
    )
    p.add_argument(
        "--seed-json",
        default=None,
        help="also write fusion/elementwise rows in the seeds' JSON format",
    )
    p.add_argument(
        "--torchao-csv",
        action="store_true",
        help="also write torchao rows as torchao's runner did: "
        "<output_dir>/<benchmark_mode>/results_<ddmmYYYY_HHMMSS>.csv",
    )


def _add_selection_options(p: argparse.ArgumentParser) -> None:
    """Which cases run, and how big they are."""
    p.add_argument(
        "--max-cases",
        type=count(1, MAX_CASES),
        default=None,
        help="refuse configs expanding to more cases",
    )
    p.add_argument(
        "--max-dim",
        type=count(1, 1 << 40),
        default=None,
        help="clamp every dimension to this (cases that become equal run once)",
    )
    p.add_argument(
        "--num-runs",
        type=count(1, MAX_ITERATIONS),
        default=None,
        help="override num_runs of every case",
    )
    for flag, what in (("--only", "run only"), ("--skip", "leave out")):
        p.add_argument(
            flag,
            action="append",
            default=[],
            metavar="PATTERN",
            help=f"{what} cases whose op or label matches (shell pattern; repeatable)",
        )


def _add_execution_options(p: argparse.ArgumentParser) -> None:
    """How cases run and what the terminal shows."""
    p.add_argument("--isolate", action="store_true", help="run each case in its own process")
    p.add_argument("--timeout", type=seconds, default=None, help="per-case timeout in seconds")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="only errors and the final count (no bar, no tables)",
    )
    talk.add_argument("-v", "--verbose", action="store_true", help="a line per case as it finishes")


def _add_process_options(p: argparse.ArgumentParser) -> None:
    many = p.add_argument_group("many processes (collectives)")
    many.add_argument(
        "--multihost",
        action="store_true",
        help="join a jax.distributed job found in the environment (TPU pod, GKE indexed job)",
    )
    many.add_argument(
        "--coordinator", default=None, help="HOST:PORT of process 0 (implies --multihost)"
    )
    many.add_argument(
        "--num-processes", type=count(1, MAX_PROCESSES), default=None, help="processes in the job"
    )
    many.add_argument(
        "--process-id", type=count(0, MAX_PROCESSES), default=None, help="this process's id"
    )
    many.add_argument(
        "--processes",
        type=count(1, MAX_PROCESSES),
        default=None,
        metavar="N",
        help="start N local CPU processes joined by jax.distributed and run there",
    )


def _add_view_options(
    p: argparse.ArgumentParser,
    columns: bool = True,
    formats: bool = True,
    sort_help: str = "order rows by a column (--sort=-COLUMN: descending)",
) -> None:
    """Which columns a table shows, in which order its rows come, and (on screen) in what format."""
    if columns:
        p.add_argument(
            "--columns",
            default=None,
            metavar="A,B,...",
            help="the table's columns after what tells rows apart (median, min, mean, std, p10, "
            "p90, max, samples, noise, tflops, gbps, peak, speedup, sqnr, timing, kernels, shape, "
            "spread)",
        )
    p.add_argument("--sort", default=None, metavar="KEY", help=sort_help)
    if formats:
        p.add_argument(
            "--format",
            dest="output_format",
            choices=("table", "csv", "json", "markdown"),
            default="table",
            help="the table to standard output as a table (default), CSV, JSON or Markdown",
        )


def _add_run_options(p: argparse.ArgumentParser) -> None:
    for add in (
        _add_view_options,
        _add_output_options,
        _add_selection_options,
        _add_execution_options,
        _add_process_options,
    ):
        add(p)


def _command(
    sub: argparse._SubParsersAction, name: str, summary: str, example: str
) -> argparse.ArgumentParser:
    """A subcommand whose help says what it does and shows one way to call it."""
    return sub.add_parser(
        name,
        help=summary,
        description=f"{summary}. Example: {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _run_parser(sub: argparse._SubParsersAction) -> None:
    p = _command(
        sub,
        "run",
        "run the benchmarks a config describes, or one benchmark (--run)",
        "microbench run --config configs/gpu/fusion.yaml --only 'fusion_linear*'",
    )
    p.allow_abbrev = False  # `--m 1024` is a field of --run, not an abbreviation of --max-dim
    p.add_argument("--config", default=None, help="YAML config (default: configs/quickstart.yaml)")
    p.add_argument(
        "--run",
        default=None,
        metavar="NAME",
        help="run one benchmark (a jax-bench name or an op) configured by the --field value "
        "arguments that follow, e.g. --run gemm_generalized --m 2048 --in_dtype bfloat16",
    )
    p.add_argument(
        "--hw",
        default=None,
        metavar="SYSTEM",
        help="jax-bench configs: a hardware preset (ironwood, gfc) where an entry names no system",
    )
    p.add_argument(
        "--xprof_dir",
        "--xprof-dir",
        dest="xprof_dir",
        default=None,
        help="jax-bench configs: where traces go where an entry sets xprof_timing and no xprof_dir",
    )
    p.add_argument(
        "--backend",
        default=None,
        metavar="NAMES",
        help="run every benchmark on these backends (jax, torch; comma-separated), whatever the "
        "config says",
    )
    p.add_argument(
        "--name",
        default=None,
        metavar="LABEL",
        help="a label for this run in the run store (microbench runs; compare LABEL OTHER)",
    )
    p.add_argument(
        "--conditions",
        choices=("upstream", "strict"),
        default=None,
        help="jax-bench configs: upstream (their default: warm caches, every device as jax-bench "
        "places the work) or strict (cold caches, one device)",
    )
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="every row to this CSV (its .jsonl twin beside it), whatever the config names",
    )
    _add_run_options(p)
    d = _command(
        sub,
        "dashboard",
        "run a torchao config and write the PyTorch OSS benchmark JSON",
        "microbench dashboard --config tests/seed_examples/tutorial_dashboard_config.yml "
        "--output records.json",
    )
    d.add_argument("--config", required=True, help="a torchao-dialect YAML config")
    d.add_argument("--output", required=True, help="the dashboard's JSON records file to write")
    d.set_defaults(
        run=None, hw=None, xprof_dir=None, conditions=None
    )  # `run`-only options, absent here
    _add_run_options(d)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="microbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"microbench {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser, metavar="COMMAND"
    )
    _run_parser(sub)
    lst = _command(sub, "list", "list ops, their parameters and backends", "microbench list --json")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    names = lst.add_mutually_exclusive_group()
    names.add_argument(
        "--jax-bench",
        action="store_true",
        help="the jax-bench (v2) names instead: the op each runs, its fields, its departures",
    )
    names.add_argument(
        "--tpums",
        action="store_true",
        help="the TPUMS names instead: tier, the jax-bench name each runs as, fields, departures",
    )
    c = _command(
        sub,
        "compare",
        "compare two results files, groups of one file (--by), or a config's last two runs",
        "microbench compare (the quick-start's last two runs); microbench compare a.csv b.csv; "
        "microbench compare run.csv --by backend",
    )
    c.add_argument(
        "files",
        nargs="*",
        help="baseline candidate: results files, or runs of --config by number or --name; one "
        "file with --by; none: the last two runs of --config",
    )
    c.add_argument(
        "--config",
        default=None,
        help="whose runs numbers and names refer to (default: the quick-start)",
    )
    c.add_argument(
        "--by", default=None, help="compare groups of this column (backend, implementation, recipe)"
    )
    c.add_argument("--baseline", default=None, help="the --by value to compare the others against")
    c.add_argument(
        "--threshold", type=float, default=0.05, help="relative change that counts (default 0.05)"
    )
    c.add_argument("--json", action="store_true", help="machine-readable output (--format json)")
    _add_view_options(
        c,
        columns=False,
        sort_help="order cases by case, ratio, p or verdict (--sort=-KEY: descending)",
    )
    rs = _command(
        sub,
        "runs",
        "list a config's stored runs: number, name, when, commit, host, rows",
        "microbench runs --config configs/quickstart.yaml; then: microbench compare 1 baseline",
    )
    rs.add_argument("--config", default=None, help="whose runs (default: the quick-start)")
    rs.add_argument("--json", action="store_true", help="machine-readable output")
    r = _command(
        sub,
        "report",
        "roofline, sweep and speedup charts, a Markdown summary and one HTML page",
        "microbench report results/quickstart.csv --output-dir report",
    )
    r.add_argument(
        "results",
        nargs="+",
        help="results CSVs (their .jsonl twins are read for the raw samples), folders of them or "
        "shell patterns: several make one overview",
    )
    r.add_argument("--output-dir", default="report", help="where the charts and pages go")
    _add_view_options(r, formats=False)
    v = _command(
        sub,
        "validate",
        "load and expand a config without running it",
        "microbench validate --config configs/quickstart.yaml --list",
    )
    v.add_argument("--config", required=True, help="the YAML config to check")
    v.add_argument(
        "--max-cases",
        type=count(1, MAX_CASES),
        default=None,
        help="refuse configs expanding to more cases",
    )
    v.add_argument(
        "--max-dim", type=count(1, 1 << 40), default=None, help="as for run: clamp every dimension"
    )
    v.add_argument("--list", action="store_true", help="print every case the config expands to")
    v.add_argument("--json", action="store_true", help="the cases as JSON")
    return parser


def _list(args: argparse.Namespace) -> int:
    from microbench.run import listing

    if args.jax_bench:
        listing.print_json(listing.benchmark_records()) if args.json else listing.print_benchmarks()
    elif args.tpums:
        listing.print_json(listing.tpums_records()) if args.json else listing.print_tpums()
    else:
        listing.print_json(listing.op_records()) if args.json else listing.print_ops()
    return 0


def _compare(args: argparse.Namespace) -> int:
    from microbench.results.compare import run_compare

    config = args.config or QUICKSTART
    named = [_side(ref, config) for ref in args.files]
    sides = [files for files, _ in named]
    selected = len(named) == 2 and named[1][1]  # a candidate run of a selection: its cases only
    if not sides:
        sides, selected = _last_two_runs(config)
    if args.by and not args.files:
        sides = sides[-1:]  # groups of the latest run
    return run_compare(
        sides,
        args.by,
        args.baseline,
        args.threshold,
        args.json or args.output_format == "json",
        selected,
        sort=args.sort,
        output_format=args.output_format,
    )


def _series(config: str) -> list[str]:
    """The results files a config's runs are numbered after."""
    from microbench.run.planning import plan_from_file

    return sorted({c.outputs.csv_path for c in plan_from_file(config)})


def _side(ref: str, config: str) -> tuple[list[str], bool]:
    """A results file, or a stored run of the config by its number or --name; and whether it is a
    run of a selection of the config's cases."""
    if os.path.exists(ref) or ref.lower().endswith((".csv", ".jsonl")) or os.sep in ref:
        from microbench.results.writer import expand_results

        return expand_results([ref], "compare"), False  # a folder or pattern: a run's files
    from microbench.results.run_store import find_run, stored_runs

    series = _series(config)
    found = find_run(series, ref)
    if found is None:
        known = ", ".join(
            f"{r.number}" + (f" '{r.name}'" if r.name else "") for r in stored_runs(series)
        )
        raise UserError(
            f"names no results file and no run of {config} (its runs: {known or 'none yet'})",
            key=f"compare '{ref}'",
        )
    return list(found.files), found.selected


def _last_two_runs(config: str) -> tuple[list[list[str]], bool]:
    """The files of a config's two latest runs (the run store numbers them), older first, and whether
    the latest ran a selection of the cases (--only/--skip): compare then keeps to its cases, so a
    filtered run never reads as the loss of the cases it left out."""
    from microbench.results.run_store import stored_runs

    runs = stored_runs(_series(config))
    if len(runs) < 2:
        raise UserError(
            "fewer than two runs of this config; run it again, or name two results files or runs",
            file=config,
        )
    older, newer = runs[-2:]
    if newer.selected:
        print(
            f"run {newer.number} ran a selection of the cases ({newer.selection}): compared with run "
            f"{older.number} on its cases only",
            file=sys.stderr,
        )
    return [list(older.files), list(newer.files)], newer.selected


def _runs(args: argparse.Namespace) -> int:
    """The stored runs of a config: number, label, when, commit, host, rows, selection."""
    from dataclasses import asdict

    from rich.table import Table

    from microbench.results.console import shown, table_console
    from microbench.results.run_store import stored_runs

    config = args.config or QUICKSTART
    runs = stored_runs(_series(config))
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
        return 0
    if not runs:
        print(f"no stored run of {config} yet")
        return 0
    table = Table(title=shown(f"runs of {config}"))
    for column in ("run", "name", "started", "commit", "host", "rows", "selection", "files"):
        table.add_column(column)
    for r in runs:
        table.add_row(
            str(r.number),
            shown(r.name or ""),
            shown(r.started or ""),
            shown((r.commit or "")[:10]),
            shown(r.host or ""),
            str(r.rows),
            shown(r.selection or ""),
            shown(", ".join(r.files)),
        )
    table_console().print(table)
    return 0


def _report(args: argparse.Namespace) -> int:
    from microbench.results.writer import check_readable, expand_results

    paths = expand_results(args.results, "report")
    for path in paths:  # before the plotting libraries load: a bad path answers at once
        check_readable(path)
    from microbench.results.report import run_report

    run_report(paths, args.output_dir, _listed(args.columns), args.sort)
    return 0


def _listed(text: str | None) -> tuple[str, ...]:
    """`--columns a,b,c` as names."""
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def _validate(args: argparse.Namespace) -> int:
    from microbench.core.options import RunOptions
    from microbench.run.listing import case_records, print_cases, print_json
    from microbench.run.planning import plan_from_file

    options = RunOptions(max_cases=args.max_cases, max_dim=args.max_dim)
    cases = plan_from_file(args.config, options)
    if args.json:
        print_json(case_records(cases))
    elif args.list:
        print_cases(cases)
    else:
        print(f"{args.config}: {len(cases)} cases")
    return 0


def _run_options(args: argparse.Namespace) -> Any:
    """The command line as one RunOptions (imported here: `list` and `--help` stay light)."""
    from microbench.core.options import RunOptions

    return RunOptions(
        output_dir=args.output_dir or "results",
        output_dir_given=args.output_dir is not None,
        output=getattr(args, "output", None) if args.command == "run" else None,
        resume=args.resume,
        overwrite=args.overwrite,
        max_cases=args.max_cases,
        max_dim=args.max_dim,
        num_runs=args.num_runs,
        isolate=args.isolate,
        timeout_s=args.timeout,
        progress=not (args.no_progress or args.quiet),
        verbosity=-1 if args.quiet else 1 if args.verbose else 0,
        seed_json=args.seed_json if args.command == "run" else None,
        torchao_csv=args.torchao_csv,
        output_path=args.output_path,
        only=tuple(args.only),
        skip=tuple(args.skip),
        dashboard=args.output if args.command == "dashboard" else None,
        hw=args.hw,
        xprof_dir=args.xprof_dir,
        conditions=getattr(args, "conditions", None),
        name=getattr(args, "name", None),
        columns=_listed(args.columns),
        sort=args.sort,
        output_format=args.output_format,
        backend=tuple(b for b in (getattr(args, "backend", None) or "").split(",") if b)
        if not args.run
        else (),
        one_off=(args.run, *args.fields) if args.run else (),
    )


def _launch(args: argparse.Namespace) -> int:
    from microbench.run.launch import launch_local

    return launch_local(args.argv, args.processes)


def _join(args: argparse.Namespace) -> None:
    """Join a many-process job before any case touches JAX."""
    given = (args.coordinator, args.num_processes, args.process_id)
    if args.multihost or any(v is not None for v in given):
        from microbench.jax_backend.distributed import initialize

        initialize(*given)


def _run(args: argparse.Namespace) -> int:
    from microbench.run.planning import check_options, load_and_plan

    if args.processes:
        return _launch(args)
    _join(args)

    if args.run == "":
        raise UserError("names no benchmark (see `microbench list`)", key="--run")
    if args.run and args.config is not None:
        raise UserError("give --config or --run, not both", key="--run")
    config = args.run or (QUICKSTART if args.config is None else args.config)
    options = _run_options(args)
    check_options(options)
    loaded, cases = load_and_plan(config, options)
    from microbench.run.session import run_planned  # the machinery, once the config is known good

    return run_planned(loaded, cases, options)


def _dashboard(args: argparse.Namespace) -> int:
    """`run` with the CI dashboard's records as one more output."""
    return _run(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "runs": _runs,
    "run": _run,
    "dashboard": _dashboard,
    "list": _list,
    "compare": _compare,
    "report": _report,
    "validate": _validate,
}


def _quit(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM outside a run's cases (imports, config parsing, writing reports): a quiet
    exit, 128 + the signal."""
    print("interrupted", file=sys.stderr, flush=True)
    raise SystemExit(128 + signum)


def _take_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for sig in interrupt.STOPPING:  # a run replaces them with a flag while its cases run
            signal.signal(sig, _quit)
        if os.environ.get(processes.LAUNCHED) == "1":  # a worker of `run --processes N`
            processes.die_with_parent()
        interrupt.keep_swallowed()


def serve(command: Callable[[], int]) -> int:
    """Run one command: bad input is one line and its exit code, a Ctrl-C a quiet exit."""
    try:
        return command()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return interrupt.exit_code()
    except (
        RuntimeError
    ) as error:  # Python 3.11 wraps our SystemExit when it lands in a class body's __set_name__
        if isinstance(error.__cause__, SystemExit | KeyboardInterrupt):
            return 130
        raise
    except BrokenPipeError:  # `microbench list --json | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    _take_signals()
    args, fields = build_parser().parse_known_args(argv)
    if fields and getattr(args, "run", None) is None:
        build_parser().error(f"unrecognized arguments: {' '.join(fields)}")
    if getattr(args, "run", None) and getattr(args, "backend", None):  # a field of the one-off
        fields = [*fields, "--backend", args.backend]
    args.fields = fields
    args.argv = list(sys.argv[1:] if argv is None else argv)
    chatter.route(verbose=bool(getattr(args, "verbose", False)))
    return serve(lambda: COMMANDS[args.command](args))


def guarded_main(main_: Callable[[], int]) -> NoReturn:
    """The process entry point: main, then exit. A Ctrl-C that lands after the run has finished (its rows
    written) would otherwise kill the interpreter during shutdown, with a signal for an exit code. A
    console that refuses writes (a full disk) is one line on stderr where stderr still works, exit 1."""
    streams.guard_standard_streams()
    try:
        code = main_()
    except streams.OutputLost as lost:
        with contextlib.suppress(streams.OutputLost, OSError):
            print(f"error: {lost}", file=sys.stderr, flush=True)
        streams.discard_output()
        code = 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


def entry(argv: Sequence[str] | None = None) -> NoReturn:
    guarded_main(lambda: main(argv))


def upstream_options(folder: str, flag: str, **more: Any) -> Any:
    """A reference command line's options (jax-bench's, TPUMS's): rows, summary.csv and
    detailed.json in `folder`, named as upstream names them."""
    from microbench.core.options import RunOptions

    if not folder:
        raise UserError("is empty; name an output folder", key=flag)
    return RunOptions(output_dir=folder, output_dir_given=True, jax_bench_names=True, **more)


def command_main(run: Callable[[], int]) -> int:
    """Another command line's main (the `jax-bench` command): the same signals and error lines."""
    _take_signals()
    chatter.route(verbose=False)
    return serve(run)


if __name__ == "__main__":
    entry()
