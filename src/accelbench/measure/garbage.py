"""Garbage collection around timed windows: off inside, run before. A full collection of a process
holding PyTorch, dynamo and JAX scans ~half a million objects (0.16-0.45 s), so the heap is frozen
after one (`gc.freeze`) and a window's collection scans only what came after; it is frozen anew
after REFREEZE_GROWTH_BYTES of growth, a collection over SLOW_COLLECTION_S, or a failed case."""

from __future__ import annotations

import atexit
import gc
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

REFREEZE_GROWTH_BYTES = 256 << 20
SLOW_COLLECTION_S = 0.005
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """This process's resident memory (Linux), None where the system does not say."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class Collector:
    """Whether a window's collection is a full one (then a freeze) or of what came since the last."""

    def __init__(self) -> None:
        self.frozen_at: int | None = None  # resident bytes at the last full collection
        self.full_collections = 0

    def full(self) -> None:
        if not self.full_collections:  # at exit the heap is collectable again, as extensions that
            atexit.register(gc.unfreeze)  # count their leaked objects at teardown expect
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.frozen_at = resident_bytes() or 0
        self.full_collections += 1

    def before_window(self) -> None:
        now = resident_bytes()
        # where the system does not say how big the process is, only a slow collection refreezes
        grown = now is not None and now - (self.frozen_at or 0) > REFREEZE_GROWTH_BYTES
        if self.frozen_at is None or grown:
            self.full()
            return
        start = time.perf_counter()
        gc.collect()  # the frozen heap is skipped: only objects since the last freeze
        if time.perf_counter() - start > SLOW_COLLECTION_S:
            self.frozen_at = None  # much is unfrozen: freeze it at the next window

    def release(self) -> None:
        """After a failed case: everything collectable collected (an OOM's tensors included)."""
        gc.unfreeze()
        gc.collect()
        self.frozen_at = None


COLLECTOR = Collector()


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic collector off inside, and back as it was after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def paused() -> Iterator[None]:
    """A timed window: garbage collected before it (as above), the collector off inside it."""
    COLLECTOR.before_window()
    with collector_off():
        yield
