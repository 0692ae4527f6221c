"""A host-only backend (the fault ops, NumPy functions given to `bench()`): wall-clock time, BLAS on one
thread unless `threads:` says otherwise (every backend's policy on a CPU)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from accelbench.catalogue import (
    ArrayImplementation,
    PreparedImplementation,
    get_implementation,
    get_spec,
)
from accelbench.core.case import Case
from accelbench.core.types import DeviceInfo, Measurement, Prepared
from accelbench.measure.numerics import check_outputs
from accelbench.measure.procedure import measure
from accelbench.measure.timers import get_timer
from accelbench.platform.environment import cpu_name


class NumpyBackend:
    name = "numpy"

    def device_info(self, threads: int | None = None) -> DeviceInfo:
        return DeviceInfo(
            kind=cpu_name(),
            count=1,
            platform="cpu",
            framework="numpy",
            framework_version=np.__version__,
            threads=threads,
        )

    def measure(self, case: Case) -> Measurement:
        impl = get_implementation(case.op, self.name, case.implementation)
        with blas_threads(case.run.threads or CPU_THREADS) as threads:
            if isinstance(impl, PreparedImplementation):  # it prepares itself (a bench() callable)
                prepared = impl.build(self, case)
            else:
                prepared = self.prepare(case, impl)
            timer = get_timer(self.name, "wall", case)
            return measure(case, prepared, timer, self.device_info(threads))

    def prepare(self, case: Case, impl: ArrayImplementation) -> Prepared:
        spec = get_spec(case.op)
        assert spec.make_inputs is not None
        host = spec.make_inputs(case.params, np.random.default_rng(case.params.placement.seed))
        fn = impl.build(case.params)
        return Prepared(
            call=lambda: fn(*host.values()),
            sync=lambda out: None,
            check=lambda out: check_outputs(spec, case.params, host, lambda n, rows: out[n][rows]),
            implementation=impl.name,
        )


CPU_THREADS = 1


@contextmanager
def blas_threads(threads: int) -> Iterator[int | None]:
    """NumPy's BLAS held to `threads`, and that count; None without threadpoolctl (row: unknown)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield None
        return
    with threadpool_limits(limits=threads, user_api="blas"):
        yield threads
