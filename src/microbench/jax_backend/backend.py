"""JAX backend: placement, compilation, HLO dumps, sharding and device-time measurement."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from microbench.errors import CaseFailure, unsupported
from microbench.jax_backend import xplane
from microbench.jax_backend.compute_ops import BUILDERS
from microbench.measurement import DeviceInfo, Measurement, Prepared, Timing
from microbench.plan import Case
from microbench.procedure import check_fits, measure
from microbench.registry import OpSpec
from microbench.timers import timed_iterations, warm_up, wall_clock


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


class JaxBackend:
    name = "jax"

    def __init__(self) -> None:
        # Allocate on demand, so JAX and PyTorch cases can share one GPU in a run; must be set
        # before JAX initialises its GPU client, which happens at the first device query below.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

    def device_info(self) -> DeviceInfo:
        devices = jax.local_devices()
        return DeviceInfo(kind=devices[0].device_kind, count=len(devices), platform=devices[0].platform,
                          framework="jax", framework_version=jax.__version__)

    # -- preparation ---------------------------------------------------------------------
    def _placement(self, case: Case, n_inputs: int) -> tuple[list[Any], int]:
        """Shardings for the inputs (None: one device) and how many devices the case uses."""
        mode = case.params.get("sharding", "none")
        devices = jax.local_devices()
        if mode == "none":
            index = case.params.get("device", 0)
            if index >= len(devices):
                raise unsupported(f"device {index} requested but only {len(devices)} local devices exist")
            return [devices[index]] * n_inputs, 1
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        mesh = Mesh(np.array(devices), ("d",))
        replicated = NamedSharding(mesh, P())
        if mode == "replicated":
            return [replicated] * n_inputs, len(devices)
        if case.params["m"] % len(devices):
            raise unsupported(f"m={case.params['m']} does not split evenly over {len(devices)} devices")
        # split_m: A (and row-aligned buffers) split along M; everything else replicated
        return [NamedSharding(mesh, P("d", None))] + [replicated] * (n_inputs - 1), len(devices)

    def memory_capacity(self) -> float | None:
        stats = jax.local_devices()[0].memory_stats() or {}
        return stats.get("bytes_limit")

    def prepare(self, case: Case, spec: OpSpec) -> Prepared:
        check_fits(spec, case, self.memory_capacity())
        rng = np.random.default_rng(case.params.get("seed", 0))
        host = spec.make_inputs(case.params, rng)
        names = list(host)
        placements, used = self._placement(case, len(names))
        if case.params.get("sharding") == "split_m":
            placements = [placements[0] if host[n].shape[:1] == (case.params["m"],) else placements[1] for n in names]
        try:
            device_args = [jax.device_put(jnp.asarray(host[n]), pl) for n, pl in zip(names, placements)]
        except Exception as error:  # dtypes the platform cannot hold (e.g. fp4 on old runtimes)
            raise unsupported(f"cannot place inputs on {jax.default_backend()}: {str(error).splitlines()[0]}") from None
        body = BUILDERS[spec.name](case.params)
        body.__name__ = f"mb_{spec.name}"
        carried = spec.extra.get("accumulates")
        donate = (names.index(carried),) if carried else ()
        fn = jax.jit(body, donate_argnums=donate)
        t0 = time.perf_counter()
        try:
            lowered = fn.lower(*device_args)
            compiled = lowered.compile()
        except Exception as error:
            exotic = {str(a.dtype) for a in device_args} & {"float4_e2m1fn", "float8_e5m2", "float8_e4m3fn"}
            if not exotic or "RESOURCE_EXHAUSTED" in str(error):
                raise
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise unsupported(f"XLA cannot compile {spec.name} with {', '.join(sorted(exotic))} on "
                              f"{jax.default_backend()}: {first[:300]}") from None
        compile_s = time.perf_counter() - t0
        if case.outputs.xla_dump_dir:
            os.makedirs(case.outputs.xla_dump_dir, exist_ok=True)
            stem = os.path.join(case.outputs.xla_dump_dir, _safe(case.label))
            with open(stem + ".stablehlo.txt", "w") as f:
                f.write(lowered.as_text())
            with open(stem + ".optimized_hlo.txt", "w") as f:
                f.write(compiled.as_text() or "")

        state = {"args": device_args}

        def call() -> dict[str, Any]:
            out = compiled(*state["args"])
            if carried:  # the donated buffer's successor feeds the next iteration
                state["args"] = [*state["args"][:donate[0]], out["out"], *state["args"][donate[0] + 1:]]
            return out

        def fetch(out: dict[str, Any], name: str, rows: np.ndarray) -> np.ndarray:
            return np.asarray(jax.device_get(out[name][jnp.asarray(rows)]))

        return Prepared(call=call, sync=jax.block_until_ready, fetch=fetch, inputs=host, compile_s=compile_s,
                        implementation="jit", extra={"devices_used": used,
                                                     "sharding": case.params.get("sharding", "none")})

    # -- timing --------------------------------------------------------------------------
    def _device_timer(self, case: Case, spec: OpSpec):
        module = f"jit_mb_{spec.name}"

        def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
            warm_up(prepared, warmup)
            keep = case.outputs.trace_dir
            trace_dir = os.path.join(keep, _safe(case.label)) if keep else tempfile.mkdtemp(prefix="mb_trace_")
            try:
                jax.profiler.start_trace(trace_dir)
                try:
                    wall = timed_iterations(prepared, n)
                finally:
                    jax.profiler.stop_trace()
                platform, iters = xplane.iterations(xplane.load(xplane.find_xplane(trace_dir)), module, n)
            except xplane.TraceError as error:
                raise CaseFailure("error", f"device time unavailable: {error}") from None
            finally:
                if not keep:
                    shutil.rmtree(trace_dir, ignore_errors=True)
            return Timing(samples_s=[i.total_ns * 1e-9 for i in iters], source=f"xprof_{platform}",
                          wall_samples_s=wall, kernels=xplane.breakdown(iters),
                          trace_path=trace_dir if keep else None)
        return timer

    def measure(self, case: Case, spec: OpSpec) -> Measurement:
        prepared = self.prepare(case, spec)
        on_cpu = jax.default_backend() == "cpu"
        if not on_cpu:
            timer = self._device_timer(case, spec)
        elif case.outputs.trace_dir:
            timer = self._traced_wall_timer(case, spec)
        else:
            timer = wall_clock
        return measure(case, spec, prepared, timer, self.device_info())

    def _traced_wall_timer(self, case: Case, spec: OpSpec):
        """CPU has no device clock: keep the trace (and its breakdown) for xprof, report wall time."""
        traced_timer = self._device_timer(case, spec)

        def timer(prepared: Prepared, warmup: int, n: int) -> Timing:
            traced = traced_timer(prepared, warmup, n)
            return Timing(samples_s=traced.wall_samples_s, source="wall_clock", wall_samples_s=traced.wall_samples_s,
                          kernels=traced.kernels, trace_path=traced.trace_path)
        return timer
