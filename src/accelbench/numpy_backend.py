"""A host-only backend for harness self-tests (the fault ops): no framework, wall-clock time."""

from __future__ import annotations

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

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(
            kind=cpu_name(),
            count=1,
            platform="cpu",
            framework="numpy",
            framework_version=np.__version__,
        )

    def measure(self, case: Case) -> Measurement:
        impl = get_implementation(case.op, self.name, case.implementation)
        if isinstance(impl, PreparedImplementation):  # it prepares itself (a bench() callable)
            prepared = impl.build(self, case)
        else:
            prepared = self.prepare(case, impl)
        return measure(case, prepared, get_timer(self.name, "wall", case), self.device_info())

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
