"""Third-party chatter kept off the terminal (a CUDA build without a GPU, an Enum registered twice):
Python warnings and the frameworks' records below ERROR go to one logger, shown by `-v` (warnings) and
`-vv` (all: Inductor's INFO is hundreds of lines a case). Our own messages are printed, not warned."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator

FRAMEWORK_LOGGERS = ("torch", "torchao", "jax", "jaxlib", "absl", "xprof", "triton")
ROUTED = "accelbench.chatter"
_level = logging.WARNING  # the frameworks' records kept: WARNING and above, all with -vv


class _ToSink(logging.Handler):
    """Records below ERROR to the chatter logger; errors to the terminal as before."""

    def __init__(self, sink: logging.Logger) -> None:
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.errors = logging.StreamHandler(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        (self.sink.handle if record.levelno < logging.ERROR else self.errors.handle)(record)


def route(verbosity: int = 0) -> None:
    """Warnings and the frameworks' records below ERROR to one logger, on stderr from `verbosity` 1."""
    global _level
    _level = logging.DEBUG if verbosity >= 2 else logging.WARNING
    logging.captureWarnings(True)
    sink = logging.getLogger(ROUTED)
    sink.propagate = False
    sink.handlers = [logging.StreamHandler(sys.stderr) if verbosity > 0 else logging.NullHandler()]
    settle()


def settle() -> None:
    """Take the frameworks' loggers (and children: torch._inductor's own printed every INFO record of a
    compile under -v) back from the handlers they install on import."""
    sink = logging.getLogger(ROUTED)
    for name in ("py.warnings", *FRAMEWORK_LOGGERS):
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.handlers = [_ToSink(sink)]
        logger.setLevel(_level)
    for name, child in list(logging.root.manager.loggerDict.items()):
        owned = name.split(".", 1)[0] in FRAMEWORK_LOGGERS and "." in name
        if owned and isinstance(child, logging.Logger) and child.handlers:
            child.handlers = [_ToSink(sink)]
            child.setLevel(logging.NOTSET)  # its framework's level, which the verbosity sets


@contextlib.contextmanager
def native_stderr(framework: str, level: int = logging.WARNING) -> Iterator[None]:
    """A framework's C++ stderr meanwhile (Kineto's `profiler_start`, XLA's `cuptiSubscribe` pages) as
    records of its logger at `level`; a file, not a pipe, so an unread page never blocks the writer."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        try:
            os.dup2(held.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            for line in held.read().decode(errors="replace").splitlines():
                if line.strip():
                    logging.getLogger(framework).log(level, line)
