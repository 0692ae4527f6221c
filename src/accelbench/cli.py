"""microbench: device-accurate accelerator microbenchmarks. Commands: run (a config's benchmarks), list
(the ops), compare (two runs), runs (the stored ones), report (charts and pages), validate (a config,
without running it), and each dialect's own (jax-bench, tpums, dashboard). Bad input: one line on
stderr, exit code 2.
Example: microbench run   (the CPU quick-start; then: microbench report results/quickstart.csv)

Every option is declared once as data (`Command`, `arg`; a dialect's or output format's as its `Flag`)."""

from __future__ import annotations

import accelbench.quiet_start  # noqa: F401  (first: a signal while importing is a quiet exit)

# isort: split

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from accelbench import __version__
from accelbench.config.dialects import Lazy as Imported
from accelbench.errors import UserError, counted
from accelbench.limits import MAX_CASES, MAX_ITERATIONS, MAX_PROCESSES
from accelbench.run.command_line import (
    RUN_FILES,
    Arg,
    Command,
    Group,
    Lazy,
    OneLineParser,
    Option,
    arg,
    command,
    count,
    guarded_main,
    run_files,
    seconds,
    serve,
    setting_flags,
    take_signals,
)

TABLE_FORMATS = ("table", "csv", "json", "markdown")
COLUMNS = (
    "the table's columns after what tells rows apart (median, min, mean, std, p10, p90, max, samples, "
    "noise, tflops, gbps, peak, speedup, sqnr, timing, audit, kernels, shape, spread)"
)
SORT = "order rows by a column (--sort=-COLUMN: descending)"
JSON = arg("--json", action="store_true", help="machine-readable output")
MAX_CASE_COUNT = arg(
    "--max-cases", type=count(1, MAX_CASES), help="refuse configs expanding to more cases"
)
THRESHOLD = arg("--threshold", type=float, default=0.05, help="relative change that counts")
RESULTS_DIR = "a folder, file:// or gs:// URL (default: results)"
STORE = (  # which stored runs a command reads
    arg("--config", help="whose runs (default: every run under --results-dir)"),
    arg("--results-dir", default="results", help=f"where stored runs are found: {RESULTS_DIR}"),
)


def _format(formats: Sequence[str], help: str = "") -> Arg:
    shown = f"the table to standard output: {', '.join(formats)} (default: table)"
    return arg(
        "--format", dest="output_format", choices=formats, default="table", help=help or shown
    )


def _view(columns: bool = True, formats: Sequence[str] = TABLE_FORMATS, sort: str = SORT) -> Any:
    """Which columns a table shows, in which order its rows come, and (on screen) in what format."""
    shown = (arg("--columns", metavar="A,B,...", help=COLUMNS),) if columns else ()
    return (
        *shown,
        arg("--sort", metavar="KEY", help=sort),
        *([_format(formats)] if formats else []),
    )


def _compared(sort: str = SORT) -> Lazy:  # a comparison's view, in the comparison formats
    def view() -> Any:
        from accelbench.results.compare_formats import FORMATS

        return _view(False, tuple(FORMATS), sort)

    return Lazy(view)


def _stored(name: str) -> Any:  # a run-store command, imported when it runs
    return Imported(f"accelbench.run.store_commands:{name}")


def _ab_settings() -> list[Arg]:  # checked by their rules (run/ab.py): one line naming the flag
    from accelbench.core.case import AbSettings

    return [
        arg(
            f"--{f.name.replace('_', '-')}",
            help=f.metadata["doc"].replace("%", "%%") + f" (default {f.default})",
        )
        for f in dataclasses.fields(AbSettings)
    ]


RUN_OPTIONS: tuple[Option, ...] = (
    *_view(),
    arg("--output-dir", help="where rows go when the config names no csv_path (default: results)"),
    *RUN_FILES,
    Lazy(setting_flags),
    MAX_CASE_COUNT,
    arg(
        "--max-dim",
        type=count(1, 1 << 40),
        help="clamp every dimension to this (cases that become equal run once)",
    ),
    arg("--num-runs", type=count(1, MAX_ITERATIONS), help="override num_runs of every case"),
    *(
        arg(
            flag,
            action="append",
            default=[],
            metavar="PATTERN",
            help=f"{what} cases whose op or label matches (shell pattern; repeatable)",
        )
        for flag, what in (("--only", "run only"), ("--skip", "leave out"))
    ),
    arg("--isolate", action="store_true", help="run each case in its own process"),
    arg("--timeout", type=seconds, help="per-case timeout in seconds"),
    arg("--no-progress", action="store_true", help="no progress bar"),
    Group(
        arg(
            "-q",
            "--quiet",
            action="store_true",
            help="only errors and the final count (no bar, no tables)",
        ),
        arg(
            "-v",
            "--verbose",
            action="count",
            default=0,
            help="a line per case as it finishes, and the frameworks' warnings (-vv: all they log)",
        ),
    ),
    Group(
        arg(
            "--multihost",
            action="store_true",
            help="join a jax.distributed job found in the environment (TPU pod, GKE indexed job)",
        ),
        arg("--coordinator", help="HOST:PORT of process 0 (implies --multihost)"),
        arg("--num-processes", type=count(1, MAX_PROCESSES), help="processes in the job"),
        arg("--process-id", type=count(0, MAX_PROCESSES), help="this process's id"),
        arg(
            "--processes",
            type=count(1, MAX_PROCESSES),
            metavar="N",
            help="start N local CPU processes joined by jax.distributed and run there",
        ),
        title="many processes (collectives)",
    ),
)


