"""Collectives over the chip interconnect (the reference's benchmark_collectives and send_recv), in JAX,
on the framework-free model of ops/collective_model.py (meshes, groups, blocks and their float64 check):
group size and membership come from the mesh, never from HLO text.

Bandwidth follows nccl-tests (algbw = message bytes / time, busbw = algbw x the op's factor) beside the
reference's `achieved_bw` (its per-device traffic model) and, for all-to-all on a given TPU topology, its
theoretical peak. Time is per device from the trace, the slowest device per iteration as the headline."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelbench.catalogue import (
    Headline,
    OpSpec,
    RunOverride,
    Traits,
    get_spec,
    implementation,
    params_of,
    register,
)
from accelbench.core.case import Case
from accelbench.core.column import doc
from accelbench.core.samples import Samples, median_or_none
from accelbench.core.types import Prepared, Timing
from accelbench.errors import unsupported
from accelbench.ops import collective_model as cm
from accelbench.platform.frameworks import jax


def parallel_groups(group: Sequence[int], chips: Sequence[Any]) -> tuple[str, int, int]:
    """(replica_group_type, P, tf) of the reference's traffic model, from the devices' chips.

    A group with one device per chip on a chip of several devices is 'parallel': its sibling groups share
    the chip's links (tf = the devices per chip). A group holding several devices of one chip moves no
    data between them over the links (P excludes them). One device per chip (GPUs): P = r - 1, tf = 1."""
    first = chips[group[0]]
    on_first_chip = sum(1 for d in group if chips[d] == first)
    per_chip = sum(1 for c in chips if c == first)
    if per_chip == 1:
        return "one_device_per_chip", len(group) - 1, 1
    if on_first_chip == 1:
        return "parallel", len(group) - 1, per_chip
    return "non-parallel", len(group) - on_first_chip, 1


def a2a_peak_gbps(topology: str, participating: int, r: int) -> float:
    """The reference's all-to-all ceiling: 4 x 100 GB/s x links x P / r^2. A 2-D topology is a v6e
    slice (wraparound from 16 chips on a side), a 3-D one a v7x slice (wraparound when all three sides
    are 4 or more)."""
    sides = cm.dims(topology)
    spatial = sorted(s for s in sides if s > 1)
    wraps = (
        any(s >= 16 for s in sides) if len(sides) == 2 else len(sides) >= 3 and min(sides[:3]) >= 4
    )
    links = math.prod(spatial[:-1][:2]) * (2 if wraps else 1)  # the first one or two sides' links
    return 4 * cm.LINK_GBPS * links * participating / r**2


@dataclass
class CollectiveExtras:
    """What a collective row adds (the headline is the slowest device per iteration)."""

    op_type: str
    group_device_count: int
    group_count: int
    process_count: int
    used_device_count: int
    message_bytes: int
    algbw_gb_per_s: float | None = field(
        metadata=doc("nccl-tests' algorithm bandwidth: message bytes over time")
    )
    bus_factor_ratio: float
    busbw_gb_per_s: float | None = field(metadata=doc("nccl-tests' bus bandwidth"))
    replica_group_type: str
    transferred_bytes: float = field(metadata=doc("the Ironwood reference's traffic model"))
    achieved_bw_gb_per_s: float | None
    theoretical_bw_gb_per_s: float | None
    utilization_pct: float | None
    slowest_device: str | None
    fastest_device_median_s: float | None


def extras_for(
    op: str, p: cm.CollectiveParams, timing: Timing, chips: Sequence[Any], processes: int
) -> CollectiveExtras:
    """The row's extras from the merged timing (headline: slowest device per iteration)."""
    c, group = cm.COLLECTIVES[op], cm.groups(op, p)[0]
    r = len(group)
    kind, participating, tf = parallel_groups(group, chips)
    e_bytes = c.in_rows(cm.block_rows(p), r) * cm.row_bytes(p)
    transferred = (
        e_bytes * participating * tf * c.reference_traffic(r)
        if c.reference_traffic is not None
        else float(e_bytes)
    )
    t = median_or_none(timing.samples_s)
    size = cm.message_bytes(op, p)
    algbw = size / t / 1e9 if t else None
    achieved = transferred / t / 1e9 if t else None
    theo = a2a_peak_gbps(p.topology, participating, r) if c.topology_peak and p.topology else None
    medians = {name: Samples(s).median_s for name, s in timing.device_samples_s.items() if s}
    return CollectiveExtras(
        op_type=c.op_type,
        group_device_count=r,
        group_count=len(cm.groups(op, p)),
        process_count=processes,
        used_device_count=len(chips),
        message_bytes=int(size),
        algbw_gb_per_s=algbw,
        bus_factor_ratio=c.bus_factor(r),
        busbw_gb_per_s=algbw * c.bus_factor(r) if algbw else None,
        replica_group_type=kind,
        transferred_bytes=transferred,
        achieved_bw_gb_per_s=achieved,
        theoretical_bw_gb_per_s=theo,
        utilization_pct=100 * achieved / theo if achieved and theo else None,
        slowest_device=max(medians, key=medians.__getitem__, default=None),
        fastest_device_median_s=min(medians.values(), default=None),
    )


