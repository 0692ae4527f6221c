"""The program's entry points: the `microbench` command (`python -m accelbench`, run_benchmark.py),
and each dialect's own command line under its name (`jax-bench`, `tpums`: the console script's name
picks the dialect's `Command`; `microbench jax-bench ...` is the same).

A Ctrl-C or SIGTERM that lands while the program is still importing ends it quietly, as one at any
later moment does: `cli.main` replaces this handler with the run's own as soon as it starts."""

import accelbench.quiet_start  # noqa: F401  (first: the handler for a signal while importing)
from accelbench.cli import entry  # noqa: E402


def dialect_command() -> None:
    """A console script named after a dialect's command line runs it: `microbench NAME ARGS`."""
    import os
    import sys

    entry([os.path.basename(sys.argv[0]), *sys.argv[1:]])


__all__ = ["dialect_command", "entry"]
