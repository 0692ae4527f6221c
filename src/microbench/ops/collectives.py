"""Collectives over the chip interconnect (the reference's benchmark_collectives and send_recv), in JAX.

A mesh of `ici_size` devices shaped `mesh_shape`; `sharding_strategy` picks the mesh axes whose entry is
above 1, and the devices that differ only along those axes form one group (all groups run at once). Every
device holds its own block (the block of mesh position d is a fixed pattern plus d, so sums, gather
order, the all-to-all permutation and the permute shift are all visible to the float64 check). Group size
and membership come from the mesh, never from HLO text.

Bandwidth follows nccl-tests (algbw = message bytes / time, busbw = algbw x the op's factor) beside the
reference's `achieved_bw` (its per-device traffic model) and, for all-to-all on a given TPU topology, its
theoretical peak. Time is per device from the trace, the slowest device per iteration as the headline.
The PyTorch twins (torch.distributed, one process per device) live in torch_backend/ops/collectives.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from microbench.catalogue import (
    Headline,
    OpParams,
    OpSpec,
    RunOverride,
    Traits,
    get_spec,
    implementation,
    param,
    params_of,
    register,
)
from microbench.core.case import Case
from microbench.core.column import doc
from microbench.core.samples import median_or_none
from microbench.core.types import Prepared, Timing
from microbench.errors import CaseFailure, Status, UserError, unsupported
from microbench.measure.numerics import check_rows, relative_error, tolerance
from microbench.platform.dtypes import dtype
from microbench.platform.frameworks import jax

TILE = 1024  # a row of a matrix_dim-sized block: the reference's 8 x 128 tile
LANE = 128  # a row of a num_elements-sized block (small messages: 1 KiB of fp32 is 2 rows)
PATTERN = 1 << 16  # distinct values drawn; longer blocks repeat them
CHECKED_DEVICES = 8  # devices whose outputs are compared (first, last and spread between)
LINK_GBPS = 100.0  # the reference's per-link figure in its all-to-all peak model


MAX_DIM_DIGITS = 9  # a mesh axis of a billion devices is already no mesh


def dims(text: str, key: str = "mesh_shape") -> tuple[int, ...]:
    """'4x4x8' -> (4, 4, 8); any other text (from either dialect) is a one-line error naming `key`."""
    parts = str(text).lower().split("x")
    if not all(t.isascii() and t.isdigit() and 0 < len(t) <= MAX_DIM_DIGITS for t in parts) or (
        0 in (numbers := tuple(int(t) for t in parts))
    ):
        raise UserError(
            f"must be positive integers joined by 'x' (like 2x4), got {str(text)[:40]!r}", key=key
        )
    return numbers


DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class CollectiveParams(OpParams):
    """What the framework-free code below reads of any collective: each kind (the classes that follow)
    declares the fields it takes, and a field it lacks reads as the default here."""

    trailing = True
    seed: int = param("int", 0, doc="input pattern seed")

    @property
    def dtype(self) -> str:
        raise NotImplementedError  # every kind declares its dtype

    @property
    def ici_size(self) -> int:
        return 0

    @property
    def mesh_shape(self) -> str:
        return ""

    @property
    def sharding_strategy(self) -> str:
        return ""

    @property
    def topology(self) -> str:
        return ""

    @property
    def matrix_dim(self) -> int:
        return 0

    @property
    def num_elements(self) -> int:
        return 0

    @property
    def data_size_mib(self) -> int:
        return 0

    @property
    def direction(self) -> str:
        return "uni"

    @property
    def reduce_op(self) -> str | None:
        """The reduction an all_reduce names; None: psum's sum of every member's rows."""
        return None

    @property
    def source_id(self) -> int:
        return 0

    @property
    def target_id(self) -> int:
        return 1


@dataclass(frozen=True)
class GroupedParams(CollectiveParams):
    """A collective over groups of a device mesh, on blocks of matrix_dim tiles or num_elements."""

    matrix_dim: int = param(
        "dim", 0, doc="rows of 8x128 in one device's block (or give num_elements)"
    )
    num_elements: int = param(
        "elements", 0, doc="elements in one device's block, a multiple of 128"
    )
    ici_size: int = param("int", 2, doc="devices in the mesh (the first ici_size devices)")
    mesh_shape: str = param("str", "", doc="'AxBxC', product = ici_size (default: one axis)")
    sharding_strategy: str = param("str", "", doc="'axbxc': axes with an entry > 1 form the groups")
    op_dimension: int = param("int", 0, doc="1/2/3-D collective: metadata, as in the reference")
    topology: str = param("str", "", doc="TPU slice, e.g. 2x2x1: all-to-all's theoretical peak")
    dtype: str = param("dtype", "float32", DTYPES)


@dataclass(frozen=True)
class AllReduceParams(GroupedParams):
    reduce_op: str = param("choice", "sum", ("sum", "mean", "max", "min"), "the reduction")


@dataclass(frozen=True)
class DeviceToDeviceParams(CollectiveParams):
    data_size_mib: int = param("mib", 1024, doc="MiB each sender sends")
    direction: str = param("choice", "uni", ("uni", "bi"), "bi: both send at once")
    source_id: int = param("int", 0, doc="sender's index among all devices")
    target_id: int = param("int", 1, doc="receiver's index among all devices")
    dtype: str = param("dtype", "bfloat16", DTYPES)


@dataclass(frozen=True)
class SendRecvParams(CollectiveParams):
    num_elements: int = param("elements", doc="elements sent")
    source_id: int = param("int", 0, doc="sender's position on the local-device mesh")
    target_id: int = param("int", 1, aliases=("target_id_list",), doc="receiver's position")
    dtype: str = param("dtype", "float32", DTYPES)


# ---- the mesh and its groups (framework-free: the PyTorch twins use the same functions) -----------


def mesh_dims(p: CollectiveParams) -> tuple[int, ...]:
    return dims(p.mesh_shape) if p.mesh_shape else (p.ici_size,)


def group_axes(p: CollectiveParams) -> tuple[int, ...]:
    """Mesh axes the collective runs over: those whose sharding_strategy entry is above 1 (only > 1
    matters, as in the reference); no strategy means every axis."""
    if not p.sharding_strategy:
        return tuple(range(len(mesh_dims(p))))
    return tuple(i for i, v in enumerate(dims(p.sharding_strategy)) if v > 1)


def groups(op: str, p: CollectiveParams) -> list[list[int]]:
    """Mesh positions (row-major) of every group, members in the order JAX numbers them."""
    if COLLECTIVES[op].point_to_point:  # one pair on the 1-D mesh
        return [[p.source_id, p.target_id]]
    shape, axes = mesh_dims(p), group_axes(p)
    positions = np.arange(math.prod(shape)).reshape(shape)
    rest = [a for a in range(len(shape)) if a not in axes]
    return positions.transpose(rest + list(axes)).reshape(-1, group_size(op, p)).tolist()


def group_size(op: str, p: CollectiveParams) -> int:
    if COLLECTIVES[op].point_to_point:
        return 2
    shape = mesh_dims(p)
    return math.prod(shape[a] for a in group_axes(p))


def devices_needed(op: str, p: CollectiveParams) -> int:
    if COLLECTIVES[op].point_to_point:
        return max(p.source_id, p.target_id) + 1
    return math.prod(mesh_dims(p))


def size_problem(op: str, p: CollectiveParams) -> str | None:
    """A block is sized by matrix_dim (rows of 8x128) or num_elements (rows of 128), not both."""
    given = [k for k in ("matrix_dim", "num_elements") if getattr(p, k)]
    if len(given) != 1 and not COLLECTIVES[op].point_to_point:
        return "give matrix_dim or num_elements (one of them)"
    if p.num_elements and p.num_elements % LANE:
        return f"num_elements must be a multiple of {LANE}"
    return None


def _shape_text_problem(p: CollectiveParams) -> str | None:
    """mesh_shape and sharding_strategy are 'AxBxC' of positive integers (checked before any use)."""
    for key in ("mesh_shape", "sharding_strategy"):
        if text := getattr(p, key):
            try:
                dims(text, key)
            except UserError as error:
                return f"{key} {error.message}"
    return None


def mesh_problem(op: str, p: CollectiveParams) -> str | None:
    if COLLECTIVES[op].point_to_point:
        if min(p.source_id, p.target_id) < 0:
            return "source_id and target_id are device indices: 0 or more"
        return "source_id and target_id must differ" if p.source_id == p.target_id else None
    if problem := _shape_text_problem(p):
        return problem
    if p.ici_size < 1:
        return f"ici_size counts devices: 1 or more, got {p.ici_size}"
    shape = mesh_dims(p)
    if math.prod(shape) != p.ici_size:
        return f"mesh_shape {p.mesh_shape} has {math.prod(shape)} devices, ici_size is {p.ici_size}"
    if p.sharding_strategy and len(dims(p.sharding_strategy)) != len(shape):
        return (
            f"sharding_strategy {p.sharding_strategy} and mesh_shape {p.mesh_shape} differ in rank"
        )
    return None


def lone_group(op: str, p: CollectiveParams) -> str | None:
    """Why a case cannot run at all once its mesh exists: a group of one device has nothing to send
    (an `unsupported` row on both backends; jax-bench times such a no-op and reports 0 GB/s)."""
    if not COLLECTIVES[op].point_to_point and group_size(op, p) < 2:
        return "the group is one device (no mesh axis above 1 is chosen): nothing to communicate"
    return None


# ---- what each collective moves ----------------------------------------------------------------


@dataclass(frozen=True)
class Collective:
    """One collective: its reference op type, per-device input and output rows, and its traffic."""

    op_type: str  # the reference's AR / AG / RS / A2A, plus PERMUTE and SEND_RECV
    in_rows: Callable[[int, int], int]  # (rows of one block, group size) -> input rows per device
    out_rows: Callable[[int, int], int]
    bus_factor: Callable[[int], float]  # nccl-tests: busbw = algbw * factor(n)
    message_rows: Callable[[int, int], int]  # nccl-tests' "size" per rank, in rows
    # the reference's factor on E*P*b*tf (of r); None: a permute, which moves its block once
    reference_traffic: Callable[[int], float] | None
    sources: Callable[[int, int, int, np.ndarray, CollectiveParams], list[Source]]
    """(member, group size, rows of one block, output rows, params) -> where those rows come from."""
    # sustained: iterations queued back to back, as nccl-tests runs them (`run_overrides` below)
    cadence: str = "sustained"
    point_to_point: bool = False  # one (source_id, target_id) pair on a 1-D mesh
    local_mesh: bool = False  # a point-to-point pair numbered among this process's devices only
    in_place: bool = False  # the input is donated: each result feeds the next iteration
    must_split: bool = False  # each member's block splits into one chunk per member
    topology_peak: bool = False  # the reference gives a theoretical peak from the TPU topology


# (member j of the group, which of the output rows, j's input rows): the output rows are the sum of them
Source = tuple[int, np.ndarray | slice, np.ndarray]
EVERY = slice(None)


def _gathered(i: int, r: int, n: int, out: np.ndarray, p: CollectiveParams) -> list[Source]:
    return [(j, out // n == j, out[out // n == j] % n) for j in np.unique(out // n)]


def _exchanged(i: int, r: int, n: int, out: np.ndarray, p: CollectiveParams) -> list[Source]:
    chunk = n // r  # output chunk j of member i is input chunk i of member j
    return [
        (j, out // chunk == j, i * chunk + out[out // chunk == j] % chunk)
        for j in np.unique(out // chunk)
    ]


def _all_reduce(r: int) -> float:
    return 2.0 * (r - 1) / r


def _share(r: int) -> float:
    return (r - 1) / r


def _one(r: int) -> float:
    return 1.0


def _same(rows: int, r: int) -> int:
    return rows


def _times_r(rows: int, r: int) -> int:
    return rows * r


COLLECTIVES: dict[str, Collective] = {
    "psum": Collective(
        "AR",
        _same,
        _same,
        _all_reduce,
        _same,
        lambda r: 2.0 / r,
        lambda i, r, n, out, p: [(j, EVERY, out) for j in range(r)],
        # in place, as NCCL's users (and nccl-tests) run it: without donation XLA copies the input to
        # the output first (64 us of 532 us at 128 MiB on two H200s)
        in_place=True,
    ),
    "all_gather": Collective("AG", _same, _times_r, _share, _times_r, _one, _gathered),
    "psum_scatter": Collective(
        "RS",
        _times_r,
        _same,
        _share,
        _times_r,
        lambda r: 1.0 / r,
        lambda i, r, n, out, p: [(j, EVERY, i * n + out) for j in range(r)],
    ),
    "all_to_all": Collective(
        "A2A",
        _same,
        _same,
        _share,
        _same,
        lambda r: 1.0 / r,
        _exchanged,
        must_split=True,
        topology_peak=True,
    ),
    "ppermute": Collective(  # a ring shift: member i sends to i + 1
        "PERMUTE",
        _same,
        _same,
        _one,
        _same,
        None,
        lambda i, r, n, out, p: [((i - 1) % r, EVERY, out)],
        # blocked: batch_isend_irecv's kernels, queued back to back, carry no launch inside their
        # iteration that the profiler records (PyTorch 2.11), so only their run time places them
        cadence="blocked",
    ),
    # TPUMS's ppermute over each group (the DCN slices): member 0 sends to member 1 (uni), or members
    # 0 and 1 exchange (bidi); the others take no part and end with zeros
    "ppermute_uni": Collective(
        "PERMUTE",
        _same,
        _same,
        _one,
        _same,
        None,
        lambda i, r, n, out, p: [(0, EVERY, out)] if i == 1 else [],
        cadence="blocked",
    ),
    "ppermute_bidi": Collective(
        "PERMUTE",
        _same,
        _same,
        _one,
        lambda rows, r: 2 * rows,
        None,
        lambda i, r, n, out, p: [(1 - i, EVERY, out)] if i < 2 else [],
        cadence="blocked",
    ),
    "send_recv": Collective(  # member 0 (source) sends to member 1 (target); only it receives
        "SEND_RECV",
        _same,
        _same,
        _one,
        _same,
        None,
        lambda i, r, n, out, p: [(0, EVERY, out)] if i == 1 else [],
        point_to_point=True,
        local_mesh=True,
    ),
    # one pair of the global devices, one way (uni) or both ways at once (bi): jax-bench's D2D
    "device_to_device": Collective(
        "D2D",
        _same,
        _same,
        _one,
        _same,
        None,
        lambda i, r, n, out, p: [(1 - i, EVERY, out)] if i == 1 or p.direction == "bi" else [],
        point_to_point=True,
    ),
}
# all-reduce with any of the four reductions (the jax-bench harness's all_reduce): psum's machinery,
# the reduction read from the parameters
COLLECTIVES["all_reduce"] = COLLECTIVES["psum"]

# the reductions of all_reduce: how the float64 reference combines the members' blocks
REDUCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "sum": np.sum,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
}


def directions(p: CollectiveParams) -> int:
    """Transfers a point-to-point case makes at once: 2 for a bidirectional pair."""
    return 2 if p.direction == "bi" else 1


def row_len(p: CollectiveParams) -> int:
    """Elements in one row of a block: the reference's 8x128 tile when sized by matrix_dim."""
    return TILE if p.matrix_dim else LANE


