"""Runs planned cases one by one: each becomes a row on disk before the next one starts."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import multiprocessing as mp
import operator
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

from accelbench.catalogue import get_spec
from accelbench.core.case import Case
from accelbench.core.types import DeviceInfo, Measurement
from accelbench.errors import CaseFailure, Status, first_line, unsupported, visible
from accelbench.measure import garbage, throttle
from accelbench.measure.numerics import relative_error
from accelbench.measure.throttle import ThrottleReport
from accelbench.platform import chatter, interrupt, processes
from accelbench.platform.backends import BACKENDS
from accelbench.platform.environment import apply_process_env, env_flags
from accelbench.platform.gpu_monitor import Monitor, MonitorSummary, read_state
from accelbench.platform.interrupt import CaseTimeout
from accelbench.results.records import Row
from accelbench.results.row_builder import failure_row, success_row

OOM_MARKERS = ("RESOURCE_EXHAUSTED", "out of memory", "OutOfMemory", "Out of memory")
# what a failed build says this machine lacks: the case's row is `unsupported`, naming the piece
MISSING_PIECES = (
    (
        r"fatal error: ([^\s:]+): No such file or directory",
        "building it needs {0}, not installed here",
    ),
    (r"nvcc fatal\s*: Unsupported gpu architecture '([^']+)'", "this nvcc cannot build for {0}"),
    (r"Failed to find C compiler", "Triton's launcher needs a C compiler (none found; set CC)"),
    (r"Ninja is required", "building it needs ninja (pip install ninja)"),
    (r"sh: (?:\d+: )?([\w.+-]+): (?:command )?not found", "building it needs {0}, not found"),
    (r"The detected CUDA version \(%s\) mismatches", "nvcc's CUDA major version is not PyTorch's"),
)


class Backend(Protocol):
    name: str

    def device_info(self) -> DeviceInfo: ...

    def measure(self, case: Case) -> Measurement: ...


_backend_cache: dict[str, Backend] = {}


def get_backend(name: str) -> Backend:
    if name not in _backend_cache:
        try:
            _backend_cache[name] = cast(Backend, BACKENDS[name].load())
            chatter.settle()  # the framework just installed its own log handlers
        except ImportError as error:
            hint = f" (install it: {BACKENDS[name].install})" if BACKENDS[name].install else ""
            raise unsupported(f"the {name} backend cannot load: {error}{hint}") from None
    return _backend_cache[name]


def _release_device_memory() -> None:
    """After a failed case, its leftovers and each backend's caches freed: an OOM fails only it."""
    garbage.COLLECTOR.release()
    for backend in _backend_cache.values():
        if (release := getattr(backend, "release", None)) is not None:
            release()


def _is_oom(error: BaseException) -> bool:
    text = f"{type(error).__name__}: {error}"
    return isinstance(error, MemoryError) or any(marker in text for marker in OOM_MARKERS)


def _missing_piece(error: BaseException) -> str | None:
    text = str(error)
    found = ((re.search(pattern, text), says) for pattern, says in MISSING_PIECES)
    return next((says.format(*hit.groups()) for hit, says in found if hit), None)


STUCK_GRACE_S = 10.0  # past its timeout, a case that Python cannot interrupt ends the run


def _stuck(label: str, seconds: float) -> None:
    """A case past its timeout by STUCK_GRACE_S is where no signal reaches (native code, a GC callback
    that swallows each timeout): the run ends in one line; finished rows are on disk."""
    message = (
        f"error: case {label} did not stop within {STUCK_GRACE_S:g} s of its {seconds:g} s timeout "
        "(stuck where Python cannot interrupt it); the rows of the cases before it are saved; "
        "--isolate times each case in a process of its own, which can be ended\n"
    )
    os.write(2, visible(message.rstrip("\n")).encode() + b"\n")
    os._exit(1)


