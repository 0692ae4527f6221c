"""tpums: the reference's third-generation command line, run by this project (docs/tpums.md).

    tpums platform describe
    tpums benchmark list [--experimental] [--aliases]
    tpums benchmark run gemm --m 4096 8192 --in_dtype bfloat16 [--xprof_timing]
    tpums benchmark run-config configs/tpums/tpu7x/2x2x1/gemm.yaml --output_dir results
    tpums suite run configs/tpums/canonical_suite.yaml --output_dir nightly
    tpums suite submit configs/tpums/canonical_suite.yaml --bucket gs://BUCKET
    tpums suite collect gs://BUCKET/canonical_7x_default --output_dir report

`run` takes each of the benchmark's fields as --field v1 [v2 ...] (one-letter fields as -f too), from a
parser built on the field declarations (`benchmark_parser`): several values are a Cartesian sweep run
in the benchmark's field order (at most 1000 combinations); booleans are true or false; enum fields
take their canonical values. `run` and `run-config` take --output_dir (summary.csv, detailed.json and
this project's results files), --xprof_dir and --xla_flags_file_path; arguments they do not know are
passed over with a warning, as TPUMS passes them over. Bad input is one line and exit 2, as for
`microbench`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

from accelbench.benchmarks.flags import STRICT_LAYOUT, XPROF_DIR
from accelbench.catalogue import Param
from accelbench.config.expand import MAX_COMBINATIONS, Axis, Expansion, Given
from accelbench.core.case import DEVICE_MODES
from accelbench.dialects.jax_bench.cli import upstream_options
from accelbench.errors import UserError, visible
from accelbench.run.command_line import OneLineParser, add_run_files, command_main, run_files

PACKAGES = ("jax", "jaxlib", "libtpu")  # whose versions `platform describe` gives


def _common(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--output_dir", default="results", help="where results go (results)")
    XPROF_DIR.add_to(parser)
    parser.add_argument(
        "--xla_flags_file_path",
        help="a YAML of per-benchmark TPU flags replacing the packaged set (TPU only)",
    )
    add_run_files(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="tpums",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    groups = parser.add_subparsers(dest="group", required=True)
    plat = groups.add_parser("platform", help="the machine, as JSON")
    plat.add_subparsers(dest="command", required=True).add_parser("describe").set_defaults(
        handler=_describe
    )
    bench = groups.add_parser("benchmark", help="list, run or run a config")
    commands = bench.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="production benchmark names, as JSON")
    listing.add_argument("--experimental", action="store_true", help="the hidden ones too")
    listing.add_argument("--aliases", action="store_true", help="the earlier names too")
    listing.set_defaults(handler=_list)
    run = commands.add_parser(
        "run", help="one benchmark; its fields as --field v1 [v2 ...]", add_help=False
    )
    run.add_argument("name", nargs="?", help="the benchmark (tpums benchmark list names them)")
    run.add_argument("-h", "--help", action="store_true", help="the benchmark's fields")
    run.set_defaults(handler=_run_one)
    config = commands.add_parser("run-config", help="a TPUMS YAML file")
    config.add_argument("file")
    config.set_defaults(handler=_run_config)
    _common(config)
    STRICT_LAYOUT.add_to(config)
    config.add_argument(
        "--xprof_timing",
        action="store_true",
        help="ignored, as TPUMS ignores it here: the file's xprof_timing decides",
    )
    suite = groups.add_parser("suite", help="a suite file's configs in turn, one report")
    suites = suite.add_subparsers(dest="command", required=True)
    run_suite = suites.add_parser(
        "run", help="suite_name, description, configs: each run, then consolidated_report.md/.html"
    )
    run_suite.add_argument("file")
    run_suite.set_defaults(handler=_suite)
    run_suite.add_argument("--output_dir", default="results", help="where results go (results)")
    XPROF_DIR.add_to(run_suite)
    STRICT_LAYOUT.add_to(run_suite)
    add_run_files(run_suite)
    _suite_on_a_cluster(suites)
    return parser


def _suite_on_a_cluster(suites: Any) -> None:
    """`suite submit` (its options are the Cluster's fields) and `suite collect`."""
    from accelbench.dialects.tpums.cluster import Cluster, spelling

    submit = suites.add_parser(
        "submit",
        help="one JobSet a config on GKE, via Kueue (docs/tpums.md: run it on GKE tonight)",
    )
    submit.add_argument("file", help="the suite file")
    for f in fields(Cluster):  # a switch, else a value read by the field's `parse` (if any)
        shown = f.metadata.get("shown", f.default if f.default not in ("", None) else "none")
        switch = {"action": argparse.BooleanOptionalAction}
        how = switch if isinstance(f.default, bool) else {"type": f.metadata.get("parse")}
        submit.add_argument(
            spelling(f), dest=f.name, default=f.default, help=f"{f.metadata['doc']} (default: {shown})",
            **how,
        )  # fmt: skip
    submit.add_argument(
        "--filter", action="append", default=[], help="configs whose path holds this (default: all)"
    )
    submit.add_argument(
        "--topologies", default="", help="only these slices, e.g. 2x2x1,2x2x2 (default: all)"
    )
    submit.add_argument(
        "--dry-run",
        action="store_true",
        help="print the manifests, build and submit nothing (default: off)",
    )
    submit.set_defaults(handler=_submit)
    collect = suites.add_parser("collect", help="the consolidated report of a suite's run")
    collect.add_argument("path", help="gs://BUCKET/<suite> (its runs), a run's folder, or a folder")
    collect.add_argument("--run-id", help="which run (default: the latest)")
    collect.add_argument(
        "--output_dir", default="results", help="where the report goes (default: results)"
    )
    collect.set_defaults(handler=_collect)


def describe() -> dict[str, Any]:
    """TPUMS's platform fields, and the device kind and platform (TPUMS refuses a machine not a TPU)."""
    from accelbench.platform.environment import installed
    from accelbench.platform.frameworks import jax

    devices = jax.devices()
    first = devices[0]
    kind = str(getattr(first, "device_kind", ""))
    bounds = getattr(first, "coords", None) and [
        max(getattr(d, "coords", (0,))[i] for d in devices) + 1 for i in range(len(first.coords))
    ]
    return {
        "tpu_type": kind.lower().replace("tpu ", "") if first.platform == "tpu" else None,
        "topology": "x".join(map(str, bounds)) if bounds else None,
        "total_devices": len(devices),
        "local_devices": jax.local_device_count(),
        "process_count": jax.process_count(),
        "process_index": jax.process_index(),
        "python_version": platform.python_version(),
        **{f"{package}_version": installed().get(package) for package in PACKAGES},
        "platform": first.platform,
        "device_kind": kind,
    }


def _boolean(text: str) -> bool:
    """TPUMS's boolean on the command line: true or false, any case; nothing else."""
    if text.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"must be true or false, got {text!r}")
    return text.lower() == "true"


