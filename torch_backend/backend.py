"""PyTorch backend: device information, timers and the measurement of every registered torch implementation."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

import torch_backend.timing  # noqa: F401  registers the cupti, cuda_graph and cuda_events timers
from accelbench.catalogue import Headline, PreparedImplementation, get_spec, implementation_of
from accelbench.core.case import Case
from accelbench.core.types import DeviceInfo, Measurement
from accelbench.measure.procedure import measure
from accelbench.measure.timers import Described, Timer, get_timer, keep_busy, timer_name
from accelbench.platform.environment import cpu_name
from torch_backend.devices import default_device
from torch_backend.timing import host_op_breakdown, ready, traced_wall


def warm_gpu() -> None:
    """Bring an idle GPU to its working clocks before the first sample (`keep_busy`)."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)

    def burst() -> None:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()

    keep_busy(burst)


class TorchBackend:
    name = "torch"

    def __init__(self) -> None:
        if torch.cuda.is_available():
            warm_gpu()

    def device_info(self) -> DeviceInfo:
        return self.device_info_for(default_device())

    def release(self) -> None:
        """The caching allocator's free blocks back to the device (after a failed case)."""
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def device_info_for(self, device: torch.device) -> DeviceInfo:
        gpu = device.type == "cuda"
        return DeviceInfo(
            kind=torch.cuda.get_device_name(device) if gpu else cpu_name(),
            count=torch.cuda.device_count() if gpu else 1,
            platform="gpu" if gpu else "cpu",
            framework="torch",
            framework_version=torch.__version__,
            threads=torch.get_num_threads(),
        )

    def timer(self, case: Case, device: torch.device) -> Timer:
        """The case's timer, made (with what it needs: `ready`) before the case's clock starts."""
        platform_name = "gpu" if device.type == "cuda" else "cpu"
        name = timer_name(self.name, platform_name, case.run.timer)
        if device.type == "cuda":
            timer = get_timer(self.name, name, case)
            ready(case, device)
            return timer
        # a host timer's rows name the ops that took the time (device timers name kernels)
        traced = name == "wall" and case.outputs.trace_dir  # no device clock: the trace asked for
        timer = traced_wall(case) if traced else get_timer(self.name, name, case)
        return Described(timer, breakdown=host_op_breakdown)

    def measure(self, case: Case) -> Measurement:
        if get_spec(case.op).traits.headline is Headline.SLOWEST_DEVICE:  # a process per device
            from torch_backend.distributed import measure_ranks

            return measure_ranks(self, case)
        touches = get_spec(case.op).traits.compiler_options
        with isolated_compiler_state(touches), thread_count(case):
            impl = implementation_of(
                PreparedImplementation, case.op, self.name, case.implementation
            )
            prepared = impl.build(self, case)
            device = prepared.device if prepared.device is not None else default_device()
            return measure(case, prepared, self.timer(case, device), self.device_info_for(device))


CPU_THREADS = 1  # the default on a CPU: see thread_count


@contextmanager
def thread_count(case: Case) -> Iterator[None]:
    """PyTorch's intra-op pool, restored afterwards: the case's `threads:`, else one thread for work on
    a CPU. PyTorch's default (every core) made the default job's rows 10-80x slower, and unstable, on a
    shared 2-core machine where another process held a core; one thread is what torch.utils.benchmark
    chooses for the same reason. A GPU case keeps PyTorch's default: its host threads only launch
    kernels."""
    on_cpu = not torch.cuda.is_available() or case.params.placement.device == "cpu"
    threads = case.run.threads or (CPU_THREADS if on_cpu else None)
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def isolated_compiler_state(touches_options: bool) -> Iterator[None]:
    """torchao's configs set global inductor options: the options a case changed are set back, and
    dynamo's caches dropped, so no case's settings or graphs reach the next. Only the changed options are
    written (writing all set deprecated ones again, a FutureWarning each), and the compiler (3 s to
    import) is imported only for a case that changes options or where an earlier case loaded it."""
    if touches_options:
        import torch._inductor.config  # noqa: F401  the case imports it anyway
    config: Any = sys.modules.get("torch._inductor.config")
    saved = config.get_config_copy() if config is not None else None
    try:
        yield
    finally:
        if config is not None and saved is not None:
            now = config.get_config_copy()
            changed = {k: v for k, v in saved.items() if now.get(k) != v}
            if changed:
                config.load_config(changed)
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is not None:
            dynamo.reset()
