"""The collectives without any framework: their parameters, the groups a mesh and a sharding strategy
make, what each collective moves and what every member must end with, checked in float64
(`check_member`). The JAX op and the PyTorch twin both build on this."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from accelbench.catalogue import OpParams, param
from accelbench.errors import UserError, wrong_result
from accelbench.measure.numerics import check_rows, relative_error, tolerance
from accelbench.platform.dtypes import dtype

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
    """What the framework-free code reads of any collective: a field a kind lacks reads as below."""

    trailing = True
    seed: int = param("int", 0, doc="input pattern seed")
    # what a kind that lacks the field reads (class attributes, not fields: no kind takes them all)
    ici_size = 0
    mesh_shape = ""
    sharding_strategy = ""
    topology = ""
    matrix_dim = 0
    num_elements = 0
    data_size_mib = 0
    direction = "uni"
    source_id = 0
    target_id = 1
    dtype = ""  # every kind declares its dtype

    @property
    def reduce_op(self) -> str | None:
        """The reduction an all_reduce names; None: psum's sum of every member's rows."""
        return None


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
    size = math.prod(shape[a] for a in axes)
    return positions.transpose(rest + list(axes)).reshape(-1, size).tolist()


def group_size(op: str, p: CollectiveParams) -> int:
    return len(groups(op, p)[0])


def devices_needed(op: str, p: CollectiveParams) -> int:
    if COLLECTIVES[op].point_to_point:
        return max(p.source_id, p.target_id) + 1
    return math.prod(mesh_dims(p))


def problem(op: str, p: CollectiveParams) -> str | None:
    if COLLECTIVES[op].point_to_point:
        if min(p.source_id, p.target_id) < 0:
            return "source_id and target_id are device indices: 0 or more"
        if p.source_id == p.target_id:
            return "source_id and target_id must differ"
    elif wrong := mesh_problem(p):
        return wrong
    elif bool(p.matrix_dim) == bool(p.num_elements):
        return "give matrix_dim or num_elements (one of them)"
    if p.num_elements % LANE:
        return f"num_elements must be a multiple of {LANE}"
    return None


def mesh_problem(p: CollectiveParams) -> str | None:
    for key in ("mesh_shape", "sharding_strategy"):  # 'AxBxC' of positive integers, before any use
        if text := getattr(p, key):
            try:
                dims(text, key)
            except UserError as error:
                return f"{key} {error.message}"
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


# (member j of the group, which of the output rows, j's input rows): the output rows are the sum of them
Source = tuple[int, np.ndarray | slice, np.ndarray]
EVERY = slice(None)


def _same(rows: int, r: int) -> int:
    return rows


def _times_r(rows: int, r: int) -> int:
    return rows * r


def _one(r: int) -> float:
    return 1.0


@dataclass(frozen=True)
class Collective:
    """One collective's data flow and traffic (by default a block moved once: a permute, a send)."""

    op_type: str  # the reference's AR / AG / RS / A2A, plus PERMUTE and SEND_RECV
    # (member, group size, rows of one block, output rows, params) -> where those rows come from
    sources: Callable[[int, int, int, np.ndarray, CollectiveParams], list[Source]] | None = None
    in_rows: Callable[[int, int], int] = _same  # (rows of one block, group size) -> input rows
    out_rows: Callable[[int, int], int] = _same
    bus_factor: Callable[[int], float] = _one  # nccl-tests: busbw = algbw * factor(n)
    message_rows: Callable[[int, int], int] = _same  # nccl-tests' "size" per rank, in rows
    # the reference's factor on E*P*b*tf (of r); None: a permute, which moves its block once
    reference_traffic: Callable[[int], float] | None = None
    # sustained: iterations queued back to back, as nccl-tests runs them (`run_overrides` below)
    cadence: str = "sustained"
    point_to_point: bool = False  # one (source_id, target_id) pair on a 1-D mesh
    local_mesh: bool = False  # a point-to-point pair numbered among this process's devices only
    # the headline is the receiver's time alone (TPUMS times a device-to-device copy on its
    # destination's trace), not the slowest device's
    timed_on_receiver: bool = False
    in_place: bool = False  # the input is donated: each result feeds the next iteration
    must_split: bool = False  # each member's block splits into one chunk per member
    topology_peak: bool = False  # the reference gives a theoretical peak from the TPU topology
    # a permute's (sender, receiver) members, of (group size, params): each receiver takes the block
    pairs: Callable[[int, CollectiveParams], list[tuple[int, int]]] = lambda r, p: []


