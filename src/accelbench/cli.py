"""microbench: device-accurate accelerator microbenchmarks. Commands: run (a config's benchmarks), list
(the ops), compare (two runs), runs (the stored ones), report (charts and pages), validate (a config,
without running it), and each dialect's own (jax-bench, tpums, dashboard). Bad input: one line on
stderr, exit code 2.
Example: microbench run   (the CPU quick-start; then: microbench report results/quickstart.csv)

The options of `run` that a dialect or an output format owns are not declared here: each is a `Flag`
of its owner (core/flags.py), added to the parser from the registries, and carried by name."""

from __future__ import annotations

import accelbench.quiet_start  # noqa: F401  (first: a signal while importing is a quiet exit)

# isort: split

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from accelbench import __version__
from accelbench.errors import UserError, counted
from accelbench.limits import MAX_CASES, MAX_ITERATIONS, MAX_PROCESSES
from accelbench.results.compare_formats import FORMATS
from accelbench.run import history_commands, store_commands
from accelbench.run.command_line import (
    OneLineParser,
    add_run_files,
    command,
    count,
    guarded_main,
    run_files,
    seconds,
    serve,
    take_signals,
)
from accelbench.run.store_commands import QUICKSTART, listed


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """Where rows go, and what happens to a results file that is already there."""
    p.add_argument(
        "--output-dir", help="where rows go when the config names no csv_path (default: results)"
    )
    add_run_files(p)


def _add_selection_options(p: argparse.ArgumentParser) -> None:
    """Which cases run, and how big they are."""
    p.add_argument(
        "--max-cases", type=count(1, MAX_CASES), help="refuse configs expanding to more cases"
    )
    p.add_argument(
        "--max-dim",
        type=count(1, 1 << 40),
        help="clamp every dimension to this (cases that become equal run once)",
    )
    p.add_argument(
        "--num-runs", type=count(1, MAX_ITERATIONS), help="override num_runs of every case"
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
    p.add_argument("--timeout", type=seconds, help="per-case timeout in seconds")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="only errors and the final count (no bar, no tables)",
    )
    talk.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="a line per case as it finishes, and the frameworks' warnings (-vv: all they log)",
    )


def _add_process_options(p: argparse.ArgumentParser) -> None:
    many = p.add_argument_group("many processes (collectives)")
    many.add_argument(
        "--multihost",
        action="store_true",
        help="join a jax.distributed job found in the environment (TPU pod, GKE indexed job)",
    )
    many.add_argument("--coordinator", help="HOST:PORT of process 0 (implies --multihost)")
    many.add_argument("--num-processes", type=count(1, MAX_PROCESSES), help="processes in the job")
    many.add_argument("--process-id", type=count(0, MAX_PROCESSES), help="this process's id")
    many.add_argument(
        "--processes",
        type=count(1, MAX_PROCESSES),
        metavar="N",
        help="start N local CPU processes joined by jax.distributed and run there",
    )


TABLE_FORMATS = ("table", "csv", "json", "markdown")


def _add_view_options(
    p: argparse.ArgumentParser,
    columns: bool = True,
    formats: tuple[str, ...] = TABLE_FORMATS,
    sort_help: str = "order rows by a column (--sort=-COLUMN: descending)",
) -> None:
    """Which columns a table shows, in which order its rows come, and (on screen) in what format."""
    if columns:
        p.add_argument(
            "--columns",
            metavar="A,B,...",
            help="the table's columns after what tells rows apart (median, min, mean, std, p10, "
            "p90, max, samples, noise, tflops, gbps, peak, speedup, sqnr, timing, audit, kernels, "
            "shape, spread)",
        )
    p.add_argument("--sort", metavar="KEY", help=sort_help)
    if formats:
        p.add_argument(
            "--format",
            dest="output_format",
            choices=formats,
            default="table",
            help=f"the table to standard output: {', '.join(formats)} (default: table)",
        )


def _owned_flags(command: str | None = None) -> list[Any]:
    """The flags the dialects and the output formats declare (for `command`), once each."""
    from accelbench.config.dialects import dialect_flags, dialects
    from accelbench.results.sinks import FLAGS

    every = [*dialect_flags(), *FLAGS, *(f for d in dialects() for f in d.sink_flags)]
    found = {f.dest: f for f in every if command is None or command in f.commands}
    return list(found.values())


def _add_run_options(p: argparse.ArgumentParser, command: str) -> None:
    for add in (
        _add_view_options,
        _add_output_options,
        _add_selection_options,
        _add_execution_options,
        _add_process_options,
    ):
        add(p)
    owned = p.add_argument_group("owned by a dialect or an output format")
    for flag in _owned_flags(command):
        flag.add_to(owned)