@contextmanager
def _alarm(seconds: float | None, label: str = "") -> Iterator[None]:
    """The in-process timeout: CaseTimeout every 50 ms until one stops the case (one landing in a JAX
    GC callback is swallowed), and a watchdog ending the run STUCK_GRACE_S later (see _stuck)."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    armed = [True]  # the alarm belongs to this case: once it ends, a late tick raises nowhere

    def on_alarm(signum: int, frame: Any) -> None:
        # never inside this function's own frame: its clean-up must run to the end
        if armed[0] and (frame is None or frame.f_code is not _ALARM_CODE):
            raise CaseTimeout()

    watchdog = threading.Timer(seconds + STUCK_GRACE_S, _stuck, (label, seconds))
    watchdog.daemon = True
    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:  # armed inside: a first tick that comes at once still finds the clean-up below
        watchdog.start()
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        watchdog.cancel()
        time.sleep(0)  # a tick already delivered runs its (now disarmed) handler here
        signal.signal(signal.SIGALRM, previous)


_ALARM_CODE = _alarm.__wrapped__.__code__  # type: ignore[attr-defined]


def _shape(case: Case) -> str:
    return get_spec(case.op).shape(case.params, named=True) or "default shape"


Outcome = tuple[Row, dict[str, np.ndarray]]
Env = dict[str, Any]  # the run's environment record (base_environment)
Peaks = dict[str, Any] | None  # a config's roofline peaks, where it gives them


def execute(
    case: Case, run_id: str, env: Env, peaks: Peaks, timeout_s: float | None = None
) -> Outcome:
    """One case, start to finish. Never raises for a case's own failure: that becomes its row."""
    spec = get_spec(case.op)
    device = None
    try:
        backend = get_backend(case.backend)
        device = backend.device_info()
        m, clocks, charted = _watched(case, backend, device, timeout_s)
        return success_row(case, spec, m, run_id, env, peaks, clocks, charted), m.outputs_digest
    except CaseFailure as failure:
        status, reason = failure.status, failure.reason
    except CaseTimeout:
        status, reason = Status.TIMEOUT, f"case exceeded its {timeout_s:g} s timeout"
    except Exception as error:  # a case's own failure: record it and go on with the sweep
        first = first_line(error)
        if _is_oom(error):
            status, reason = Status.OOM, f"out of device memory at {_shape(case)}: {first}"
        elif missing := _missing_piece(error):
            status, reason = Status.UNSUPPORTED, f"{first.partition(': ')[0][:80]}: {missing}"
        else:
            status, reason = Status.ERROR, f"{type(error).__name__}: {first}"
    _release_device_memory()
    return failure_row(case, spec, status, reason, run_id, env, device), {}


def _watched(
    case: Case, backend: Backend, device: DeviceInfo, timeout_s: float | None
) -> tuple[Measurement, ThrottleReport | None, MonitorSummary | None]:
    """Measured with the GPU's clocks sampled beside it (unless `throttle: off`; always where they are
    charted), the platform's throttle policy applied, and a GPU's settings read as it ends."""
    charted = get_spec(case.op).traits.monitor_gpu or bool(case.run.soak_chunk)
    judge = throttle.JUDGES.get(device.platform) if case.run.throttle != "off" else None
    index = case.params.placement.device
    index = index if isinstance(index, int) else 0  # a torch case names "cuda": its first GPU
    sampled = charted or judge is throttle.judge  # NVML's clocks: what a GPU is judged by
    clocks = None
    with _alarm(timeout_s, case.label), Monitor(index, sampled) as monitor:
        m = backend.measure(case)
        if device.platform == "gpu":  # its settings, and any user-clocks reason seen under load
            seen = functools.reduce(operator.or_, monitor.reasons, 0)
            m = dataclasses.replace(m, device_state=read_state(index, seen))
        if judge is not None:
            timing, clocks = judge(monitor, m.timing, case.run, index)
            m = dataclasses.replace(m, timing=timing)
    return m, clocks, monitor.summary() if charted and monitor.series else None


STARTUP_LIMIT_S = 300.0  # a child importing its frameworks and planning: not the case's time
STARTED = "started"


