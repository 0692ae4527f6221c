"""Imported first by every entry point: a Ctrl-C or SIGTERM while still importing is a quiet exit
(`cli.main` then installs its own). The C signal module only: `signal` imports enum, long enough for a
Ctrl-C to land first."""

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