def _spec(name: str, doc: str, typed: type[cm.CollectiveParams]) -> OpSpec[Any]:
    return register(
        OpSpec(
            name=name,
            suite="collectives",
            doc=doc,
            typed=typed,
            flops=lambda p: 0.0,
            bytes=lambda p: cm.message_bytes(name, p),  # the gb_per_s column is nccl-tests' algbw
            peak_dtype=lambda p: "fp32",
            row_extras=CollectiveExtras,
            constraint=lambda p: cm.problem(name, p),
            traits=Traits(
                headline=Headline.SLOWEST_DEVICE,
                timed_device=(lambda p: p.target_id)
                if cm.COLLECTIVES[name].timed_on_receiver
                else None,
                roofline=False,
                # CPU too: each device's host events, not the wall clock
                auto_timer={"jax": "xprof"},
                # no flush: nccl-tests does none, and flushing one device's L2 would skew the group.
                # Back to back, as nccl-tests runs them: with one process per GPU (torch.distributed)
                # each rank launches an iteration at its own moment, and in the blocked cadence a late
                # rank's launch lands inside the others' timed kernels (4xH200, 128 MiB all-reduce:
                # slowest rank 785 us, fastest 608 us). Queued, the ranks' kernels run in lockstep and
                # only the first, dropped as the settling iteration, absorbs the start.
                run_overrides=lambda p: RunOverride("warm", cm.COLLECTIVES[name].cadence),
                audit_expects=("streams",),  # NCCL's kernels run on a stream of its own
            ),
        )
    )


for _name, _doc in (
    ("psum", "all-reduce (sum) of each device's (matrix_dim, 8, 128) block over its group"),
    ("all_gather", "all-gather: each device ends with its group's blocks, concatenated in order"),
    ("psum_scatter", "reduce-scatter: (r*matrix_dim, 8*128) summed, each member keeps its 1/r"),
    ("all_to_all", "all-to-all: chunk i of every member's block goes to member i"),
    ("ppermute", "ring shift over the group: member i sends its block to member i+1"),
    ("ppermute_uni", "member 0 of each group sends its block to member 1 (TPUMS's, DCN's)"),
    ("ppermute_bidi", "members 0 and 1 of each group exchange their blocks (TPUMS's, DCN's)"),
):
    _spec(_name, _doc, cm.GroupedParams)
_spec(
    "all_reduce",
    "all-reduce of each device's (matrix_dim, 8, 128) block over its group: sum, mean, max or min",
    cm.AllReduceParams,
)
_spec(
    "device_to_device",
    "one device's data_size_mib MiB sent to another (uni) or exchanged (bi) over the interconnect",
    cm.DeviceToDeviceParams,
)
_spec(
    "send_recv",
    "one device's block sent to another on the 1-D mesh of local devices; the rest idle",
    cm.SendRecvParams,
)


def chip_of(device: Any) -> Any:
    """Devices on one chip share this key (TPU v7x: two TensorCores per chip); else the device."""
    coords = getattr(device, "coords", None)
    return (device.process_index, tuple(coords)) if coords is not None else device.id


def _collective_body(
    op: str, p: cm.CollectiveParams, axes: tuple[str, ...]
) -> Callable[[Any], Any]:
    lax, r, c = jax.lax, cm.group_size(op, p), cm.COLLECTIVES[op]
    name = axes if len(axes) > 1 else axes[0]
    if pairs := c.pairs(r, p):  # a permute; a point-to-point pair's members are mesh positions
        at = cm.groups(op, p)[0] if c.point_to_point else range(r)
        return lambda x: lax.ppermute(x, name, [(at[s], at[d]) for s, d in pairs])
    reductions = {"sum": lax.psum, "mean": lax.pmean, "max": lax.pmax, "min": lax.pmin}
    reduce = reductions[p.reduce_op or "sum"]
    bodies: dict[str, Callable[[Any], Any]] = {
        "psum": lambda x: lax.psum(x, name),
        "all_gather": lambda x: lax.all_gather(x, name, axis=0, tiled=True),
        "psum_scatter": lambda x: lax.psum_scatter(x, name, scatter_dimension=0, tiled=True),
        "all_to_all": lambda x: lax.all_to_all(x, name, 0, 0, tiled=True),
        "all_reduce": lambda x: reduce(x, name),
    }
    return bodies[op]


