"""JAX backend: an implementation's `build(params)` is a function of the op's input arrays (make_inputs
order) returning a dict of outputs; here it is jitted, its inputs placed (sharded), HLO dumped, checked
and timed through the one procedure."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from accelbench.catalogue import (
    ArrayImplementation,
    Headline,
    OpSpec,
    PreparedImplementation,
    get_implementation,
    get_spec,
)
from accelbench.core.case import Case
from accelbench.core.types import CompilerCounts, DeviceInfo, Measurement, Prepared
from accelbench.errors import CaseFailure, Status, first_line, unsupported
from accelbench.jax_backend import distributed
from accelbench.jax_backend.timers import module_name
from accelbench.measure.inputs import Rotation, check_every_set, host_sets
from accelbench.measure.numerics import check_outputs, digest_rows
from accelbench.measure.procedure import check_fits, measure
from accelbench.measure.timers import get_timer, keep_busy, timer_name
from accelbench.names import portable_name
from accelbench.ops.common import PlacementExtras

EXOTIC_DTYPES = {"float4_e2m1fn", "float8_e5m2", "float8_e4m3fn"}
ACCELERATOR_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu")


def cpu_only() -> bool:
    """JAX will run on the CPU: asked for, or no accelerator plugin is installed."""
    asked = os.environ.get("JAX_PLATFORMS", "")
    if asked:
        return asked.split(",")[0].strip() == "cpu"
    return not any(importlib.util.find_spec(name) for name in ACCELERATOR_PLUGINS)


def host_devices() -> int:
    """Devices the CPU client will make (each needs a thread when a collective waits for all)."""
    match = re.search(
        r"xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", "")
    )
    return int(match.group(1)) if match else 1


def _started() -> bool:
    """The clients exist already (a many-process job joined before any case): their pool is set."""
    try:
        from jax._src import xla_bridge  # not public API: assume not started without it
    except ImportError:
        return False
    started = getattr(xla_bridge, "backends_are_initialized", None)
    return bool(started and started())


@functools.cache
def start_client() -> int:
    """Start JAX's clients once; on a CPU with one thread per host device (PyTorch's policy too: XLA's
    pool of every core gave 25-70% IQR against 5-20% on a 2-core host). XLA sizes its pool from the
    CPU affinity at start, so it is narrowed for that moment. Returns the CPU pool's threads."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    wanted = host_devices()
    if not cores or not cpu_only() or wanted >= len(cores) or _started():
        jax.devices()
        return len(cores) or os.cpu_count() or 1
    os.sched_setaffinity(0, set(cores[:wanted]))
    try:
        jax.devices()
    finally:
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):  # a thread that has ended
                os.sched_setaffinity(int(tid), set(cores))
    return wanted


def start_on_cpu() -> None:
    """A JAX program importing accelbench: a CPU client started now, under the thread policy (its first
    array would start one with a thread per core)."""
    if cpu_only():
        start_client()


def warm_gpu() -> None:
    """Bring an idle GPU to its working clocks before the first sample (`keep_busy`)."""
    a = jax.numpy.ones((4096, 4096), jax.numpy.bfloat16)
    square = jax.jit(lambda x: x @ x)

    def burst() -> None:  # one product kept at a time: JAX's pool keeps what it once held
        for _ in range(10):
            product = square(a)
        jax.block_until_ready(product)

    keep_busy(burst)


