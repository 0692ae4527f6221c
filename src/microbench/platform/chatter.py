"""Third-party chatter kept off the terminal: what the frameworks log or warn about themselves while
importing and compiling (a CUDA build without a GPU, an Enum registered twice, a tensor subclass without a
cache hash) is not about the user's run. Python warnings and the frameworks' log records below ERROR go
to one logger, which `-v` shows; this harness's own messages are printed, never warned, so none is lost.
"""

from __future__ import annotations

import logging
import sys

FRAMEWORK_LOGGERS = ("torch", "torchao", "jax", "jaxlib", "absl", "xprof", "triton")
ROUTED = "microbench.chatter"
_verbose = False


class _ToSink(logging.Handler):
    """Records below ERROR to the chatter logger; errors to the terminal as before."""

    def __init__(self, sink: logging.Logger) -> None:
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.errors = logging.StreamHandler(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        (self.sink.handle if record.levelno < logging.ERROR else self.errors.handle)(record)


def route(verbose: bool = False) -> None:
    """Python warnings and the frameworks' records below ERROR to one logger (stderr with -v)."""
    global _verbose
    _verbose = verbose
    logging.captureWarnings(True)
    sink = logging.getLogger(ROUTED)
    sink.propagate = False
    sink.handlers = [logging.StreamHandler(sys.stderr) if verbose else logging.NullHandler()]
    settle()


def settle() -> None:
    """Take the frameworks' loggers back from the handlers they install when they are imported."""
    sink = logging.getLogger(ROUTED)
    for name in ("py.warnings", *FRAMEWORK_LOGGERS):
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.handlers = [_ToSink(sink)]
        logger.setLevel(logging.DEBUG if _verbose else logging.WARNING)
