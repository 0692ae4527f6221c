"""Host-device transfers (the reference's host_device), from pageable or pinned host memory. Each
iteration makes a new destination buffer, as the reference did (so pageable device-to-host copies
pay for first touching new host pages, which bounds them near 1.5 GB/s on the H200's host). JAX
records no XLA module for a transfer, so its rows are timed by the host clock (`wall_clock`), a
blocked transfer end to end; PyTorch's carry device time (CUPTI's memcpy records) on GPUs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, Traits, implementation, param, params_of, register
from accelbench.core.case import Case
from accelbench.core.column import doc
from accelbench.core.types import Prepared, Timing
from accelbench.errors import unsupported
from accelbench.measure.numerics import check_outputs, digest_rows
from accelbench.ops.common import F32, OnDevice, normal
from accelbench.platform.frameworks import jax

MIB = 1 << 20


@dataclass
class TransferExtras:
    direction: str
    host_memory: str
    gib_per_s: float | None = field(metadata=doc("binary, beside the decimal `gb_per_s`"))


@dataclass(frozen=True)
class TransferParams(OnDevice):
    """One copy's size, direction and host memory, on one device (sharding does not apply)."""

    data_size_mib: int = param("mib", doc="MiB per transfer")
    direction: str = param("choice", "h2d", ("h2d", "d2h"), each=("h2d", "d2h"))
    host_memory: str = param("choice", "pageable", ("pageable", "pinned"))


def elements(p: TransferParams) -> int:
    return p.data_size_mib * MIB // 4


def make_inputs(p: TransferParams, rng: np.random.Generator) -> Arrays:
    """fp32 (N/128, 128) values, as the reference draws them (a 1 MiB pattern repeated)."""
    n = elements(p)
    pattern = normal(rng, (min(n, MIB // 4),), F32)
    return {"x": np.resize(pattern, n).reshape(-1, 128)}


def gib_per_s(timing: Timing, p: TransferParams) -> float | None:
    median = timing.median_s if timing.samples_s else 0.0
    return p.data_size_mib / 1024 / median if median > 0 else None


SPEC = OpSpec(
    name="host_device",
    doc="one host-to-device or device-to-host copy of data_size_mib MiB of fp32",
    typed=TransferParams,
    flops=lambda p: 0.0,
    bytes=lambda p: float(p.data_size_mib * MIB),
    peak_dtype=lambda p: "fp32",
    make_inputs=make_inputs,
    reference=lambda x, p, rows: {"out": x["x"][rows]},
    output_rows=lambda p: elements(p) // 128,
    row_extras=TransferExtras,
    # JAX records no XLA module for a transfer; the copy and its wait are the op
    traits=Traits(auto_timer={"jax": "wall"}, audit_expects=("host_copies", "host_sync")),
    constraint=lambda p: None if p.data_size_mib * MIB % 512 == 0 else "whole MiB only",
)
register(SPEC)


def finish(p: TransferParams) -> Any:
    return lambda timing, companions: TransferExtras(
        p.direction, p.host_memory, gib_per_s(timing, p)
    )


@implementation("host_device", "jax", "device_put")
def jax_transfer(backend: Any, case: Case) -> Prepared:
    p = params_of(case, TransferParams)
    host = make_inputs(p, np.random.default_rng(p.seed))
    devices = jax.local_devices()
    if p.device >= len(devices):
        raise unsupported(f"device {p.device} requested but only {len(devices)} exist")
    device = devices[p.device]
    kinds = {m.kind for m in device.addressable_memories()}
    sharding = jax.sharding.SingleDeviceSharding
    on_device = sharding(device, memory_kind="device")
    if p.host_memory == "pinned":
        if "pinned_host" not in kinds:
            raise unsupported(f"{device.platform} devices here have no pinned host memory")
        on_host: Any = sharding(device, memory_kind="pinned_host")
    elif "unpinned_host" in kinds:
        on_host = sharding(device, memory_kind="unpinned_host")
    else:  # GPUs: pageable memory is the host platform's (a numpy array, the CPU device's buffers)
        on_host = jax.devices("cpu")[0]
    if p.direction == "h2d":
        pageable = p.host_memory == "pageable"
        source, target = (host["x"] if pageable else jax.device_put(host["x"], on_host)), on_device
    else:
        source, target = jax.device_put(host["x"], on_device), on_host
    jax.block_until_ready(source)

    def fetch(out: Any, name: str, rows: np.ndarray) -> np.ndarray:
        return np.asarray(jax.device_get(out))[rows]

    return Prepared(
        call=lambda: jax.device_put(source, target, may_alias=False),
        sync=jax.block_until_ready,
        check=lambda out: check_outputs(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        digest=lambda out: digest_rows(SPEC, p, host, lambda n, r: fetch(out, n, r)),
        implementation=f"device_put:{p.host_memory}",
        finish=finish(p),
    )