class JaxBackend:
    name = "jax"

    def __init__(self) -> None:
        # on demand, so JAX and PyTorch cases share a GPU; set before the first device query below
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        self.cpu_threads = start_client()
        if jax.default_backend() == "gpu":
            warm_gpu()

    def device_info(self) -> DeviceInfo:
        devices = jax.local_devices()
        return DeviceInfo(
            kind=devices[0].device_kind,
            count=len(devices),
            platform=devices[0].platform,
            framework="jax",
            framework_version=jax.__version__,
            threads=self.cpu_threads,
        )

    def _placement(self, case: Case, host: dict[str, np.ndarray]) -> tuple[list[Any], int]:
        """Where each input goes (a device or a sharding) and how many devices the case uses."""
        where = case.params.placement
        devices = jax.local_devices()
        if where.sharding == "none":
            index = int(where.device)
            if index >= len(devices):
                raise unsupported(
                    f"device {index} requested but only {len(devices)} local devices exist"
                )
            return [devices[index]] * len(host), 1
        mesh = Mesh(np.array(devices), ("d",))
        replicated = NamedSharding(mesh, P())
        if where.sharding == "replicated":
            return [replicated] * len(host), len(devices)
        if where.rows is None:
            raise unsupported(f"sharding: split_m needs an m dimension, which {case.op} has not")
        if where.rows % len(devices):
            raise unsupported(f"m={where.rows} does not split evenly over {len(devices)} devices")
        # split_m: buffers with M rows split along M; everything else replicated
        split = NamedSharding(mesh, P("d", None))
        placements = [split if a.shape[:1] == (where.rows,) else replicated for a in host.values()]
        return placements, len(devices)

    def _place(self, case: Case, host: dict[str, np.ndarray]) -> tuple[list[Any], int]:
        """The inputs on their devices (or shardings), and how many devices the case uses."""
        placements, used = self._placement(case, host)
        try:
            args = [
                jax.device_put(jnp.asarray(a), pl)
                for a, pl in zip(host.values(), placements, strict=True)
            ]
        except Exception as error:  # dtypes the platform cannot hold (e.g. fp4 on old runtimes)
            raise unsupported(
                f"cannot place inputs on {jax.default_backend()}: {first_line(error)}"
            ) from None
        return args, used

    def compile(
        self, case: Case, spec: OpSpec, body: Any, args: list[Any], donate: tuple[int, ...]
    ) -> Compiled:
        """Jitted and compiled for these inputs (a dtype XLA cannot compile here: `unsupported`)."""
        body.__name__ = module_name(case).removeprefix("jit_")
        t0 = time.perf_counter()
        try:
            lowered = jax.jit(body, donate_argnums=donate).lower(*args)
            compiled = lowered.compile()
        except Exception as error:
            exotic = {str(a.dtype) for a in args} & EXOTIC_DTYPES
            if not exotic or "RESOURCE_EXHAUSTED" in str(error):
                raise
            raise unsupported(
                f"XLA cannot compile {spec.name} with {', '.join(sorted(exotic))} on "
                f"{jax.default_backend()}: {first_line(error)}"
            ) from None
        compile_s = time.perf_counter() - t0
        self._dump(case, lowered.as_text(), compiled.as_text() or "")
        return Compiled(compiled, compile_s, cost_of(compiled))

    def prepare(self, case: Case, spec: OpSpec, impl: ArrayImplementation) -> Prepared:
        """Draw the inputs, place them, jit the implementation's function of them."""
        check_fits(spec, case, (jax.local_devices()[0].memory_stats() or {}).get("bytes_limit"))
        if spec.make_inputs is None:
            raise unsupported(f"op {spec.name} has no array inputs for the generic JAX path")
        hosts = host_sets(spec, case)
        host = hosts[0]
        carried = spec.traits.donated_input
        placed = [self._place(case, h) for h in hosts]
        device_args, used = placed[0]
        donate: tuple[int, ...] = (list(host).index(carried),) if carried else ()
        compiled = self.compile(case, spec, impl.build(case.params), device_args, donate)
        state = {"args": device_args}
        rotation = Rotation([args for args, _ in placed])

        def call() -> dict[str, Any]:
            if len(hosts) > 1:
                return compiled.fn(*rotation.next())
            out = compiled.fn(*state["args"])
            if carried:  # the donated buffer's successor feeds the next iteration
                args = state["args"]
                state["args"] = [*args[: donate[0]], out["out"], *args[donate[0] + 1 :]]
            return out

        def fetch(out: dict[str, Any], name: str, rows: np.ndarray) -> np.ndarray:
            # the whole output to the host, then the rows: a device-side gather compiles anew per case
            # (0.1-0.2 s on an H200), a copy of even 100 MB costs less
            return np.asarray(jax.device_get(out[name]))[rows]

        extras = PlacementExtras(used_device_count=used, sharding=case.params.placement.sharding)

        def check_one(h: dict[str, np.ndarray], out: dict[str, Any]) -> float | None:
            return check_outputs(spec, case.params, h, lambda n, r: fetch(out, n, r))

        run = lambda args: compiled.fn(*args)
        return Prepared(
            call=call,
            sync=jax.block_until_ready,
            check=check_every_set(hosts, rotation, run, jax.block_until_ready, check_one),
            input_sets=len(hosts),
            digest=lambda out: digest_rows(spec, case.params, host, lambda n, r: fetch(out, n, r)),
            compile_s=compiled.seconds,
            compiler=compiled.counts,
            implementation=impl.name,
            finish=lambda timing, companions: extras,
        )

    def _dump(self, case: Case, stablehlo: str, optimized: str) -> None:
        if not case.outputs.xla_dump_dir:
            return
        os.makedirs(case.outputs.xla_dump_dir, exist_ok=True)
        stem = os.path.join(case.outputs.xla_dump_dir, portable_name(case.label))
        for suffix, text in ((".stablehlo.txt", stablehlo), (".optimized_hlo.txt", optimized)):
            if os.path.islink(path := stem + suffix):  # and O_NOFOLLOW for one planted meanwhile
                raise CaseFailure(Status.ERROR, f"{path} is a symbolic link: no dump through one")
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            with os.fdopen(os.open(path, flags, 0o666), "w", encoding="utf-8") as f:
                f.write(text)

    def measure(self, case: Case) -> Measurement:
        spec = get_spec(case.op)
        impl = get_implementation(case.op, self.name, case.implementation)
        if isinstance(impl, PreparedImplementation):  # not one jitted function: it prepares itself
            prepared = impl.build(self, case)
            if spec.traits.headline is Headline.SLOWEST_DEVICE:  # its iterations span processes
                agree = distributed.gather_max if jax.process_count() > 1 else prepared.agree
                prepared = replace(prepared, check=checked_everywhere(prepared.check), agree=agree)
        else:
            prepared = self.prepare(case, spec, impl)
        own = spec.traits.auto_timer.get(self.name)  # e.g. transfers: no XLA module for xprof
        requested = own if case.run.timer == "auto" and own else case.run.timer
        name = timer_name(self.name, jax.default_backend(), requested)
        if name == "wall" and case.outputs.trace_dir and own is None:
            name = "traced_wall"  # no device clock here: keep the trace the config asked for
        return measure(case, prepared, get_timer(self.name, name, case), self.device_info())


class Compiled(NamedTuple):
    fn: Any  # the compiled executable
    seconds: float  # lowering and compiling
    counts: CompilerCounts


def cost_of(compiled: Any) -> CompilerCounts:
    """XLA's cost analysis (a dict, or a list of one on older JAX), where the platform gives one."""
    try:
        cost = compiled.cost_analysis()
    except Exception:
        return CompilerCounts()
    if isinstance(cost, list):
        cost = cost[0] if cost else {}
    if not isinstance(cost, dict):
        return CompilerCounts()
    counts = (cost.get(key) for key in ("flops", "bytes accessed"))
    return CompilerCounts(*(float(v) if v is not None and v >= 0 else None for v in counts))


def checked_everywhere(check: Callable[[Any], float | None] | None) -> Any:
    """Each process checks its own devices, then all agree on the worst (one failing alone would
    leave the others waiting in the next collective)."""
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
