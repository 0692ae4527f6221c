"""The program's entry points (the `microbench`, `jax-bench` and `tpums` commands, `python -m microbench`,
run_benchmark.py).

A Ctrl-C or SIGTERM that lands while the program is still importing ends it quietly, as one at any
later moment does: `cli.main` replaces this handler with the run's own as soon as it starts."""

import microbench.quiet_start  # noqa: F401  (first: the handler for a signal while importing)
from microbench.cli import entry  # noqa: E402


def jax_bench() -> None:
    """The `jax-bench` command (the reference harness's command line)."""
    from microbench.jax_bench_cli import entry as jax_bench_entry

    jax_bench_entry()


def tpums() -> None:
    """The `tpums` command (the reference's third-generation command line)."""
    from microbench.tpums_cli import entry as tpums_entry

    tpums_entry()


__all__ = ["entry", "jax_bench", "tpums"]