def _run_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "run",
        "run the benchmarks a config describes, or one benchmark (--run)",
        "microbench run --config configs/gpu/fusion.yaml --only 'fusion_linear*'",
    )
    p.allow_abbrev = False  # `--m 1024` is a field of --run, not an abbreviation of --max-dim
    p.add_argument("--config", help="YAML config (default: configs/quickstart.yaml)")
    p.add_argument(
        "--run",
        metavar="NAME",
        help="run one benchmark (a jax-bench name or an op) configured by the --field value "
        "arguments that follow, e.g. --run gemm_generalized --m 2048 --in_dtype bfloat16",
    )
    p.add_argument(
        "--backend",
        metavar="NAMES",
        help="run every benchmark on these backends (jax, torch; comma-separated), whatever the "
        "config says",
    )
    p.add_argument(
        "--name",
        metavar="LABEL",
        help="a label for this run in the run store (microbench runs; compare LABEL OTHER)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="every row to this CSV (its .jsonl twin beside it), whatever the config names",
    )
    _add_run_options(p, "run")


def _alias_parsers(sub: argparse._SubParsersAction) -> None:
    """Each dialect's `run` shorthand (`dashboard`): --config and its one flag, both required."""
    from accelbench.config.dialects import dialects

    for alias in (a for d in dialects() for a in d.aliases):
        d = command(sub, alias.name, alias.summary, alias.example)
        d.add_argument("--config", required=True, help="the YAML config to run")
        d.add_argument(alias.option, dest=alias.flag.dest, required=True, help=alias.flag.help)
        d.set_defaults(run=None, output=None, backend=None, name=None, alias=alias.name)
        _add_run_options(d, alias.name)


def _dialect_parsers(sub: argparse._SubParsersAction) -> None:
    """Each dialect's own command line (`microbench jax-bench ...`), named in the help: `main` hands
    it every argument before this parser sees them."""
    from accelbench.config.dialects import dialects

    for dialect in dialects():
        if dialect.command is not None:
            name, summary = dialect.command.name, dialect.command.summary
            command(sub, name, summary, f"microbench {name} --help", add_help=False)


def _list_parser(sub: argparse._SubParsersAction) -> None:
    from accelbench.config.dialects import dialects

    lst = command(sub, "list", "list ops, their parameters and backends", "microbench list --json")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    names = lst.add_mutually_exclusive_group()
    for dialect in dialects():
        if dialect.listing is not None:
            names.add_argument(
                dialect.listing.option,
                dest=f"list_{dialect.name}",
                action="store_true",
                help=dialect.listing.help,
            )


def _compare_parser(sub: argparse._SubParsersAction) -> None:
    c = command(
        sub,
        "compare",
        "compare two results files or stored runs, groups of one file (--by), or the last two runs",
        "microbench compare (the last two runs of what ran last); microbench compare a.csv b.csv; "
        "microbench compare run.csv --by backend",
    )
    c.add_argument(
        "files",
        nargs="*",
        help="baseline candidate: results files (paths, file:// or gs:// URLs), or runs of "
        "--config by number or --name; one file with --by; none: the last two runs of what ran "
        "last (or of --config)",
    )
    c.add_argument(
        "--config",
        help="whose runs numbers and names refer to (default: every run under --results-dir; a "
        "number is of the latest run's series)",
    )
    c.add_argument(
        "--results-dir",
        default="results",
        help="where stored runs are looked for without --config: a folder, file:// or gs:// URL "
        "(default: results)",
    )
    c.add_argument("--by", help="compare groups of this column (backend, implementation, recipe)")
    c.add_argument(
        "--baseline",
        help="the --by value to compare the others against; without --by, the baseline: a file, "
        "URL, run or `latest` (the latest run of the candidate's series under --results-dir)",
    )
    c.add_argument(
        "--fail-inconclusive",
        default="",
        metavar="REASONS",
        help="inconclusive cases that fail the comparison (exit 1): those whose reason names one "
        "of these words (noisy, conditions, ...), or all; default none",
    )
    _add_threshold(c)
    c.add_argument("--json", action="store_true", help="machine-readable output (--format json)")
    _add_view_options(
        c,
        columns=False,
        formats=tuple(FORMATS),
        sort_help="order cases by case, ratio or verdict (--sort=-KEY: descending)",
    )


