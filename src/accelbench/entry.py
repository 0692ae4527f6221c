"""The program's entry points: `microbench`, and each dialect's command line under its console
script's name (`jax-bench`, `tpums`: the same as `microbench jax-bench ...`)."""

import accelbench.quiet_start  # noqa: F401  (first: the handler for a signal while importing)
from accelbench.cli import entry  # noqa: E402


def dialect_command() -> None:
    import os
    import sys

    entry([os.path.basename(sys.argv[0]), *sys.argv[1:]])


__all__ = ["dialect_command", "entry"]
