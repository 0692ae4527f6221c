"""What a backend hands back for one case, and the backend interface."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from microbench.plan import Case
from microbench.registry import Arrays, OpSpec


@dataclass(frozen=True)
class DeviceInfo:
    kind: str
    count: int
    platform: str
    framework: str
    framework_version: str


@dataclass
class Kernel:
    name: str
    per_iter: float      # launches per iteration
    mean_s: float        # mean duration of one launch
    share: float         # fraction of the iteration's device time

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "per_iter": self.per_iter, "mean_s": self.mean_s, "share": self.share}


@dataclass
class Timing:
    samples_s: list[float]
    source: str                       # "xprof_device" | "cuda_events" | "wall_clock"
    wall_samples_s: list[float] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    trace_path: str | None = None
    fallback: str | None = None       # why device time was not available, when it was not


@dataclass
class Prepared:
    """A compiled, ready-to-call op with its device inputs already in place."""

    call: Callable[[], Any]                       # one iteration; returns the outputs (not yet synchronised)
    sync: Callable[[Any], None]                   # block until those outputs are computed
    fetch: Callable[[Any, str, np.ndarray], np.ndarray]  # rows of one output, as numpy
    inputs: Arrays                                # the host copies the device inputs were made from
    compile_s: float | None = None
    implementation: str = "default"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Measurement:
    timing: Timing
    device: DeviceInfo
    max_rel_error: float | None = None
    check: str = "passed"             # passed | flagged: <reason> | off
    compile_s: float | None = None
    implementation: str = "default"
    extra: dict[str, Any] = field(default_factory=dict)
    outputs_digest: dict[str, np.ndarray] = field(default_factory=dict)


class Backend(Protocol):
    name: str

    def device_info(self) -> DeviceInfo: ...

    def measure(self, case: Case, spec: OpSpec) -> Measurement: ...
