"""The JAX backend's timers: device time per iteration from the profiler's trace (`xprof`, auto on GPUs
and TPUs), and the wall clock with the trace kept (`traced_wall`, CPUs asked for a trace). JAX comes
through `platform.frameworks`: discovering these timers (config validation) imports no JAX."""

from __future__ import annotations

import contextlib
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelbench.catalogue import Headline, get_spec
from accelbench.core.case import Case
from accelbench.core.types import Finding, Prepared, Timing, slowest_per_iteration
from accelbench.errors import CaseFailure, Status
from accelbench.jax_backend import distributed, telemetry, xplane
from accelbench.measure import audit
from accelbench.measure.timers import (
    Described,
    Metered,
    Timer,
    host_flush,
    keep_trace,
    register_timer,
    timed_iterations,
    trace_session_dir,
    wall_timing,
    warm_up,
)
from accelbench.platform import chatter, frameworks
from accelbench.platform.frameworks import jax


def module_name(case: Case) -> str:
    """The HLO module of a case's jitted function, which tags its kernels in the trace."""
    return f"jit_mb_{case.op}"


FLUSH_BYTES = 256 << 20  # more than any GPU's L2 (H100/H200: 50-60 MB); TPU CMEM/VMEM alike
FLUSH_MODULE = "jit_mb_flush"  # the flush's module: its kernels are the harness's, never the op's


def mb_flush(buffer: Any) -> Any:  # the flush's one computation (its name is its module's)
    return jax.numpy.zeros_like(buffer)


