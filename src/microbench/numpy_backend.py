"""A host-only backend for harness self-tests (the fault ops): no framework, wall-clock time."""

from __future__ import annotations

import numpy as np

from microbench.catalogue import ArrayImplementation, get_spec, implementation_of
from microbench.core.case import Case
from microbench.core.types import DeviceInfo, Measurement, Prepared
from microbench.measure.numerics import check_outputs
from microbench.measure.procedure import measure
from microbench.measure.timers import get_timer
from microbench.platform.environment import cpu_name


class NumpyBackend:
    name = "numpy"

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(
            kind=cpu_name(),
            count=1,
            platform="cpu",
            framework="numpy",
            framework_version=np.__version__,
        )

    def measure(self, case: Case) -> Measurement:
        spec = get_spec(case.op)
        assert spec.make_inputs is not None
        host = spec.make_inputs(case.params, np.random.default_rng(case.params.get("seed", 0)))
        impl = implementation_of(ArrayImplementation, case.op, self.name, case.implementation)
        fn = impl.build(case.params)
        prepared = Prepared(
            call=lambda: fn(*host.values()),
            sync=lambda out: None,
            check=lambda out: check_outputs(spec, case.params, host, lambda n, rows: out[n][rows]),
            implementation=impl.name,
        )
        return measure(case, prepared, get_timer(self.name, "wall", case), self.device_info())
