"""Where tables are printed: fitted to the terminal, or unwrapped when the output goes to a file or pipe."""

from __future__ import annotations

import sys

from rich.console import Console

PIPE_WIDTH = 200  # piped output is read by tools and people with wide windows: never wrap a row


def table_console() -> Console:
    return Console() if sys.stdout.isatty() else Console(width=PIPE_WIDTH)