class DeviceFlush:
    """cache: cold on an accelerator: overwrite a buffer larger than the L2 before every iteration, in its
    own module (never the op's time in the trace). Written only: a read left the L2 warmer (cold add
    1024², H200: 2.75 µs, 3.23 µs after a write); b + 1 cost ~550 µs on an H100, 3x PyTorch's zero_."""

    def __init__(self, device: Any) -> None:
        jnp = jax.numpy
        self.buffer = jax.device_put(jnp.zeros(FLUSH_BYTES // 4, jnp.float32), device)
        self.fill_in_place = jax.jit(mb_flush, donate_argnums=0)
        self.fill = jax.jit(mb_flush)
        self()  # compiled and run once here, never inside a trace (a first trace that compiled it came back empty)
        self.enqueue()
        jax.block_until_ready(self.buffer)

    def __call__(self) -> None:
        self.buffer = jax.block_until_ready(self.fill_in_place(self.buffer))

    def enqueue(self) -> None:
        """Queued without waiting (sustained): a new buffer each time (donating one in use would wait)."""
        self.buffer = self.fill(self.buffer)


device_flush = functools.cache(DeviceFlush)  # one per device for the run (per case, it cost time)


def flusher(case: Case) -> Callable[[], None]:
    if case.run.cache != "cold" or jax.default_backend() == "cpu":
        return host_flush(case)
    where = case.params.placement
    return device_flush(jax.local_devices()[int(where.device) if where.sharding == "none" else 0])


# the TPU firmware's thermal, power-level and throttle events and its power trace, as TPUMS asks for
# them around a soak (advanced_configuration, per the JAX profiler's documentation)
FIRMWARE_EVENTS = {
    "tpu_e2e_enable_fw_thermal_event": True,
    "tpu_e2e_enable_fw_power_level_event": True,
    "tpu_e2e_enable_fw_throttle_event": True,
    "tpu_power_trace_level": 1,
    "tpu_perf_counters": False,
}


def profile_options(host_events: bool = True, firmware: bool = False) -> Any:
    """Device activity, host events only where read (a kept trace, a CPU's, a TPU's: a session's stop
    cost ~110 µs per iteration with them, ~18 µs without on an H100, bench/trace_overhead.py), no
    Python calls (costly per case)."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    if not host_events:
        options.host_tracer_level = 0
    if firmware and hasattr(options, "advanced_configuration"):
        options.advanced_configuration = dict(FIRMWARE_EVENTS)
    return options


def _profile_to_disk(run: Callable[[], list[float]], firmware: bool) -> tuple[bytes, list[float]]:
    """start_trace/stop_trace into a scratch folder, then its XSpace read back."""
    with tempfile.TemporaryDirectory(prefix="mb_trace_", ignore_cleanup_errors=True) as scratch:
        with chatter.native_stderr("jax"):
            jax.profiler.start_trace(scratch, profiler_options=profile_options(firmware=firmware))
        try:
            wall = run()
        finally:
            try:
                with chatter.native_stderr("jax"):
                    jax.profiler.stop_trace()
            # the trace could not be written (a full disk, a lost folder)
            except Exception as error:
                _forget_session()
                raise CaseFailure(
                    Status.ERROR, f"could not write the trace under {scratch}: {error}"
                ) from None
        return Path(xplane.find_xplane(scratch)).read_bytes(), wall


def _forget_session() -> None:
    """jax.profiler keeps a session whose export failed as started (every later case: "Profile has
    already been started"): its private state reset, where it exists."""
    state = getattr(getattr(jax, "_src", None) and jax._src.profiler, "_profile_state", None)
    if state is not None and hasattr(state, "reset"):
        with state.lock:
            state.reset()


def _profile_in_memory(
    run: Callable[[], list[float]], firmware: bool, host_events: bool
) -> tuple[bytes, list[float]] | None:
    """The session's XSpace kept in memory: no trace-viewer conversion per case. None where this JAX
    has no such session."""
    try:
        from jax._src.lib import _profiler  # not public API: fall back to start_trace without it

        # a CPU's iterations are host events; a TPU keeps them until shown unneeded there; a kept
        # trace keeps them for its step markers
        host = host_events or jax.default_backend() != "gpu"
        with chatter.native_stderr("jax"):  # XLA's CUPTI errors where another profiler holds it
            session = _profiler.ProfilerSession(profile_options(host, firmware))
    except Exception:
        return None
    try:
        wall = run()
    finally:
        with chatter.native_stderr("jax"):
            serialized = session.stop()
    return serialized, wall


def profiled(
    run: Callable[[], list[float]], session_dir: str | None, firmware: bool = False
) -> tuple[Any, list[float]]:
    """`run` in one profiler session; a kept trace's XSpace written as `<session_dir>/<host>.xplane.pb`
    (what xprof opens; a later round replaces it)."""
    serialized, wall = _profile_in_memory(
        run, firmware, host_events=session_dir is not None
    ) or _profile_to_disk(run, firmware)
    if session_dir is not None:  # written whole, never through a link planted there
        from accelbench.results.writer import write_atomically

        write = functools.partial(
            write_atomically, write=lambda f: f.write(serialized), binary=True
        )
        keep_trace(session_dir, ".xplane.pb", write)
    return jax.profiler.ProfileData.from_serialized_xspace(serialized), wall


SESSION_PROBES = 3  # later sessions timed (an H100's: 16-18 ms each)


def _probe(v: Any) -> Any:
    return v + 1


@functools.cache
def session_cost() -> float:
    """The profiler started before any case's clock (CUPTI's set-up: the first case paid it), and a
    round's session cost from then on: the mean of SESSION_PROBES later one-call sessions, read as a
    round's are (`procedure.pilot_size`)."""
    probe, x = jax.jit(_probe), jax.numpy.ones(8)
    jax.block_until_ready(probe(x))
    costs = []
    for _ in range(1 + SESSION_PROBES):
        start = time.perf_counter()
        profile, _ = profiled(lambda: [float(jax.block_until_ready(probe(x))[0])], None)
        with contextlib.suppress(xplane.TraceError):  # a probe's kernel may be fused away
            xplane.read(profile, "jit__probe", 1)
        costs.append(time.perf_counter() - start)
    return statistics.mean(costs[1:])


def traced_samples(
    case: Case, flush: Callable[[], None], prepared: Prepared, warmup: int, n: int
) -> Timing:
    """Time n iterations under jax.profiler and read each iteration's device time from the trace."""
    warm_up(prepared, warmup)
    trace_dir = trace_session_dir(case)
    metered, loop_s = Metered(flush), 0.0
    step = _steps(case) if trace_dir else None  # a kept trace marks each iteration as a step

    def run() -> list[float]:
        nonlocal loop_s
        t0 = time.perf_counter()
        wall = timed_iterations(prepared, n, metered, case.run.cadence == "sustained", step)
        loop_s = time.perf_counter() - t0
        return wall

    session_start = time.perf_counter()
    # a TPU's firmware events: a soak's telemetry, and the thermal levels the throttle policy judges
    on_tpu = jax.default_backend() == "tpu"
    firmware = bool(case.run.soak_chunk or case.run.throttle != "off") and on_tpu
    try:
        profile, wall = profiled(run, trace_dir, firmware)
        _cupti_refused(profile)
        if get_spec(case.op).traits.headline is Headline.SLOWEST_DEVICE:
            timing = _slowest_device(case, profile, n)
        else:
            timing = _per_iteration(case, profile, n)
    except xplane.TraceError as error:
        raise CaseFailure(Status.ERROR, f"device time unavailable: {error}") from None
    # the blocked host wall per iteration is its launch and dispatch too
    timing.wall_samples_s, timing.launch_samples_s, timing.trace_path = wall, list(wall), trace_dir
    timing.flush_s = metered.seconds
    timing.session_s = time.perf_counter() - session_start - loop_s
    if on_tpu:
        _firmware(case, profile, n, timing)
    return timing


def _cupti_refused(profile: Any = None) -> None:
    """Refuse a JAX GPU timing where another profiler holds CUPTI: known before (PyTorch's profiler
    without its teardown), or from a GPU trace without a GPU plane."""
    if jax.default_backend() != "gpu":
        return
    if profile is not None:
        if any(p.name.startswith("/device:GPU") for p in profile.planes):
            return
        # XLA's tracer will not try again: PyTorch's teardown came too late, or another profiler
        frameworks.CUPTI.setdefault(
            "holder", frameworks.CUPTI.get("pending", "another profiler in this process")
        )
    if "holder" in frameworks.CUPTI:
        raise CaseFailure(
            Status.UNSUPPORTED,
            f"no JAX device time in this process: CUPTI is held by {frameworks.CUPTI['holder']}; "
            "time JAX before PyTorch, or in a process of its own",
        )


def _firmware(case: Case, profile: Any, n: int, timing: Timing) -> None:
    """A TPU's telemetry, and each sample's thermal throttle level (its module execution's window)."""
    try:
        iters = xplane.read(profile, module_name(case), n, case.run.xprof_device_mode).iterations
    except xplane.TraceError:
        iters = []
    windows = [(i.start_ns, i.start_ns + i.total_ns) for i in iters if i.start_ns is not None]
    timing.telemetry, levels = telemetry.read(profile.planes, windows)
    timing.thermal_levels = levels if len(levels) == len(timing.samples_s) else []


def _steps(case: Case) -> Callable[[int], Any]:
    name = case.label  # each timed iteration a step named after the case, in xprof
    return lambda i: jax.profiler.StepTraceAnnotation(name, step_num=i)


def _per_iteration(case: Case, profile: Any, n: int) -> Timing:
    """Each iteration's device time (GPU kernels, TPU module execution); on a GPU, the audit."""
    read = xplane.read(profile, module_name(case), n, case.run.xprof_device_mode)
    platform, iters = read.platform, read.iterations
    return Timing(
        samples_s=[i.total_ns * 1e-9 for i in iters],
        source=f"xprof_{platform}",
        span_samples_s=[i.span_ns * 1e-9 for i in iters],
        kernels=xplane.breakdown(iters),
        audit=_audit(read) if platform == "gpu" and case.run.audit != "off" else (),
    )


def _audit(read: xplane.Read) -> tuple[Finding, ...]:
    """The audit of a GPU module's iterations: the flush's kernels are the harness's (XLA's trace
    holds no host calls)."""
    harness = [e for e in read.others if xplane.of_module(e, FLUSH_MODULE)]
    others = [e for e in read.others if not xplane.of_module(e, FLUSH_MODULE)]
    return audit.findings(audit.Loop([i.kernels for i in read.iterations], others, harness))


def _slowest_device(case: Case, profile: Any, n: int) -> Timing:
    """Every device's time per iteration (all processes'); the headline the slowest device's, or the
    one the op names (a transfer's receiver)."""
    per_device = distributed.gather_devices(xplane.per_device(profile, module_name(case), n))
    try:  # the kernels of the first device that has them, for the breakdown columns
        kernels = xplane.breakdown(xplane.read(profile, module_name(case), n).iterations)
    except xplane.TraceError:
        kernels = []
    chosen = get_spec(case.op).traits.timed_device
    if chosen is not None:
        device = distributed.device_key(chosen(case.params), per_device)
        samples, whose = per_device[device], f"device_{device}"
    else:
        samples, whose = slowest_per_iteration(per_device), "slowest_device"
    return Timing(
        samples_s=samples,
        source=f"xprof_{jax.default_backend()}_{whose}",
        kernels=kernels,
        device_samples_s=per_device,
    )


@register_timer("xprof", ("jax",), auto_on=(("jax", "gpu"), ("jax", "tpu")))
def xprof_timer(case: Case) -> Timer:
    """Device time per iteration from the trace; the flush made here, before the case's clock (it cost
    the first case 0.24 s on an H100)."""
    _cupti_refused()
    return Described(functools.partial(traced_samples, case, flusher(case)), session_cost())


@register_timer("traced_wall", ("jax",))
def traced_wall_timer(case: Case) -> Timer:
    """CPU has no device clock: keep the trace (and its breakdown) for xprof, report wall time."""
    flush = flusher(case)

    def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
        traced = traced_samples(case, flush, prepared, warmup, n)
        return wall_timing(
            traced.wall_samples_s,
            traced.flush_s,
            kernels=traced.kernels,
            trace_path=traced.trace_path,
            session_s=traced.session_s,
        )

    return Described(timer, session_cost())
