"""Imported first by every entry point (the `microbench` and `jax-bench` commands, `python -m`, the
modules run as scripts): a Ctrl-C or SIGTERM that lands while the program is still importing ends it
quietly, as one at any later moment does. `cli.main` replaces this handler with the run's own as soon
as it starts. Only the C signal module is used: `signal` itself imports enum and more, long enough for
a Ctrl-C to land first."""

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
