"""jax-bench: the reference harness's own command line, run by this project (docs/jax_bench.md).

    jax-bench --config configs/jax_bench/7x/2x2x1/gemm_generalized.yaml --output results
    jax-bench --run gemm_generalized --m 4096 --in_dtype bfloat16 --transpose_b

Upstream's flags and meanings: exactly one of --config and --run; after --run NAME, NAME's fields as
--field value (--field=value, a bare boolean flag is true); --output is a folder that receives
summary.csv and detailed.json (and this project's results files beside them); --hw names a hardware
preset for entries that name no system; --xprof_dir is where traces go. One flag of this project's:
--conditions strict measures the file under this project's conditions instead of upstream's. Bad
input is one line and exit 2, as for `microbench`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

from accelbench.benchmarks.flags import CONDITIONS, HW, UPSTREAM_FILES, XPROF_DIR
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, visible
from accelbench.run.command_line import OneLineParser, add_run_files, command_main, run_files

OWN_FLAGS = (HW, XPROF_DIR, CONDITIONS)


def upstream_options(folder: str, option: str, files: RunOptions, **flags: Any) -> RunOptions:
    """A reference command line's options (jax-bench's, TPUMS's): rows, summary.csv and
    detailed.json in `folder` by upstream's names; `files`: --resume/--overwrite; `flags` by dest."""
    if not folder:
        raise UserError("is empty; name an output folder", key=option)
    options = dataclasses.replace(files, output_dir=folder, output_dir_given=True)
    return options.with_flags(**{UPSTREAM_FILES.dest: True, **flags})


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="jax-bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,  # `--m 1024` is a field of --run, never an abbreviation
    )
    parser.add_argument("--config", help="YAML config path")
    parser.add_argument("--run", help="run one registered benchmark (its fields follow)")
    parser.add_argument("--output", default="results", help="output directory (default: results)")
    for flag in OWN_FLAGS:
        flag.add_to(parser)
    add_run_files(parser)
    return parser


def _traced(fields: list[str], xprof_dir: str | None) -> list[str]:
    """Under --run, --xprof_dir asks for a trace in that folder: xprof_timing is on unless the fields
    turn it off (upstream ignores --xprof_dir under --run, so it could never trace there)."""
    named = {f.lstrip("-").split("=", 1)[0].replace("-", "_") for f in fields if f.startswith("-")}
    return (
        [*fields, "--xprof_timing", "true"] if xprof_dir and "xprof_timing" not in named else fields
    )


def run(argv: Sequence[str]) -> int:
    args, rest = build_parser().parse_known_args(argv)
    if args.config is not None and args.run is not None:
        raise UserError("--config and --run are mutually exclusive; give one", key="--run")
    if args.config is None and args.run is None:
        raise UserError("give --config <yaml> or --run <benchmark_name>", key="(command line)")
    if args.config is not None and rest:
        print(visible(f"warning: unexpected arguments ignored: {' '.join(rest)}"), file=sys.stderr)
    if args.run == "":
        raise UserError("names no benchmark (see `microbench list --jax-bench`)", key="--run")
    flags = {f.dest: getattr(args, f.dest) for f in OWN_FLAGS}
    options = upstream_options(args.output, "--output", run_files(args), **flags)
    if args.run:
        one_off = (args.run, *_traced(rest, options.flag(XPROF_DIR)))
        options = dataclasses.replace(options, one_off=one_off)
    from accelbench.run.planning import run_config

    return run_config(args.run or args.config, options)


def main(argv: Sequence[str]) -> int:
    """`jax-bench ARGS` (also `microbench jax-bench ARGS`): its exit code."""
    return command_main(lambda: run(argv))