def _add_threshold(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threshold", type=float, default=0.05, help="relative change that counts")


def _ab_parser(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "ab", *store_commands.AB_HELP)
    store_commands.ab_arguments(p)
    _add_threshold(p)
    _add_view_options(p, columns=False, formats=tuple(FORMATS))


def _store_parsers(sub: argparse._SubParsersAction) -> None:
    rs = command(
        sub,
        "runs",
        "list the stored runs (every one under results/, or a config's): number, name, what ran, "
        "when, commit, host, rows",
        "microbench runs; then: microbench compare baseline candidate",
    )
    history_commands.store_options(rs)
    rs.add_argument("--json", action="store_true", help="machine-readable output")
    r = command(
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
    r.add_argument(
        "--sample-charts",
        action="store_true",
        help="each case's samples over its run (by default only soaks and GPU-monitored cases)",
    )
    _add_view_options(r, formats=())


def _traces_parser(sub: argparse._SubParsersAction) -> None:
    t = command(
        sub,
        "traces",
        "open a run's kept traces in xprof, on this machine only (127.0.0.1)",
        "microbench traces tr --port 8791",
    )
    t.add_argument("logdir", help="the traces folder (a config's trace_dir, --xprof_dir)")
    t.add_argument(
        "--port",
        type=count(1, 65535),
        help="its port on 127.0.0.1 (default 8791, or a free one where that is taken)",
    )


def _traces(args: argparse.Namespace) -> int:
    from accelbench.run.trace_viewer import serve

    return serve(args.logdir, args.port)


def _validate_parser(sub: argparse._SubParsersAction) -> None:
    v = command(
        sub,
        "validate",
        "load and expand a config without running it",
        "microbench validate --config configs/quickstart.yaml --list",
    )
    v.add_argument("--config", required=True, help="the YAML config to check")
    v.add_argument(
        "--max-cases", type=count(1, MAX_CASES), help="refuse configs expanding to more cases"
    )
    v.add_argument("--max-dim", type=count(1, 1 << 40), help="as for run: clamp every dimension")
    v.add_argument("--list", action="store_true", help="print every case the config expands to")
    v.add_argument("--json", action="store_true", help="the cases as JSON")
    for flag in _owned_flags("validate"):
        flag.add_to(v)


class _Version(argparse.Action):
    """`--version`: the project's version and the commit it was built from (asked of git only here)."""

    def __call__(self, parser: Any, *_: Any) -> None:
        from accelbench.platform.environment import git_commit

        print(f"microbench {__version__} (commit {git_commit() or 'unknown'})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="microbench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action=_Version, nargs=0, help="the version and its commit")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser, metavar="COMMAND"
    )
    for add in (
        _run_parser,
        _alias_parsers,
        _list_parser,
        _compare_parser,
        _ab_parser,
        _store_parsers,
        _validate_parser,
        _traces_parser,
        history_commands.add_parsers,
        _dialect_parsers,
    ):
        add(sub)
    return parser


def _list(args: argparse.Namespace) -> int:
    from accelbench.config.dialects import dialects
    from accelbench.run import listing

    for dialect in dialects():
        if dialect.listing is not None and getattr(args, f"list_{dialect.name}", False):
            if args.json:
                listing.print_json(dialect.listing.records())
            else:
                found = dialect.listing
                listing.print_table(found.title, found.columns, found.rows())
            return 0
    listing.print_json(listing.op_records()) if args.json else listing.print_ops()
    return 0


def _validate(args: argparse.Namespace) -> int:
    from accelbench.config.dialects import get_dialect
    from accelbench.core.flags import FlagValues
    from accelbench.core.options import RunOptions
    from accelbench.run.listing import case_records, print_cases, print_json
    from accelbench.run.planning import load_and_plan

    owned = FlagValues({f.dest: getattr(args, f.dest, None) for f in _owned_flags("validate")})
    options = RunOptions(max_cases=args.max_cases, max_dim=args.max_dim, flags=owned)
    loaded, cases = load_and_plan(args.config, options)
    if args.json:
        print_json(case_records(cases, get_dialect(loaded.dialect).case_fields))
    elif args.list:
        print_cases(cases)
    else:
        print(f"{args.config}: {counted(len(cases), 'case')}")
    return 0


def _run_options(args: argparse.Namespace) -> Any:
    """The command line as one RunOptions (imported here: `list` and `--help` stay light); the
    owned flags by their names."""
    from accelbench.core.flags import FlagValues
    from accelbench.core.options import RunOptions

    owned = {f.dest: getattr(args, f.dest, None) for f in _owned_flags()}
    return RunOptions(
        output_dir=args.output_dir or "results",
        output_dir_given=args.output_dir is not None,
        output=args.output,
        resume=args.resume,
        overwrite=args.overwrite,
        max_cases=args.max_cases,
        max_dim=args.max_dim,
        num_runs=args.num_runs,
        settings=run_files(args).settings,
        isolate=args.isolate,
        timeout_s=args.timeout,
        progress=not (args.no_progress or args.quiet),
        verbosity=-1 if args.quiet else min(args.verbose, 2),
        only=tuple(args.only),
        skip=tuple(args.skip),
        name=args.name,
        columns=listed(args.columns),
        sort=args.sort,
        output_format=args.output_format,
        backend=tuple(b for b in (args.backend or "").split(",") if b) if not args.run else (),
        one_off=(args.run, *args.fields) if args.run else (),
        flags=FlagValues(owned),
    )


def _launch(args: argparse.Namespace, config: str, options: Any) -> int:
    from accelbench.run.launch import launch_local
    from accelbench.run.planning import load_and_plan

    # planned here first, without a framework: a bad config is one line, not one per process
    return launch_local(
        args.argv, args.processes, lambda n: load_and_plan(config, options, lambda: n)
    )


def _join(args: argparse.Namespace) -> None:
    """Join a many-process job before any case touches JAX."""
    given = (args.coordinator, args.num_processes, args.process_id)
    if args.multihost or any(v is not None for v in given):
        from accelbench.jax_backend.distributed import initialize
        from accelbench.platform import launchers, streams

        where = "--coordinator"
        if all(v is None for v in given):  # --multihost alone: the launcher's variables say
            found = launchers.detect()
            given, where = (found.coordinator, found.num_processes, found.process_id), found.where
            if args.verbose:
                print(f"joining as the {found.launcher} launcher says: {given}", file=sys.stderr)
        launchers.check_job(*given, where)
        streams.native_stdout_aside(args.verbose > 0)  # stdout: the rows' format alone
        initialize(*given)


def _run(args: argparse.Namespace) -> int:
    from accelbench.run.planning import check_options, load_and_plan

    if args.run == "":
        raise UserError("names no benchmark (see `microbench list`)", key="--run")
    if args.run and args.config is not None:
        raise UserError("give --config or --run, not both", key="--run")
    config = args.run or (QUICKSTART if args.config is None else args.config)
    options = _run_options(args)
    check_options(options)
    if args.processes:
        return _launch(args, config, options)
    _join(args)
    loaded, cases = load_and_plan(config, options)
    from accelbench.run.session import run_planned  # the machinery, once the config is known good

    code = run_planned(loaded, cases, options)
    from accelbench.platform import processes

    if processes.count() > 1:  # every process leaves the job in order, after its last case
        from accelbench.jax_backend.distributed import leave

        leave(code, options.verbosity > 0)
    return code


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "runs": store_commands.runs,
    "run": _run,
    "list": _list,
    "compare": store_commands.compare,
    "ab": store_commands.ab,
    "report": store_commands.report,
    "validate": _validate,
    "traces": _traces,
    "history": history_commands.history,
    "publish": history_commands.publish,
}


