"""Garbage collection around timed windows, paid for only when it pays.

A timed window runs with the collector off, so no collection pause lands in a sample. Before it, garbage
is collected so that it does not pile up across cases: a full collection of a process holding PyTorch,
dynamo and JAX scans about half a million objects (0.25-0.45 s on a 2-core VM, 0.16 s on an H100 host),
more than many cases' timed work. So the long-lived heap is frozen after one full collection
(`gc.freeze`: the collector skips it from then on) and each window's collection scans only what came
after. The heap is collected whole again, and frozen anew, when the process has grown by
`REFREEZE_GROWTH_BYTES` since, when a window's collection took longer than `SLOW_COLLECTION_S` (a
module imported after the freeze, such as the profiler, is scanned every time until then), and after a
failed case (`release`), so cyclic garbage that was live when frozen cannot hold memory for long.
"""

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
    """When a window's collection is a full one (and the heap is frozen again), and when it is only
    of what was allocated since the last freeze."""

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
