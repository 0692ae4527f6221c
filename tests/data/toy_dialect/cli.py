"""toy: the toy dialect's own command line (`microbench toy --config F --toy-scale N --out DIR`)."""

from __future__ import annotations

from collections.abc import Sequence

from accelbench.core.options import RunOptions
from accelbench.run.command_line import OneLineParser, command_main
from toy_dialect import SCALE


def run(argv: Sequence[str]) -> int:
    parser = OneLineParser(prog="toy")
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", default="results")
    SCALE.add_to(parser)
    args = parser.parse_args(argv)
    options = RunOptions(output_dir=args.out, progress=False)
    options = options.with_flags(**{SCALE.dest: getattr(args, SCALE.dest)})
    from accelbench.run.planning import load_and_plan
    from accelbench.run.session import run_planned

    loaded, cases = load_and_plan(args.config, options)
    return run_planned(loaded, cases, options)


def main(argv: Sequence[str]) -> int:
    return command_main(lambda: run(argv))


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
