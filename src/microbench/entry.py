"""The program's entry points (the `microbench` and `jax-bench` commands, `python -m microbench`,
run_benchmark.py).

A Ctrl-C or SIGTERM that lands while the program is still importing ends it quietly, as one at any
later moment does: `cli.main` replaces this handler with the run's own as soon as it starts."""

# the C module: `signal` itself imports enum and more, long enough for a Ctrl-C to land first
import _signal
import os


def _quit_while_importing(signum: int, frame: object) -> None:
    os.write(2, b"interrupted\n")
    os._exit(128 + signum)  # nothing is open or written yet: there is nothing to close


try:
    for _number in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(_number, _quit_while_importing)
except ValueError:  # imported outside the main thread (a test): the caller's handlers stay
    pass

from microbench.cli import entry  # noqa: E402


def jax_bench() -> None:
    """The `jax-bench` command (the reference harness's command line)."""
    from microbench.jax_bench_cli import entry as jax_bench_entry

    jax_bench_entry()


__all__ = ["entry", "jax_bench"]