def _gathered(i: int, r: int, n: int, out: np.ndarray, p: CollectiveParams) -> list[Source]:
    return [(j, out // n == j, out[out // n == j] % n) for j in np.unique(out // n)]


def _scattered(i: int, r: int, n: int, out: np.ndarray, p: CollectiveParams) -> list[Source]:
    return [(j, EVERY, i * n + out) for j in range(r)]


def _exchanged(i: int, r: int, n: int, out: np.ndarray, p: CollectiveParams) -> list[Source]:
    chunk = n // r  # output chunk j of member i is input chunk i of member j
    return [
        (j, out // chunk == j, i * chunk + out[out // chunk == j] % chunk)
        for j in np.unique(out // chunk)
    ]


def _one_way(r: int, p: CollectiveParams) -> list[tuple[int, int]]:
    return [(0, 1)]


def _share(r: int) -> float:
    return (r - 1) / r


COLLECTIVES: dict[str, Collective] = {
    "psum": Collective(
        "AR",
        lambda i, r, n, out, p: [(j, EVERY, out) for j in range(r)],
        bus_factor=lambda r: 2.0 * (r - 1) / r,
        reference_traffic=lambda r: 2.0 / r,
        # in place, as NCCL's users (and nccl-tests) run it: without donation XLA copies the input to
        # the output first (64 us of 532 us at 128 MiB on two H200s)
        in_place=True,
    ),
    "all_gather": Collective("AG", _gathered, _same, _times_r, _share, _times_r, _one),
    "psum_scatter": Collective(
        "RS", _scattered, _times_r, _same, _share, _times_r, lambda r: 1 / r
    ),
    "all_to_all": Collective(
        "A2A",
        _exchanged,
        bus_factor=_share,
        reference_traffic=lambda r: 1.0 / r,
        must_split=True,
        topology_peak=True,
    ),
    "ppermute": Collective(  # a ring shift: member i sends to i + 1
        "PERMUTE",
        pairs=lambda r, p: [(i, (i + 1) % r) for i in range(r)],
        # blocked: batch_isend_irecv's kernels, queued back to back, carry no launch inside their
        # iteration that the profiler records (PyTorch 2.11), so only their run time places them
        cadence="blocked",
    ),
    # TPUMS's ppermute over each group (the DCN slices): member 0 sends to member 1 (uni), or members
    # 0 and 1 exchange (bidi); the others take no part and end with zeros
    "ppermute_uni": Collective("PERMUTE", pairs=_one_way, cadence="blocked"),
    "ppermute_bidi": Collective(
        "PERMUTE",
        pairs=lambda r, p: [(0, 1), (1, 0)],
        message_rows=lambda rows, r: 2 * rows,
        cadence="blocked",
    ),
    # member 0 (source) sends to member 1 (target); only it receives
    "send_recv": Collective("SEND_RECV", pairs=_one_way, point_to_point=True, local_mesh=True),
    # one pair of the global devices, one way (uni) or both ways at once (bi): jax-bench's D2D
    "device_to_device": Collective(
        "D2D",
        pairs=lambda r, p: [(0, 1), (1, 0)][: directions(p)],
        point_to_point=True,
        timed_on_receiver=True,
    ),
}
# all-reduce with any of the four reductions (the jax-bench harness's all_reduce): psum's machinery,
# the reduction read from the parameters
COLLECTIVES["all_reduce"] = COLLECTIVES["psum"]

# the reductions of all_reduce: how the float64 reference combines the members' blocks
REDUCTIONS: dict[str, Callable[..., np.ndarray]] = {
    r: getattr(np, r) for r in ("sum", "mean", "max", "min")
}


def directions(p: CollectiveParams) -> int:
    return 2 if p.direction == "bi" else 1


def row_len(p: CollectiveParams) -> int:
    return TILE if p.matrix_dim else LANE


def block_rows(p: CollectiveParams) -> int:
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
    c = COLLECTIVES[op]
    if c.sources is None:  # a permute: the block of each member that sends to this one
        sources: list[Source] = [(s, EVERY, rows) for s, d in c.pairs(len(group), p) if d == member]
    else:
        sources = c.sources(member, len(group), block_rows(p), rows, p)
    if p.reduce_op is not None:  # every member contributes all rows: combined by the reduction
        blocks = [block(p, group[j], np.asarray(src)).astype(np.float64) for j, _, src in sources]
        return REDUCTIONS[p.reduce_op](np.stack(blocks), axis=0)
    total = np.zeros((len(rows), row_len(p)), np.float64)
    for j, where, src in sources:
        total[where] += block(p, group[j], np.asarray(src)).astype(np.float64)
    return total


def check_member(
    op: str, p: CollectiveParams, position: int, fetch: Callable[[np.ndarray], np.ndarray]
) -> float:
    """Compare one device's output with the float64 reference; the relative error, or raise."""
    group = next((members for members in groups(op, p) if position in members), None)
    if group is None:  # not in any group (send/recv bystanders): nothing to compare
        return 0.0
    member = group.index(position)
    rows = check_rows(COLLECTIVES[op].out_rows(block_rows(p), len(group)), row_len(p))
    want = expected(op, p, member, group, rows)
    err = relative_error(fetch(rows).reshape(want.shape), want)
    tol = tolerance(dtype(p.dtype).name)
    if not err <= tol:
        raise wrong_result(
            f"device {position} (member {member} of its group) differs from the float64 reference: "
            f"relative error {err:.3g} > tolerance {tol:.3g}"
        )
    return err


def checked_positions(n: int) -> list[int]:
    return sorted(set(np.linspace(0, n - 1, min(CHECKED_DEVICES, n)).astype(int).tolist()))
