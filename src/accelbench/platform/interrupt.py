"""Ctrl-C that is never lost: the first raises a flag the runner checks between cases and the timers
between iterations; a second stops at once; no traceback (the session prints the resume message).
SIGTERM (a scheduler, `kill`) is Ctrl-C too; the exit code says which (130 SIGINT, 143 SIGTERM).
A KeyboardInterrupt raised inside a garbage-collector callback (JAX installs one) is printed as
"ignored" and lost; a flag is not (`keep_swallowed`, outside a run too)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class CaseTimeout(BaseException):
    """A case's in-process timeout (SIGALRM, run/runner); not an Exception, so no `except Exception`
    in the case's code (a library's fallback) turns it into another failure or swallows it."""


_requested = threading.Event()
STOPPING = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []  # the first stopping signal of this run


def exit_code() -> int:
    """128 + the signal that stopped the run (Ctrl-C where none was recorded)."""
    return 128 + int(_received[0] if _received else signal.SIGINT)


def stopped_by_signal(code: int) -> bool:
    return code > 128


def requested() -> bool:
    return _requested.is_set()


def pause(seconds: float) -> None:
    """Idle for `seconds` (a cooldown between cases), cut short by Ctrl-C or SIGTERM."""
    _requested.wait(seconds)
    check()


def check() -> None:
    """Stop here if Ctrl-C was pressed (called between cases and between timed iterations)."""
    if _requested.is_set():
        raise KeyboardInterrupt


def request(signum: int) -> None:
    """A stop asked for without a signal to this process (a job's launcher gone), as that signal."""
    _received[:] = [signum]
    _requested.set()


def _on_signal(signum: int, frame: Any) -> None:
    if _requested.is_set():
        raise KeyboardInterrupt  # the second Ctrl-C (or SIGTERM): now
    request(signum)
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    print(
        f"\n{name}: stopping at the next iteration; press Ctrl-C again to stop now",
        file=sys.stderr,
        flush=True,
    )


def _unraisable(hook: Any) -> Any:
    def keep(unraisable: Any) -> None:
        if issubclass(unraisable.exc_type, (KeyboardInterrupt, SystemExit)):
            _requested.set()  # Ctrl-C raised where Python cannot propagate it: kept as the flag
            return
        if issubclass(unraisable.exc_type, CaseTimeout):  # repeated until one lands (run/runner)
            return
        hook(unraisable)

    keep.keeps_interrupts = True  # type: ignore[attr-defined]
    return keep


def keep_swallowed() -> None:
    """Route Ctrl-C exits that Python would print as "Exception ignored" into the flag (once)."""
    if not getattr(sys.unraisablehook, "keeps_interrupts", False):
        sys.unraisablehook = _unraisable(sys.unraisablehook)


@contextmanager
def handled() -> Iterator[None]:
    """SIGINT and SIGTERM as a flag during a run (main thread only); one kept from before stays set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in STOPPING}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _requested.clear()