def _owned_flags(command: str | None = None) -> list[Any]:
    """The flags the dialects and the output formats declare (for `command`), once each."""
    from accelbench.config.dialects import dialect_flags, dialects
    from accelbench.results.sinks import FLAGS

    every = [*dialect_flags(), *FLAGS, *(f for d in dialects() for f in d.sink_flags)]
    found = {f.dest: f for f in every if command is None or command in f.commands}
    return list(found.values())


def _run_options(command: str) -> tuple[Option, ...]:
    title = "owned by a dialect or an output format"
    owned = Lazy(lambda: [Group(*_owned_flags(command), title=title)])
    return (*RUN_OPTIONS, owned)


def _listings() -> list[Option]:
    from accelbench.config.dialects import dialects

    names = (
        arg(d.listing.option, dest=f"list_{d.name}", action="store_true", help=d.listing.help)
        for d in dialects()
        if d.listing is not None
    )
    return [Group(*names)]


class _Version(argparse.Action):
    """`--version`: the project's version and the commit it was built from (asked of git only here)."""

    def __call__(self, parser: Any, *_: Any) -> None:
        from accelbench.platform.environment import git_commit

        print(f"microbench {__version__} (commit {git_commit() or 'unknown'})")
        parser.exit()


def _list(args: argparse.Namespace) -> int:
    from accelbench.config.dialects import dialects
    from accelbench.run import listing

    for found in (d.listing for d in dialects() if getattr(args, f"list_{d.name}", False)):
        if found is not None and args.json:
            listing.print_json(found.records())
        elif found is not None:
            listing.print_table(found.title, found.columns, found.rows())
        return 0
    listing.print_json(listing.op_records()) if args.json else listing.print_ops()
    return 0


def _validate(args: argparse.Namespace) -> int:
    from accelbench.config.dialects import get_dialect
    from accelbench.core.flags import FlagValues
    from accelbench.core.options import RunOptions
    from accelbench.run.listing import CaseRecord, print_cases, print_json
    from accelbench.run.planning import load_and_plan

    owned = FlagValues({f.dest: getattr(args, f.dest, None) for f in _owned_flags("validate")})
    options = RunOptions(max_cases=args.max_cases, max_dim=args.max_dim, flags=owned)
    loaded, cases = load_and_plan(args.config, options)
    if args.json:
        own = get_dialect(loaded.dialect).case_fields
        print_json([CaseRecord.of(c, own) for c in cases])
    elif args.list:
        print_cases(cases)
    else:
        print(f"{args.config}: {counted(len(cases), 'case')}")
    return 0


