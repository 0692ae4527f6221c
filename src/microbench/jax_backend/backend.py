"""JAX backend: placement, compilation, HLO dumps, sharding and device-time measurement.

Op implementations register under backend "jax" (microbench/ops/*): `build(params)` returns a function of
the op's input arrays (in make_inputs order) that returns a dict of outputs. This module jits it, places
the inputs, checks and times it through the one procedure.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from microbench.catalogue import OpSpec, get_implementation, get_spec
from microbench.core.case import Case
from microbench.core.types import (
    DeviceInfo,
    Measurement,
    Prepared,
    Timing,
    slowest_per_iteration,
)
from microbench.errors import CaseFailure, Status, unsupported
from microbench.jax_backend import distributed, xplane
from microbench.measure.numerics import check_outputs, digest_rows
from microbench.measure.procedure import check_fits, measure
from microbench.measure.timers import (
    HostFlush,
    Timer,
    get_timer,
    no_flush,
    register_timer,
    timed_iterations,
    timer_name,
    warm_up,
)
from microbench.ops.common import PlacementExtras

EXOTIC_DTYPES = {"float4_e2m1fn", "float8_e5m2", "float8_e4m3fn"}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def module_name(case: Case) -> str:
    """The HLO module of a case's jitted function, which tags its kernels in the trace."""
    return f"jit_mb_{case.op}"


class JaxBackend:
    name = "jax"

    def __init__(self) -> None:
        # Allocate on demand, so JAX and PyTorch cases can share one GPU in a run; must be set
        # before JAX initialises its GPU client, which happens at the first device query below.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

    def device_info(self) -> DeviceInfo:
        devices = jax.local_devices()
        return DeviceInfo(
            kind=devices[0].device_kind,
            count=len(devices),
            platform=devices[0].platform,
            framework="jax",
            framework_version=jax.__version__,
            threads=os.cpu_count(),  # XLA's CPU client sizes its pool to the cores at start-up
        )

    # -- preparation ---------------------------------------------------------------------
    def _placement(self, case: Case, host: dict[str, np.ndarray]) -> tuple[list[Any], int]:
        """Where each input goes (a device or a sharding) and how many devices the case uses."""
        mode = case.params.get("sharding", "none")
        devices = jax.local_devices()
        if mode == "none":
            index = case.params.get("device", 0)
            if index >= len(devices):
                raise unsupported(
                    f"device {index} requested but only {len(devices)} local devices exist"
                )
            return [devices[index]] * len(host), 1
        mesh = Mesh(np.array(devices), ("d",))
        replicated = NamedSharding(mesh, P())
        if mode == "replicated":
            return [replicated] * len(host), len(devices)
        if "m" not in case.params:
            raise unsupported(f"sharding: split_m needs an m dimension, which {case.op} has not")
        if case.params["m"] % len(devices):
            raise unsupported(
                f"m={case.params['m']} does not split evenly over {len(devices)} devices"
            )
        # split_m: buffers with M rows split along M; everything else replicated
        split = NamedSharding(mesh, P("d", None))
        return [
            split if a.shape[:1] == (case.params["m"],) else replicated for a in host.values()
        ], len(devices)

    def memory_capacity(self) -> float | None:
        stats = jax.local_devices()[0].memory_stats() or {}
        return stats.get("bytes_limit")

    def prepare(self, case: Case, spec: OpSpec) -> Prepared:
        check_fits(spec, case, self.memory_capacity())
        if spec.make_inputs is None:
            raise unsupported(f"op {spec.name} has no array inputs for the generic JAX path")
        host = spec.make_inputs(case.params, np.random.default_rng(case.params.get("seed", 0)))
        names = list(host)
        placements, used = self._placement(case, host)
        try:
            device_args = [
                jax.device_put(jnp.asarray(host[n]), pl)
                for n, pl in zip(names, placements, strict=True)
            ]
        except Exception as error:  # dtypes the platform cannot hold (e.g. fp4 on old runtimes)
            raise unsupported(
                f"cannot place inputs on {jax.default_backend()}: {str(error).splitlines()[0]}"
            ) from None
        impl = get_implementation(case.op, self.name, case.implementation)
        body = impl.build(case.params)
        body.__name__ = module_name(case).removeprefix("jit_")
        carried = spec.extra.get("accumulates")
        donate: tuple[int, ...] = (names.index(carried),) if carried else ()
        t0 = time.perf_counter()
        try:
            lowered = jax.jit(body, donate_argnums=donate).lower(*device_args)
            compiled = lowered.compile()
        except Exception as error:
            exotic = {str(a.dtype) for a in device_args} & EXOTIC_DTYPES
            if not exotic or "RESOURCE_EXHAUSTED" in str(error):
                raise
            first = (
                str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            )
            raise unsupported(
                f"XLA cannot compile {spec.name} with {', '.join(sorted(exotic))} on "
                f"{jax.default_backend()}: {first[:300]}"
            ) from None
        compile_s = time.perf_counter() - t0
        self._dump(case, lowered.as_text(), compiled.as_text() or "")
        state = {"args": device_args}

        def call() -> dict[str, Any]:
            out = compiled(*state["args"])
            if carried:  # the donated buffer's successor feeds the next iteration
                state["args"] = [
                    *state["args"][: donate[0]],
                    out["out"],
                    *state["args"][donate[0] + 1 :],
                ]
            return out

        def fetch(out: dict[str, Any], name: str, rows: np.ndarray) -> np.ndarray:
            # the whole output to the host, then the rows: a device-side gather compiles anew per case
            # (0.1-0.2 s on an H200), a copy of even 100 MB costs less
            return np.asarray(jax.device_get(out[name]))[rows]

        sharding = case.params.get("sharding", "none")
        return Prepared(
            call=call,
            sync=jax.block_until_ready,
            check=lambda out: check_outputs(spec, case.params, host, lambda n, r: fetch(out, n, r)),
            digest=lambda out: digest_rows(spec, case.params, host, lambda n, r: fetch(out, n, r)),
            compile_s=compile_s,
            implementation=impl.name,
            finish=lambda timing, companions: PlacementExtras(
                used_device_count=used, sharding=sharding
            ),
        )

    def _dump(self, case: Case, stablehlo: str, optimized: str) -> None:
        if not case.outputs.xla_dump_dir:
            return
        os.makedirs(case.outputs.xla_dump_dir, exist_ok=True)
        stem = os.path.join(case.outputs.xla_dump_dir, _safe(case.label))
        for suffix, text in ((".stablehlo.txt", stablehlo), (".optimized_hlo.txt", optimized)):
            with open(stem + suffix, "w") as f:
                f.write(text)

    def measure(self, case: Case) -> Measurement:
        spec = get_spec(case.op)
        if spec.extra.get(
            "jax_prepares"
        ):  # not one jitted function (transfers): it prepares itself
            impl = get_implementation(case.op, self.name, case.implementation)
            prepared = impl.build(self, case)
            if spec.extra.get("device_time") == "slowest":
                prepared = replace(prepared, check=checked_everywhere(prepared.check))
        else:
            prepared = self.prepare(case, spec)
        requested = case.run.timer
        if requested == "auto" and "jax_auto_timer" in spec.extra:
            requested = spec.extra["jax_auto_timer"]  # e.g. transfers: no XLA module for xprof
        name = timer_name(self.name, jax.default_backend(), requested)
        if name == "wall" and case.outputs.trace_dir and "jax_auto_timer" not in spec.extra:
            name = "traced_wall"
        return measure(case, prepared, get_timer(self.name, name, case), self.device_info())


