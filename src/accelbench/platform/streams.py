"""Standard output and error that fail in one line (`> /dev/full`: a sentence, not a traceback); every
row is on disk before anything about it is printed."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from typing import Any, TextIO

from accelbench.errors import visible


class OutputLost(Exception):
    """A write to standard output or error failed for a reason other than a reader leaving."""


class GuardedStream:
    """A text stream whose failed writes raise OutputLost (a closed pipe stays BrokenPipeError: the
    reader of `| head` left)."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream, self._name = stream, name
        self.spelt = False  # each control character spelt out: what a library prints from files

    def _guarded(self, action: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, action)(*args)
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise
            raise OutputLost(
                f"cannot write to standard {self._name}: {error.strerror or error}"
            ) from None

    def write(self, text: str) -> int:
        if self.spelt:
            text = "\n".join(visible(line) for line in text.split("\n"))
        try:
            return int(self._guarded("write", text))
        except UnicodeEncodeError:  # a terminal without UTF-8 (LANG=C): the same text in ASCII
            return int(self._guarded("write", in_ascii(text, self._stream.encoding or "ascii")))

    def flush(self) -> None:
        self._guarded("flush")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


# what the program prints beyond ASCII, as a terminal without UTF-8 shows it
ASCII_FORMS = str.maketrans(
    {
        "µ": "u",
        "×": "x",
        "±": "+-",
        "—": "-",
        "–": "-",
        "…": "...",
        "≤": "<=",
        "≥": ">=",
        "√": "sqrt",
    }
)


def in_ascii(text: str, encoding: str) -> str:
    """Text a stream of `encoding` takes: our symbols in ASCII forms, anything else escaped (`\\u2192`)."""
    return text.translate(ASCII_FORMS).encode(encoding, "backslashreplace").decode(encoding)


def guard_standard_streams() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, GuardedStream):
            setattr(sys, name, GuardedStream(stream, {"stdout": "output", "stderr": "error"}[name]))


def spell_out_controls() -> None:
    """From now on, what a library prints of file names raw (xprof's viewer) has its controls spelt out."""
    guard_standard_streams()
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, GuardedStream):
            stream.spelt = True


def native_stdout_aside(verbose: bool) -> None:
    """Standard output kept for our own output in a process that joins a job: native code's (gloo's
    `[Gloo] Rank 0 is connected ...`) goes to stderr under -v, else nowhere."""
    sys.stdout.flush()
    kept = os.dup(1)
    aside = 2 if verbose else os.open(os.devnull, os.O_WRONLY)
    os.dup2(aside, 1)
    stream = io.TextIOWrapper(
        io.FileIO(kept, "w"), encoding=sys.stdout.encoding, errors=sys.stdout.errors,
        line_buffering=True,
    )  # fmt: skip
    sys.stdout = GuardedStream(stream, "output")


def discard_output() -> None:
    """After a failed write, what is buffered or printed at shutdown goes nowhere (no 'Exception ignored')."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.__stdout__, sys.__stderr__, sys.stdout):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(null, stream.fileno())