def _typed(param: Param) -> Callable[[str], Any]:
    """How argparse reads one value of `param` (an enum: its canonical values, in TPUMS's words)."""
    if param.kind == "bool":
        return _boolean
    if param.kind == "enum":

        def canonical(text: str) -> str:
            try:
                return str(param.validate(text, param.name))
            except UserError as error:
                raise argparse.ArgumentTypeError(error.message) from None

        return canonical
    kind = param.python_type
    return kind if kind in (int, float) else str


def benchmark_parser(name: str) -> argparse.ArgumentParser:
    """`tpums benchmark run NAME`'s parser, from the benchmark's field declarations."""
    from accelbench.benchmarks.base import get_tpums

    entry = get_tpums(name, "benchmark run")
    parser = OneLineParser(prog=f"tpums benchmark run {name}", allow_abbrev=False)
    group = parser.add_argument_group(f"{entry.config_name} parameters")
    for p in entry.fields:
        flags = (f"-{p.name}", f"--{p.name}") if len(p.name) == 1 else (f"--{p.name}",)
        group.add_argument(
            *flags,
            dest=f"field_{p.name}",
            nargs="+",
            action="extend",
            type=_typed(p),
            metavar=_metavar(p),
            help=f"{p.doc or p.name} (default: {p.default})",
        )
    run = parser.add_argument_group("run options")
    run.add_argument("--xprof_timing", action="store_true", help="trace the timed loop")
    run.add_argument(
        "--xprof_device_mode",
        choices=DEVICE_MODES,
        help="which device's trace times the case (max_device: the slowest)",
    )
    _common(run)
    return parser


def _metavar(param: Param) -> str:
    if param.kind == "bool":
        return "{true,false}"
    return "{" + ",".join(map(str, param.choices)) + "}" if param.choices else param.name.upper()


def field_values(name: str, args: Sequence[str]) -> tuple[Expansion, argparse.Namespace]:
    """`--field v1 [v2 ...]` of benchmark `name`: single values a case, several a sweep in the
    benchmark's field order (as TPUMS's), and the run's options."""
    from accelbench.benchmarks.base import TPUMS, get_tpums

    entry = get_tpums(name, "benchmark run")
    if entry.is_alias:
        current = next(n for n, e in TPUMS.items() if e.v2 == entry.v2 and not e.is_alias)
        raise UserError(f"is an earlier name: run {current!r}", key=name)
    options, unknown = benchmark_parser(name).parse_known_args(args)
    _said_ignored(unknown, f"benchmark run {name}")
    given = {p.name: getattr(options, f"field_{p.name}") for p in entry.fields}
    values = {k: v for k, v in given.items() if v is not None}
    expansion = Expansion(
        ({k: Given(v[0], f"--{k}") for k, v in values.items() if len(v) == 1},),
        tuple(Axis(k, tuple(v), f"--{k}") for k, v in values.items() if len(v) > 1),
    )
    if expansion.total > MAX_COMBINATIONS:
        raise UserError(
            f"{expansion.total:,} combinations; at most {MAX_COMBINATIONS} in one invocation",
            key="benchmark run",
        )
    return expansion, options