def checked_everywhere(check: Callable[[Any], float | None] | None) -> Any:
    """A many-process op's check: each process checks its own devices, then all agree on the worst
    (a process that failed alone would leave the others waiting in the next collective)."""
    if check is None:
        return None

    def agreed(out: Any) -> float:
        failure: CaseFailure | None = None
        try:
            mine = check(out)
            err = float("nan") if mine is None else mine
        except CaseFailure as caught:
            failure, err = caught, float("inf")
        worst = distributed.gather_max(err)
        if failure is not None:
            raise failure
        if worst == float("inf"):
            raise CaseFailure(
                Status.WRONG_RESULT, "another process's output differs from the reference"
            )
        return worst

    return agreed


FLUSH_BYTES = 256 << 20  # more than any GPU's L2 (H100/H200: 50-60 MB); TPU CMEM/VMEM alike


class DeviceFlush:
    """cache: cold on an accelerator: overwrite a buffer larger than the L2 before every iteration, in its
    own module, so the trace never counts it as the op's time. (Reading it instead left the L2 warmer:
    cold add 1024² read 2.75 µs against 3.23 µs after a write on an H200.)"""

    def __init__(self, device: Any) -> None:
        self.buffer = jax.device_put(jnp.zeros(FLUSH_BYTES // 4, jnp.float32), device)
        self.fill_in_place = jax.jit(lambda b: b + 1.0, donate_argnums=0)
        self.fill = jax.jit(lambda b: b + 1.0)
        self()  # compiled and run once here, never inside a trace (a first trace that compiled it came back empty)
        self.enqueue()
        jax.block_until_ready(self.buffer)

    def __call__(self) -> None:
        self.buffer = jax.block_until_ready(self.fill_in_place(self.buffer))

    def enqueue(self) -> None:
        """Queued before the iteration without waiting (cadence: sustained): a new buffer each time, the
        old one freed (donating a buffer still in use would make the host wait)."""
        self.buffer = self.fill(self.buffer)


@functools.cache
def device_flush(device: Any) -> DeviceFlush:
    """One flush buffer per device for the whole run (allocating and compiling it per case cost time)."""
    return DeviceFlush(device)


def flusher(case: Case) -> Callable[[], None]:
    if case.run.cache != "cold":
        return no_flush
    if jax.default_backend() == "cpu":
        return HostFlush()
    return device_flush(
        jax.local_devices()[
            case.params.get("device", 0) if case.params.get("sharding", "none") == "none" else 0
        ]
    )


def profile_options() -> Any:
    """Device activity and host events, without tracing every Python call (which costs time per case)."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    return options


def _profile_to_disk(trace_dir: str, run: Callable[[], list[float]]) -> tuple[Any, list[float]]:
    """The xprof layout users open (trace_dir kept): start_trace/stop_trace, then read the xplane back."""
    jax.profiler.start_trace(trace_dir, profiler_options=profile_options())
    try:
        wall = run()
    finally:
        jax.profiler.stop_trace()
    return xplane.load(xplane.find_xplane(trace_dir)), wall


def _profile_in_memory(run: Callable[[], list[float]]) -> tuple[Any, list[float]] | None:
    """The same profiler session, its XSpace kept in memory: no files, no trace-viewer conversion (the
    per-case cost when nobody keeps the trace). None where this JAX has no such session."""
    try:
        from jax._src.lib import _profiler  # not public API: fall back to start_trace without it

        session = _profiler.ProfilerSession(profile_options())
    except Exception:
        return None
    try:
        wall = run()
    finally:
        serialized = session.stop()
    return jax.profiler.ProfileData.from_serialized_xspace(serialized), wall


def traced_samples(case: Case, prepared: Prepared, warmup: int, n: int) -> Timing:
    """Time n iterations under jax.profiler and read each iteration's device time from the trace."""
    warm_up(prepared, warmup)
    flush = flusher(case)
    keep = case.outputs.trace_dir
    trace_dir = os.path.join(keep, _safe(case.label)) if keep else None

    def run() -> list[float]:
        return timed_iterations(prepared, n, flush, sustained=case.run.cadence == "sustained")

    try:
        profiled = None if trace_dir else _profile_in_memory(run)
        if profiled is None:
            scratch = trace_dir or tempfile.mkdtemp(prefix="mb_trace_")
            try:
                profiled = _profile_to_disk(scratch, run)
            finally:
                if not trace_dir:
                    shutil.rmtree(scratch, ignore_errors=True)
        profile, wall = profiled
        if get_spec(case.op).extra.get("device_time") == "slowest":
            return _slowest_device(case, profile, n, wall, trace_dir)
        platform, iters = xplane.iterations(profile, module_name(case), n)
    except xplane.TraceError as error:
        raise CaseFailure(Status.ERROR, f"device time unavailable: {error}") from None
    return Timing(
        samples_s=[i.total_ns * 1e-9 for i in iters],
        source=f"xprof_{platform}",
        wall_samples_s=wall,
        span_samples_s=[i.span_ns * 1e-9 for i in iters],
        launch_samples_s=list(
            wall
        ),  # blocked host wall per iteration: launch and dispatch included
        kernels=xplane.breakdown(iters),
        trace_path=trace_dir,
    )


def _slowest_device(
    case: Case, profile: Any, n: int, wall: list[float], trace_dir: str | None
) -> Timing:
    """Every device's time per iteration (all processes'), the slowest device's as the headline."""
    per_device = distributed.gather_devices(xplane.per_device(profile, module_name(case), n))
    try:  # the kernels of the first device that has them, for the breakdown columns
        kernels = xplane.breakdown(xplane.iterations(profile, module_name(case), n)[1])
    except xplane.TraceError:
        kernels = []
    return Timing(
        samples_s=slowest_per_iteration(per_device),
        source=f"xprof_{jax.default_backend()}_slowest_device",
        wall_samples_s=wall,
        launch_samples_s=list(wall),
        trace_path=trace_dir,
        kernels=kernels,
        device_samples_s=per_device,
    )


@register_timer("xprof", ("jax",))
def xprof_timer(case: Case) -> Timer:
    """Device time per iteration from the profiler trace (GPU kernels, TPU module executions)."""
    return lambda prepared, warmup, n: traced_samples(case, prepared, warmup, n)


@register_timer("traced_wall", ("jax",))
def traced_wall_timer(case: Case) -> Timer:
    """CPU has no device clock: keep the trace (and its breakdown) for xprof, report wall time."""

    def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
        traced = traced_samples(case, prepared, warmup, n)
        return Timing(
            samples_s=traced.wall_samples_s,
            source="wall_clock",
            wall_samples_s=traced.wall_samples_s,
            launch_samples_s=traced.wall_samples_s,
            kernels=traced.kernels,
            trace_path=traced.trace_path,
        )

    return timer