def _serve(conn: Any, process_env: dict[str, str], run_id: str, env: Env, peaks: Peaks) -> None:
    """A worker: its environment set before any framework loads, then cases until None; each case
    sends STARTED once its backend is up, then its outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    processes.die_with_parent()  # a runner killed outright leaves no worker holding the device
    apply_process_env(process_env)
    env = {**env, "env_flags": env_flags()}  # what this process's frameworks read
    while (case := conn.recv()) is not None:
        with contextlib.suppress(Exception):  # its failure is the case's row, from execute
            get_spec(case.op)  # the catalogue, the framework, its devices: all before the clock
            get_backend(case.backend).device_info()
        conn.send(STARTED)
        conn.send(execute(case, run_id, env, peaks))
    conn.close()


class Worker:
    """Cases in a child process, one at a time (a TPU belongs to one process): a crash, OOM kill or
    hang becomes that case's row; the timeout starts once the backend and devices are up. A process
    per process environment (libtpu reads TPU flags once, at start), or (`isolate`) per case."""

    def __init__(self, isolate: bool = False) -> None:
        self.isolate = isolate
        self.proc: Any = None
        self.key: tuple[tuple[str, str], ...] = ()

    def __call__(
        self, case: Case, run_id: str, env: Env, peaks: Peaks, timeout_s: float | None
    ) -> Outcome:
        if self.proc is None or self.key != case.process_env or not self.proc.is_alive():
            self.close()
            ctx = mp.get_context("spawn")
            self.conn, child = ctx.Pipe(duplex=True)
            given = (child, dict(case.process_env), run_id, env, peaks)
            self.proc = ctx.Process(target=_serve, args=given, daemon=True)
            self.proc.start()
            child.close()
            self.key, self.run_id, self.env = case.process_env, run_id, env
        try:
            return self._run(case, timeout_s)
        finally:
            if self.isolate:
                self.close()

    def _run(self, case: Case, timeout_s: float | None) -> Outcome:
        self.conn.send(case)
        deadline = time.monotonic() + STARTUP_LIMIT_S
        started = False
        while True:
            interrupt.check()
            remaining = max(0.0, deadline - time.monotonic())
            if self.conn.poll(min(remaining, 0.2)):
                try:
                    message = self.conn.recv()
                except EOFError:
                    break
                if message != STARTED:
                    return cast(Outcome, message)
                started = True
                deadline = time.monotonic() + timeout_s if timeout_s else float("inf")
            elif not self.proc.is_alive():
                break
            elif time.monotonic() >= deadline:
                self.close()
                late = f"the case's process did not start within {STARTUP_LIMIT_S:g} s"
                what = f"case exceeded its {timeout_s:g} s timeout" if started else late
                return self._failed(case, Status.TIMEOUT, what)
        self.proc.join(timeout=30)
        code = self.proc.exitcode
        why = f"exited with code {code}"
        why = f"killed by signal {-code}" if code is not None and code < 0 else why
        reason = f"the case's process {why} (crash or out-of-memory kill) at {_shape(case)}"
        return self._failed(case, Status.CRASHED, reason)

    def _failed(self, case: Case, status: Status, reason: str) -> Outcome:
        return failure_row(case, get_spec(case.op), status, reason, self.run_id, self.env), {}

    def close(self) -> None:
        if self.proc is None:
            return
        if self.proc.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        self.proc = None


def flag_groups_apply() -> bool:
    """On a TPU host (libtpu), or where MICROBENCH_FLAG_GROUPS=1 asks (tests on a CPU)."""
    if (forced := os.environ.get("MICROBENCH_FLAG_GROUPS")) is not None:
        return forced == "1"
    return importlib.util.find_spec("libtpu") is not None


Paired = tuple[str, str, str | None, dict[str, np.ndarray]]  # id, backend, implementation, outputs


@dataclass
class PairTracker:
    """The first backend's outputs of a case, which the other backend's rows are compared against."""

    seen: dict[str, Paired] = field(default_factory=dict)

    def annotate(self, case: Case, row: Row, digest: dict[str, np.ndarray]) -> None:
        if not case.pair_key or not digest:
            return
        if case.pair_key not in self.seen:
            self.seen[case.pair_key] = (case.id, case.backend, row.identity.implementation, digest)
            return
        other_id, other_backend, other_impl, other = self.seen[case.pair_key]
        if other_backend == case.backend:
            return
        errors = [relative_error(digest[k], other[k]) for k in digest if k in other]
        row.pairing.cross_backend_rel_error_ratio = max(errors) if errors else None
        row.pairing.paired_with = other_id
        row.pairing.paired_implementation = other_impl