def _own_command_line(name: str) -> Any:
    """The dialect command line called `name` (`microbench jax-bench ...`), if one is."""
    from accelbench.config.dialects import dialects

    return next((d.command for d in dialects() if d.command and d.command.name == name), None)


def main(argv: Sequence[str] | None = None) -> int:
    take_signals()
    given = list(sys.argv[1:] if argv is None else argv)
    # discovering the dialects imports their modules: a signal meanwhile is a quiet exit, too
    return serve(lambda: _dispatch(given))


def _dispatch(argv: list[str]) -> int:
    if argv and (own := _own_command_line(argv[0])) is not None:
        return int(own.main(argv[1:]))  # its own parser reads every argument
    args, fields = build_parser().parse_known_args(argv)
    if fields and getattr(args, "run", None) is None:
        build_parser().error(f"unrecognized arguments: {' '.join(fields)}")
    if getattr(args, "run", None) and getattr(args, "backend", None):  # a field of the one-off
        fields = [*fields, "--backend", args.backend]
    args.fields = fields
    args.argv = argv
    from accelbench.platform import chatter

    chatter.route(int(getattr(args, "verbose", 0) or 0))
    return COMMANDS.get(args.command, _run)(args)  # else a dialect's alias of run


def entry(argv: Sequence[str] | None = None) -> NoReturn:
    guarded_main(lambda: main(argv))


if __name__ == "__main__":
    entry()