def block_rows(p: CollectiveParams) -> int:
    """Rows in one device's block: matrix_dim, or num_elements / 128, or data_size_mib MiB of rows."""
    if p.matrix_dim:
        return int(p.matrix_dim)
    if p.data_size_mib:
        return int(p.data_size_mib * 2**20 // (LANE * dtype(p.dtype).nbytes))
    return int(p.num_elements // LANE)


def row_bytes(p: CollectiveParams) -> int:
    return int(row_len(p) * dtype(p.dtype).nbytes)


def message_bytes(op: str, p: CollectiveParams) -> float:
    """nccl-tests' size: the per-rank buffer (all-reduce, all-to-all, permute), the whole gathered or
    scattered buffer (all-gather, reduce-scatter)."""
    rows = COLLECTIVES[op].message_rows(block_rows(p), group_size(op, p))
    return float(rows * row_bytes(p) * directions(p))


def block(p: CollectiveParams, position: int, rows: np.ndarray) -> np.ndarray:
    """Rows of the input held by mesh position `position`: a fixed pattern plus the position."""
    width = row_len(p)
    pattern = np.random.default_rng(p.seed).standard_normal(PATTERN, dtype=np.float32)
    if len(rows) and rows[0] == 0 and np.array_equal(rows, np.arange(len(rows))):  # a whole block
        values = np.resize(pattern, (len(rows), width))  # at copy speed: 1 GiB in well under 1 s
    else:
        values = pattern[(rows[:, None] * width + np.arange(width)[None, :]) % PATTERN]
    values += np.float32(position)
    return values.astype(dtype(p.dtype).numpy, copy=False)


def expected(
    op: str, p: CollectiveParams, member: int, group: Sequence[int], rows: np.ndarray
) -> np.ndarray:
    """Float64 rows of the output of `member` (its index in `group`)."""
    sources = COLLECTIVES[op].sources(member, len(group), block_rows(p), rows, p)
    if p.reduce_op is not None:  # every member contributes all rows: combined by the reduction
        blocks = [block(p, group[j], np.asarray(src)).astype(np.float64) for j, _, src in sources]
        return REDUCTIONS[p.reduce_op](np.stack(blocks), axis=0)
    total = np.zeros((len(rows), row_len(p)), np.float64)
    for j, where, src in sources:
        total[where] += block(p, group[j], np.asarray(src)).astype(np.float64)
    return total


# ---- bandwidth ---------------------------------------------------------------------------------


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
    sides = dims(topology)
    spatial = sorted(s for s in sides if s > 1)
    wraps = (
        any(s >= 16 for s in sides) if len(sides) == 2 else len(sides) >= 3 and min(sides[:3]) >= 4
    )
    wf = 2 if wraps else 1
    if len(spatial) <= 1:
        links = wf
    elif len(spatial) == 2:
        links = spatial[0] * wf
    else:
        links = spatial[0] * spatial[1] * wf
    return 4 * LINK_GBPS * links * participating / r**2


@dataclass
class CollectiveExtras:
    """What a collective row adds: the group, nccl-tests' bandwidths, the reference's traffic model,
    and how the devices' times spread (the headline is the slowest device per iteration)."""

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
    op: str, p: CollectiveParams, timing: Timing, chips: Sequence[Any], processes: int
) -> CollectiveExtras:
    """The row's extras from the merged timing (headline: slowest device per iteration)."""
    c, group = COLLECTIVES[op], groups(op, p)[0]
    r = len(group)
    kind, participating, tf = parallel_groups(group, chips)
    rows = c.in_rows(block_rows(p), r)
    e_bytes = rows * row_bytes(p)
    transferred = (
        e_bytes * participating * tf * c.reference_traffic(r)
        if c.reference_traffic is not None
        else float(e_bytes)
    )
    t = median_or_none(timing.samples_s)
    size = message_bytes(op, p)
    algbw = size / t / 1e9 if t else None
    achieved = transferred / t / 1e9 if t else None
    theo = a2a_peak_gbps(p.topology, participating, r) if c.topology_peak and p.topology else None
    medians = {name: median_or_none(s) for name, s in timing.device_samples_s.items() if s}
    return CollectiveExtras(
        op_type=c.op_type,
        group_device_count=r,
        group_count=len(groups(op, p)),
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
        slowest_device=max(medians, key=lambda k: medians[k] or 0.0) if medians else None,
        fastest_device_median_s=min(v for v in medians.values() if v is not None)
        if medians
        else None,
    )


def check_member(
    op: str, p: CollectiveParams, position: int, fetch: Callable[[np.ndarray], np.ndarray]
) -> float:
    """Compare one device's output with the float64 reference; the relative error, or raise."""
    for members in groups(op, p):
        if position in members:
            member, group = members.index(position), members
            break
    else:  # not in any group (send/recv bystanders): nothing to compare
        return 0.0
    c = COLLECTIVES[op]
    n_out = c.out_rows(block_rows(p), len(group))
    rows = check_rows(n_out, row_len(p))
    want = expected(op, p, member, group, rows)
    got = fetch(rows)
    err = relative_error(got.reshape(want.shape), want)
    tol = tolerance(dtype(p.dtype).name)
    if not err <= tol:
        raise CaseFailure(
            Status.WRONG_RESULT,
            f"device {position} (member {member} of its group) differs from the float64 reference: "
            f"relative error {err:.3g} > tolerance {tol:.3g}",
        )
    return err


def checked_positions(n: int) -> list[int]:
    return sorted(set(np.linspace(0, n - 1, min(CHECKED_DEVICES, n)).astype(int).tolist()))


# ---- specs -------------------------------------------------------------------------------------


def _spec(name: str, doc: str, typed: type[CollectiveParams]) -> OpSpec[Any]:
    return register(
        OpSpec(
            name=name,
            suite="collectives",
            doc=doc,
            typed=typed,
            flops=lambda p: 0.0,
            bytes=lambda p: message_bytes(
                name, p
            ),  # the generic gb_per_s column is nccl-tests' algbw
            peak_dtype=lambda p: "fp32",
            row_extras=CollectiveExtras,
            constraint=lambda p: mesh_problem(name, p) or size_problem(name, p),
            traits=Traits(
                headline=Headline.SLOWEST_DEVICE,
                roofline=False,
                auto_timer={
                    "jax": "xprof"
                },  # CPU too: each device's host events, not the wall clock
                # no flush: nccl-tests does none, and flushing one device's L2 would skew the group.
                # Back to back, as nccl-tests runs them: with one process per GPU (torch.distributed)
                # each rank launches an iteration at its own moment, and in the blocked cadence a late
                # rank's launch lands inside the others' timed kernels (4xH200, 128 MiB all-reduce:
                # slowest rank 785 us, fastest 608 us). Queued, the ranks' kernels run in lockstep and
                # only the first, dropped as the settling iteration, absorbs the start.
                run_overrides=lambda p: RunOverride("warm", COLLECTIVES[name].cadence),
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
    _spec(_name, _doc, GroupedParams)
_spec(
    "all_reduce",
    "all-reduce of each device's (matrix_dim, 8, 128) block over its group: sum, mean, max or min",
    AllReduceParams,
)
_spec(
    "device_to_device",
    "one device's data_size_mib MiB sent to another (uni) or exchanged (bi) over the interconnect",
    DeviceToDeviceParams,
)
_spec(
    "send_recv",
    "one device's block sent to another on the 1-D mesh of local devices; the rest idle",
    SendRecvParams,
)


# ---- the JAX implementation --------------------------------------------------------------------


def chip_of(device: Any) -> Any:
    """Devices on one chip share this key (TPU v7x: two TensorCores per chip); else the device."""
    coords = getattr(device, "coords", None)
    return (device.process_index, tuple(coords)) if coords is not None else device.id


def _collective_body(op: str, p: CollectiveParams, axes: tuple[str, ...]) -> Callable[[Any], Any]:
    lax, r = jax.lax, group_size(op, p)
    name = axes if len(axes) > 1 else axes[0]
    reductions = {"sum": lax.psum, "mean": lax.pmean, "max": lax.pmax, "min": lax.pmin}
    reduce = reductions[p.reduce_op or "sum"]
    bodies: dict[str, Callable[[Any], Any]] = {
        "psum": lambda x: lax.psum(x, name),
        "all_gather": lambda x: lax.all_gather(x, name, axis=0, tiled=True),
        "psum_scatter": lambda x: lax.psum_scatter(x, name, scatter_dimension=0, tiled=True),
        "all_to_all": lambda x: lax.all_to_all(x, name, 0, 0, tiled=True),
        "ppermute": lambda x: lax.ppermute(x, name, [(i, (i + 1) % r) for i in range(r)]),
        "ppermute_uni": lambda x: lax.ppermute(x, name, [(0, 1)]),
        "ppermute_bidi": lambda x: lax.ppermute(x, name, [(0, 1), (1, 0)]),
        "send_recv": lambda x: lax.ppermute(x, name, [(p.source_id, p.target_id)]),
        "device_to_device": lambda x: lax.ppermute(x, name, _pairs(p)),
        "all_reduce": lambda x: reduce(x, name),
    }
    return bodies[op]


def _pairs(p: CollectiveParams) -> list[tuple[int, int]]:
    there = (p.source_id, p.target_id)
    return [there, there[::-1]] if directions(p) == 2 else [there]


def _shard_map() -> Any:
    return getattr(jax, "shard_map", None) or jax.experimental.shard_map.shard_map


def _mesh(op: str, p: CollectiveParams) -> Any:
    c = COLLECTIVES[op]
    if c.point_to_point:  # every (local, for the reference's send/recv) device on one axis
        devices = jax.local_devices() if c.local_mesh else jax.devices()
        shape: tuple[int, ...] = (len(devices),)
    else:
        devices, shape = jax.devices(), mesh_dims(p)
    need = devices_needed(op, p)
    if len(devices) < need:
        raise unsupported(f"needs {need} devices, {len(devices)} are visible")
    if lone := lone_group(op, p):
        raise unsupported(lone)
    devices = devices[: math.prod(shape)]
    try:
        from jax.experimental import mesh_utils

        grid = mesh_utils.create_device_mesh(shape, devices)
    except Exception:  # no topology to follow (CPU, a subset of a GPU host): row-major order
        grid = np.array(devices).reshape(shape)
    return jax.sharding.Mesh(grid, tuple(f"d_{i}" for i in range(len(shape))))


def _blocks(op: str, p: CollectiveParams, mesh: Any) -> Any:
    """The input: each device's block made on the device that holds it (dim 0 split over the mesh)."""
    spec = jax.sharding.PartitionSpec(tuple(mesh.axis_names))
    rows_in = COLLECTIVES[op].in_rows(block_rows(p), group_size(op, p))
    devices = mesh.devices.size

    def shard(index: tuple[slice, ...]) -> np.ndarray:
        position = (index[0].start or 0) // rows_in
        return block(p, position, np.arange(rows_in))

    sharding = jax.sharding.NamedSharding(mesh, spec)
    return jax.make_array_from_callback((devices * rows_in, row_len(p)), sharding, shard)


def _checker(op: str, p: CollectiveParams, mesh: Any) -> Callable[[Any], float]:
    """Each checked device's output against the float64 reference; the worst relative error."""
    flat = list(mesh.devices.flat)
    position_of = {d: i for i, d in enumerate(flat)}
    checked = set(checked_positions(len(flat)))

    def check(out: Any) -> float:
        worst = 0.0
        for s in out.addressable_shards:
            position = position_of[s.device]
            if position in checked:
                data = s.data
                err = check_member(op, p, position, lambda rows: np.asarray(data[rows]))
                worst = max(worst, err)
        return worst

    return check


@implementation(tuple(COLLECTIVES), "jax", "shard_map")
def jax_collective(backend: Any, case: Case) -> Prepared:
    """jit(shard_map(collective)) over the case's mesh; each device's block made where it lives."""
    op, p = case.op, params_of(case, CollectiveParams)
    c = COLLECTIVES[op]
    mesh = _mesh(op, p)
    names = mesh.axis_names
    axes = names if c.point_to_point else tuple(names[a] for a in group_axes(p))
    r = group_size(op, p)
    if c.must_split and block_rows(p) % r:
        raise unsupported(f"{block_rows(p)} rows do not split into {r} chunks")
    x = _blocks(op, p, mesh)
    spec = jax.sharding.PartitionSpec(tuple(names))
    body = _collective_body(op, p, axes)

    def mb(x: Any) -> Any:
        return _shard_map()(body, mesh=mesh, in_specs=spec, out_specs=spec)(x)

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