def _options(args: argparse.Namespace) -> Any:
    """One RunOptions (imported here: `--help` stays light); options named as its fields as given."""
    from accelbench.core.flags import FlagValues
    from accelbench.core.options import RunOptions
    from accelbench.run.store_commands import listed

    named = {f.name for f in dataclasses.fields(RunOptions)}
    owned = {f.dest: getattr(args, f.dest, None) for f in _owned_flags()}
    return dataclasses.replace(
        RunOptions(**{k: v for k, v in vars(args).items() if k in named}),
        output_dir=args.output_dir or "results",
        output_dir_given=args.output_dir is not None,
        settings=run_files(args).settings,
        timeout_s=args.timeout,
        progress=not (args.no_progress or args.quiet),
        verbosity=-1 if args.quiet else min(args.verbose, 2),
        only=tuple(args.only),
        skip=tuple(args.skip),
        columns=listed(args.columns),
        backend=tuple(b for b in (args.backend or "").split(",") if b) if not args.run else (),
        one_off=(args.run, *args.fields) if args.run else (),
        flags=FlagValues(owned),
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
    from accelbench.run.store_commands import QUICKSTART

    if args.run == "":
        raise UserError("names no benchmark (see `microbench list`)", key="--run")
    if args.run and args.config is not None:
        raise UserError("give --config or --run, not both", key="--run")
    config = args.run or (QUICKSTART if args.config is None else args.config)
    options = _options(args)
    check_options(options)
    if args.processes:  # planned here first, without a framework: a bad config is one line
        from accelbench.run.launch import launch_local

        return launch_local(
            args.argv, args.processes, lambda n: load_and_plan(config, options, lambda: n)
        )
    _join(args)
    loaded, cases = load_and_plan(config, options)
    from accelbench.run.session import run_planned  # the machinery, once the config is known good

    code = run_planned(loaded, cases, options)
    from accelbench.platform import processes

    if processes.count() > 1:  # every process leaves the job in order, after its last case
        from accelbench.jax_backend.distributed import leave

        leave(code, options.verbosity > 0)
    return code


RUN = command(
    "run",
    "run the benchmarks a config describes, or one benchmark (--run)",
    "microbench run --config configs/gpu/fusion.yaml --only 'fusion_linear*'",
    _run,
    arg("--config", help="YAML config (default: configs/quickstart.yaml)"),
    arg(
        "--run",
        metavar="NAME",
        help="run one benchmark (a jax-bench name or an op) configured by the --field value "
        "arguments that follow, e.g. --run gemm_generalized --m 2048 --in_dtype bfloat16",
    ),
    arg(
        "--backend",
        metavar="NAMES",
        help="run every benchmark on these backends (jax, torch; comma-separated), whatever the "
        "config says",
    ),
    arg(
        "--name",
        metavar="LABEL",
        help="a label for this run in the run store (microbench runs; compare LABEL OTHER)",
    ),
    arg(
        "-o",
        "--output",
        metavar="FILE",
        help="every row to this CSV (its .jsonl twin beside it), whatever the config names",
    ),
    *_run_options("run"),
    allow_abbrev=False,  # `--m 1024` is a field of --run, not an abbreviation of --max-dim
)
LIST = command(
    "list",
    "list ops, their parameters and backends",
    "microbench list --json",
    _list,
    JSON,
    Lazy(_listings),
)
COMPARE = command(
    "compare",
    "compare two results files or stored runs, groups of one file (--by), or the last two runs",
    "microbench compare (the last two runs of what ran last); microbench compare a.csv b.csv; "
    "microbench compare run.csv --by backend",
    _stored("compare"),
    arg(
        "files",
        nargs="*",
        help="baseline candidate: results files (paths, file:// or gs:// URLs), or runs of "
        "--config by number or --name; one file with --by; none: the last two runs of what ran "
        "last (or of --config)",
    ),
    arg(
        "--config",
        help="whose runs numbers and names refer to (default: every run under --results-dir; a "
        "number is of the latest run's series)",
    ),
    arg(
        "--results-dir",
        default="results",
        help=f"where stored runs are looked for without --config: {RESULTS_DIR}",
    ),
    arg("--by", help="compare groups of this column (backend, implementation, recipe)"),
    arg(
        "--baseline",
        help="the --by value to compare the others against; without --by, the baseline: a file, "
        "URL, run or `latest` (the latest run of the candidate's series under --results-dir)",
    ),
    arg(
        "--fail-inconclusive",
        metavar="REASONS",
        help="inconclusive cases that fail the comparison (exit 1): those whose reason names one "
        "of these words (noisy, conditions, ...), or all; default none",
    ),
    THRESHOLD,
    arg("--json", action="store_true", help="machine-readable output (--format json)"),
    _compared("order cases by case, ratio or verdict (--sort=-KEY: descending)"),
)
AB = command(
    "ab",
    "measure two sides in alternating rounds of one run (A B, B A, ...): the verdict from the "
    "paired per-round ratios, so drift and the neighbours' load hit both alike",
    "microbench ab a.yaml b.yaml; microbench ab main HEAD --config c.yaml; microbench ab "
    "--command 'python old.py' 'python new.py'",
    Imported("accelbench.run.ab:run_ab"),
    arg("sides", nargs=2, metavar="SIDE", help="baseline then candidate"),
    Group(
        arg(
            "--config",
            help="the sides are git refs of this repository: run this config in a worktree of "
            "each (its code first on the path, the same interpreter)",
        ),
        arg("--command", dest="commands", action="store_true", help="the sides are shell commands"),
    ),
    Lazy(_ab_settings),
    arg("--output-dir", default="results/ab", help="where each round's results files go"),
    arg("-q", "--quiet", action="store_true", help="no line per round"),
    THRESHOLD,
    _compared(),
)
RUNS = command(
    "runs",
    "list the stored runs (every one under results/, or a config's): number, name, what ran, "
    "when, commit, host, rows",
    "microbench runs; then: microbench compare baseline candidate",
    _stored("runs"),
    *STORE,
    JSON,
)
REPORT = command(
    "report",
    "roofline, sweep and speedup charts, a Markdown summary and one HTML page",
    "microbench report results/quickstart.csv --output-dir report",
    _stored("report"),
    arg(
        "results",
        nargs="+",
        help="results CSVs (their .jsonl twins are read for the raw samples), folders of them or "
        "shell patterns: several make one overview",
    ),
    arg("--output-dir", default="report", help="where the charts and pages go"),
    arg(
        "--sample-charts",
        action="store_true",
        help="each case's samples over its run (by default only soaks and GPU-monitored cases)",
    ),
    *_view(formats=()),
)
VALIDATE = command(
    "validate",
    "load and expand a config without running it",
    "microbench validate --config configs/quickstart.yaml --list",
    _validate,
    arg("--config", required=True, help="the YAML config to check"),
    MAX_CASE_COUNT,
    arg("--max-dim", type=count(1, 1 << 40), help="as for run: clamp every dimension"),
    arg("--list", action="store_true", help="print every case the config expands to"),
    arg("--json", action="store_true", help="the cases as JSON"),
    Lazy(lambda: _owned_flags("validate")),
)
TRACES = command(
    "traces",
    "open a run's kept traces in xprof, on this machine only (127.0.0.1)",
    "microbench traces tr --port 8791",
    Imported("accelbench.run.trace_viewer:serve"),
    arg("logdir", help="the traces folder (a config's trace_dir, --xprof_dir)"),
    arg(
        "--port",
        type=count(1, 65535),
        help="its port on 127.0.0.1 (default 8791, or a free one where that is taken)",
    ),
)
HISTORY = command(
    "history",
    "each case's median over the stored runs in commit order, and the steps in it",
    "microbench history --case 'gemm*' --since 2026-11-01 --bisect",
    _stored("history"),
    *STORE,
    arg("--case", "--filter", metavar="PATTERN", help="cases whose label matches (shell pattern)"),
    arg("--since", metavar="DATE", help="runs of commits from this date (YYYY-MM-DD)"),
    _format(
        TABLE_FORMATS,
        "a line per case (table, markdown), a row per point (csv), or everything (json)",
    ),
    arg(
        "--bisect",
        action="store_true",
        help="for each step, the commits inside it (git, in --repo) and the `microbench ab` command "
        "that settles each",
    ),
    arg("--repo", default=".", help="the git checkout --bisect lists commits of (default: .)"),
)
PUBLISH = command(
    "publish",
    "upload a stored run (its results and record) to a bucket or folder",
    "microbench publish latest --to gs://bucket/nightly",
    _stored("publish"),
    arg("run", help="the run: its number, its --name, or latest"),
    arg("--to", required=True, metavar="URL", help="gs://bucket/prefix or file:///folder"),
    *STORE,
)
# after `run` and each dialect's shorthand of it, in their help's order
TABLE = (LIST, COMPARE, AB, RUNS, REPORT, VALIDATE, TRACES, HISTORY, PUBLISH)
COMMANDS = {c.name: c.main for c in (RUN, *TABLE) if c.main is not None}


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """`run`, its dialect shorthands, the table, and each dialect's own (`main` hands it every argument);
    with their options, or (`chosen`: the command named) only its own: `--help` reads none."""
    from accelbench.config.dialects import dialects

    parser = OneLineParser(prog="microbench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action=_Version, nargs=0, help="the version and its commit")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser, metavar="COMMAND"
    )
    aliases = [
        Command(
            a.name,
            a.summary,
            a.example,
            _run,
            (
                arg("--config", required=True, help="the YAML config to run"),
                arg(a.option, dest=a.flag.dest, required=True, help=a.flag.help),
                *_run_options(a.name),
            ),
            {},
            dict.fromkeys(("run", "output", "backend", "name")),
        )
        for d in dialects()
        for a in d.aliases
    ]
    own = [
        command(c.name, c.summary, f"microbench {c.name} --help", None, add_help=False)
        for d in dialects()
        if (c := d.command) is not None
    ]
    for each in (RUN, *aliases, *TABLE, *own):
        each.add_to(sub, chosen is None or each.name == chosen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    take_signals()
    given = list(sys.argv[1:] if argv is None else argv)
    # discovering the dialects imports their modules: a signal meanwhile is a quiet exit, too
    return serve(lambda: _dispatch(given))


def _dispatch(argv: list[str]) -> int:
    from accelbench.config.dialects import dialects

    named = (d.command for d in dialects() if d.command and argv and d.command.name == argv[0])
    if (own := next(named, None)) is not None:  # `microbench jax-bench ...`: its parser reads all
        return int(own.main(argv[1:]))
    parser = build_parser(next((a for a in argv if not a.startswith("-")), ""))
    args, fields = parser.parse_known_args(argv)
    if fields and getattr(args, "run", None) is None:
        parser.error(f"unrecognized arguments: {' '.join(fields)}")
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