def _mesh(op: str, p: cm.CollectiveParams) -> Any:
    c = cm.COLLECTIVES[op]
    if c.point_to_point:  # every (local, for the reference's send/recv) device on one axis
        devices = jax.local_devices() if c.local_mesh else jax.devices()
        shape: tuple[int, ...] = (len(devices),)
    else:
        devices, shape = jax.devices(), cm.mesh_dims(p)
    need = cm.devices_needed(op, p)
    if len(devices) < need:
        raise unsupported(f"needs {need} devices, {len(devices)} are visible")
    if lone := cm.lone_group(op, p):
        raise unsupported(lone)
    devices = devices[: math.prod(shape)]
    try:
        from jax.experimental import mesh_utils

        grid = mesh_utils.create_device_mesh(shape, devices)
    except Exception:  # no topology to follow (CPU, a subset of a GPU host): row-major order
        grid = np.array(devices).reshape(shape)
    return jax.sharding.Mesh(grid, tuple(f"d_{i}" for i in range(len(shape))))


def _blocks(op: str, p: cm.CollectiveParams, mesh: Any) -> Any:
    """The input: each device's block made on the device that holds it (dim 0 split over the mesh)."""
    rows_in = cm.COLLECTIVES[op].in_rows(cm.block_rows(p), cm.group_size(op, p))

    def shard(index: tuple[slice, ...]) -> np.ndarray:
        position = (index[0].start or 0) // rows_in
        return cm.block(p, position, np.arange(rows_in))

    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(tuple(mesh.axis_names)))
    shape = (mesh.devices.size * rows_in, cm.row_len(p))
    return jax.make_array_from_callback(shape, sharding, shard)


def _checker(op: str, p: cm.CollectiveParams, mesh: Any) -> Callable[[Any], float]:
    """Each checked device's output against the float64 reference; the worst relative error."""
    flat = list(mesh.devices.flat)
    position_of = {d: i for i, d in enumerate(flat)}
    checked = set(cm.checked_positions(len(flat)))

    def check(out: Any) -> float:
        worst = 0.0
        for s in out.addressable_shards:
            position = position_of[s.device]
            if position in checked:
                data = s.data
                err = cm.check_member(op, p, position, lambda rows: np.asarray(data[rows]))
                worst = max(worst, err)
        return worst

    return check


@implementation(tuple(cm.COLLECTIVES), "jax", "shard_map")
def jax_collective(backend: Any, case: Case) -> Prepared:
    """jit(shard_map(collective)) over the case's mesh; each device's block made where it lives."""
    op, p = case.op, params_of(case, cm.CollectiveParams)
    c = cm.COLLECTIVES[op]
    mesh = _mesh(op, p)
    names = mesh.axis_names
    axes = names if c.point_to_point else tuple(names[a] for a in cm.group_axes(p))
    r = cm.group_size(op, p)
    if c.must_split and cm.block_rows(p) % r:
        raise unsupported(f"{cm.block_rows(p)} rows do not split into {r} chunks")
    x = _blocks(op, p, mesh)
    spec = jax.sharding.PartitionSpec(tuple(names))
    body = _collective_body(op, p, axes)

    def mb(x: Any) -> Any:
        shard_map = getattr(jax, "shard_map", None) or jax.experimental.shard_map.shard_map
        return shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)(x)

    donate = (0,) if c.in_place else ()
    compiled = backend.compile(case, get_spec(op), mb, [x], donate)
    chips = [chip_of(d) for d in mesh.devices.flat]
    state = {"x": x}

    def call() -> Any:
        out = compiled.fn(state["x"])
        if donate:
            state["x"] = out
        return out

    return Prepared(
        call=call,
        sync=jax.block_until_ready,
        check=_checker(op, p, mesh),
        compile_s=compiled.seconds,
        compiler=compiled.counts,
        implementation=f"shard_map:{op}",
        finish=lambda timing, companions: extras_for(op, p, timing, chips, jax.process_count()),
    )