def _said_ignored(unknown: Sequence[str], command: str) -> None:
    """TPUMS ignores arguments it does not know (a launcher's own flags); so does this, aloud."""
    if unknown:
        said = f"warning: tpums {command}: ignored (not its options): {' '.join(unknown)}"
        print(visible(said), file=sys.stderr)


def run(argv: Sequence[str]) -> int:
    args, rest = build_parser().parse_known_args(argv)
    return int(args.handler(args, rest))


def _describe(args: argparse.Namespace, rest: Sequence[str]) -> int:
    try:
        described = describe()
    except RuntimeError as error:  # a runtime that cannot start: said on one line, as TPUMS
        print(visible(f"Error: {error}"), file=sys.stderr)
        return 1
    print(json.dumps(described, indent=2))
    return 0


def _suite(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from accelbench.dialects.tpums.suite import run_suite

    if rest:
        raise UserError(f"unexpected arguments: {' '.join(rest)}", key="suite run")
    return run_suite(args.file, args.output_dir, run_files(args), _owned(args))


def _owned(args: argparse.Namespace) -> dict[str, Any]:
    """The dialect's flags as the command gave them (a command without one: its default)."""
    return {f.dest: getattr(args, f.dest, f.default) for f in (XPROF_DIR, STRICT_LAYOUT)}


def _submit(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from accelbench.dialects.tpums.cluster import Cluster, checked
    from accelbench.dialects.tpums.nightly import submit

    _said_ignored(rest, "suite submit")
    cluster = checked(Cluster(**{f.name: getattr(args, f.name) for f in fields(Cluster)}))
    topologies = [t.strip() for t in args.topologies.split(",") if t.strip()]
    return submit(args.file, cluster, args.filter, topologies, args.dry_run)


def _collect(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from accelbench.dialects.tpums.suite import collect

    _said_ignored(rest, "suite collect")
    return collect(args.path, args.output_dir, args.run_id)


def _list(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from accelbench.benchmarks.base import listed

    tiers = ("production", *(("experimental",) if args.experimental else ()))
    names = listed((*tiers, *(("alias",) if args.aliases else ())))
    print(json.dumps([{"task": name} for name in names], indent=2))
    return 0


def _run_one(args: argparse.Namespace, rest: Sequence[str]) -> int:
    if args.help and not args.name:  # `benchmark run --help`: how to call it, and the names
        from accelbench.benchmarks.base import listed

        print("usage: tpums benchmark run NAME [--field v1 [v2 ...]] ... (NAME --help: its fields)")
        print("\nSupported Tasks:")
        for tier in ("production", "experimental"):
            print(f"  {tier}: " + ", ".join(listed((tier,))))
        return 0
    if not args.name:
        raise UserError("names no benchmark (tpums benchmark list names them)", key="benchmark run")
    if args.help:
        benchmark_parser(args.name).print_help()
        return 0
    expansion, options = field_values(args.name, rest)
    return _execute(options, _command_line(args.name, expansion, options))


def _run_config(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from accelbench.config.loader import load_config
    from accelbench.config.yaml_reader import read_yaml
    from accelbench.dialects.tpums import suite_file
    from accelbench.dialects.tpums.plan import MISSING

    _said_ignored([*rest, *(["--xprof_timing"] if args.xprof_timing else [])], "run-config")
    if not isinstance(data := read_yaml(args.file), dict) or "benchmark" not in data:
        said = suite_file(data) if isinstance(data, dict) else None
        raise UserError(said or MISSING, file=args.file, key="(top level)")
    return _execute(args, load_config(args.file))


def _execute(args: argparse.Namespace, loaded: Any) -> int:
    """A loaded TPUMS config run into --output_dir, with --xla_flags_file_path's flag sets."""
    from accelbench.benchmarks.tpu_flags import flag_sets, with_flags
    from accelbench.config.planner import plan
    from accelbench.run.planning import check_options, jax_device_count
    from accelbench.run.session import run_planned

    sets = flag_sets(args.xla_flags_file_path) if args.xla_flags_file_path else None
    options = upstream_options(args.output_dir, "--output_dir", run_files(args), **_owned(args))
    check_options(options)
    cases = plan(loaded, options, jax_device_count)
    return run_planned(loaded, with_flags(cases, sets) if sets is not None else cases, options)


def _command_line(name: str, expansion: Expansion, options: argparse.Namespace) -> Any:
    """`benchmark run NAME --field ...`: its cases, planned by the dialect from the typed values."""
    from accelbench.config.loader import LoadedConfig
    from accelbench.dialects.tpums.plan import command_line

    xprof, mode = options.xprof_timing, options.xprof_device_mode
    raw = {"benchmark run": name, "values": repr(expansion)}
    return LoadedConfig(
        name, "tpums", None, raw, one_off=lambda r: command_line(name, expansion, xprof, mode, r)
    )


def main(argv: Sequence[str]) -> int:
    """`tpums ARGS` (also `microbench tpums ARGS`): its exit code."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return command_main(lambda: run(argv))
