"""Ctrl-C that is never lost: the first one raises a flag that the runner checks between cases and the
timers between iterations; a second one stops at once. Neither leaves a traceback (the session turns
the resulting KeyboardInterrupt into the resume message).

A KeyboardInterrupt raised by Python's default handler can land inside a garbage-collector callback
(JAX installs one), where it is printed as "ignored" and lost; a flag cannot be lost that way.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_requested = threading.Event()


def requested() -> bool:
    return _requested.is_set()


def check() -> None:
    """Stop here if Ctrl-C was pressed (called between cases and between timed iterations)."""
    if _requested.is_set():
        raise KeyboardInterrupt


def _on_sigint(signum: int, frame: Any) -> None:
    if _requested.is_set():
        raise KeyboardInterrupt  # the second Ctrl-C: now
    _requested.set()
    print(
        "\nCtrl-C: stopping at the next iteration; press it again to stop now",
        file=sys.stderr,
        flush=True,
    )


@contextmanager
def handled() -> Iterator[None]:
    """SIGINT as a flag for the duration of a run (main thread only; elsewhere Python's default)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _requested.clear()
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
