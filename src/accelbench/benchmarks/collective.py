"""jax-bench's collectives (and TPUMS's ppermute) over their typed fields, TPUMS's DCN layout as ours,
and how upstream resolves a collective's mesh and group over the devices (`resolve_group`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelbench.benchmarks.base import Benchmark, Figures, UpstreamFields, itemsize, ours_param
from accelbench.catalogue import param
from accelbench.errors import UserError, counted
from accelbench.ops import collective_model as collectives


@dataclass(frozen=True)
class CollectiveFields(UpstreamFields):
    mesh_shape: str | None = param(
        "str", None, doc="'AxBxC': the devices' grid (default: one axis of all)"
    )
    sharding_strategy: str | None = param(
        "str", None, doc="'axbxc': axes with an entry > 1 form the groups"
    )
    matrix_dim: int = param("dim", 1024, doc="rows of 8x128 in one device's block")
    dtype: str = param("jnp_dtype", "bfloat16", doc="the exchanged blocks' dtype")
    seed: int = param("int", 0, doc="PRNG seed of the blocks")
    reduce_op: str = param("str", "sum", doc="all_reduce: sum, mean, max or min (any case)")
    # this project's (TPUMS's DCN layout: a mesh axis named dcn spans slices, hosts)
    mesh_axes: str | None = ours_param(
        "names", None, doc="the mesh axes' names, one per mesh_shape axis, e.g. dcn,ici"
    )
    input_layout: str = ours_param(
        "choice",
        "default",
        ("default", "dcn_1d"),
        doc="dcn_1d: a (matrix_dim, matrix_dim) input split over dcn",
    )
    ring_factor: float | None = ours_param(
        "positive", None, doc="DCN bus factor (default: the collective's own)"
    )
    batch_size: int | None = ours_param(
        "int", None, doc="DCN: recorded; each timed step is one collective here"
    )
    sync_between_runs: bool | None = ours_param("bool", None, doc="DCN: recorded")


@dataclass(frozen=True)
class PermuteFields(CollectiveFields):
    direction: str = param("choice", "uni", ("uni", "bidi"), "bidi: both ways at once")

    @property
    def both_ways(self) -> bool:
        return self.direction == "bidi"


def _ints(text: Any) -> list[int] | None:
    try:
        return [int(part) for part in str(text).split("x")]
    except ValueError:
        return None


def dcn_axis(f: CollectiveFields) -> int | None:
    """The mesh axis named dcn (TPUMS's mesh_axes), or None for an ICI-only mesh."""
    axes = [a.strip() for a in str(f.mesh_axes or "").split(",")]
    return axes.index("dcn") if "dcn" in axes else None


def dcn_slices(f: CollectiveFields) -> int:
    axis, shape = dcn_axis(f), _ints(f.mesh_shape)
    return shape[axis] if axis is not None and shape and axis < len(shape) else 1


def dcn_participants(f: CollectiveFields) -> int:
    """Devices of one slice."""
    shape = _ints(f.mesh_shape) or [1]
    return math.prod(shape) // dcn_slices(f)


def block_elements(f: CollectiveFields) -> int:
    """One device's block: matrix_dim tiles of 8x128, or (dcn_1d) matrix_dim^2 over the slices."""
    if f.input_layout == "dcn_1d":
        return int(f.matrix_dim) ** 2 // dcn_slices(f)
    return int(f.matrix_dim) * collectives.TILE


def block_bytes(f: CollectiveFields) -> float:
    return float(block_elements(f) * itemsize(f.dtype))


def scatter_chunk_bytes(f: CollectiveFields) -> float:
    return float(f.matrix_dim * 256 * itemsize(f.dtype))


def _sized(f: CollectiveFields) -> dict[str, Any]:
    if f.input_layout == "dcn_1d":
        return {"num_elements": block_elements(f)}
    return {"matrix_dim": f.matrix_dim}


def collective(
    name: str,
    class_name: str,
    moved: Callable[[Any, int], float],
    sized: Callable[[Any], dict[str, Any]] = _sized,
    size: tuple[str, Callable[[Any], float]] = ("shard_size_mb", block_bytes),  # its column
    run_id: Callable[[Any], str] = lambda f: f"dim_{f.matrix_dim}",
    typed: type[CollectiveFields] = CollectiveFields,
    notes: str = "the group is upstream's (a mesh the devices cannot fill: one axis of all)",
    **more: Any,
) -> None:
    """A collective: how it differs from the others (moved: upstream's bytes, by the group size;
    size: its size column, one device's block (reduce-scatter: its output), and how it is read)."""
    size_key, size_of = size

    def metrics(f: Figures) -> dict[str, Any]:  # bandwidth_gb_s: nccl-tests' bus bandwidth
        bus = f.bytes / (f.seconds * 1e9) if f.group > 1 and f.seconds else 0.0  # 0: a group of one
        return {"bandwidth_gb_s": bus, size_key: size_of(f.fields) / 1e6}

    Benchmark(
        name,
        class_name,
        typed,
        lambda f: {"dtype": f.dtype, "seed": f.seed, **sized(f)},
        run_id,
        lambda f, n: 0.0,
        moved,
        metrics,
        collective=True,
        notes=notes,
        **more,
    ).register()


collective(
    "all_reduce",
    "AllReduceBenchmark",
    lambda f, n: block_bytes(f) * 2 * (n - 1) / n,
    sized=lambda f: {**_sized(f), "reduce_op": str(f.reduce_op).lower()},
    run_id=lambda f: f"dim_{f.matrix_dim}_op_{str(f.reduce_op).lower()}",
)
collective("all_gather", "AllGatherBenchmark", lambda f, n: block_bytes(f) * (n - 1))
collective(
    "all_to_all",
    "AllToAllBenchmark",
    lambda f, n: block_bytes(f) / n * (n - 1),
    size=("local_size_mb", block_bytes),
)
# upstream's (N, D, 256) input is N blocks of D*256 elements: ours as rows of 128
collective(
    "reduce_scatter",
    "ReduceScatterBenchmark",
    lambda f, n: scatter_chunk_bytes(f) * (n - 1),
    runs="psum_scatter",
    sized=lambda f: {"num_elements": f.matrix_dim * 256},
    size=("shard_size_mb", scatter_chunk_bytes),
    flags="psum_scatter",
)
# TPUMS's permute (jax-bench has none): uni, member 0 to member 1 of each group; bidi, both ways
collective(
    "ppermute",
    "PPermuteBenchmark",
    lambda f, n: block_bytes(f) * (2 if f.both_ways else 1),
    runs=lambda f: "ppermute_bidi" if f.both_ways else "ppermute_uni",
    run_id=lambda f: f"dim_{f.matrix_dim}_dir_{f.direction}",
    flags="all_to_all",
    notes="TPUMS's, not jax-bench's; with mesh_axes dcn,ici it permutes across the slices",
    typed=PermuteFields,
    tpums_only=True,
)


@dataclass(frozen=True)
class Group:
    """A collective's mesh and group as upstream resolves them over the devices (`resolve_group`)."""

    mesh_shape: str  # our op's mesh ('' = one axis)
    strategy: str
    size: int  # upstream's N
    warnings: tuple[str, ...] = ()


def _mesh(text: Any) -> list[int] | None:
    """A mesh_shape's axes (None: none, or no grid: upstream falls back); an axis below 1 is refused."""
    shape = _ints(text) if text is not None else None
    if shape is not None and min(shape) < 1:
        raise UserError(f"mesh_shape {text!r} has an axis of {min(shape)}: each is 1 or more (2x4)")
    return shape


def _dcn_group(f: CollectiveFields, axis: int) -> Group:
    """DCN: the mesh as given, the group along dcn, never a fallback."""
    shape = _mesh(f.mesh_shape)
    names = str(f.mesh_axes).split(",")
    if shape is None or len(names) != len(shape):
        raise UserError(
            f"mesh_axes names {len(names)} axes; mesh_shape {f.mesh_shape!r} has "
            f"{len(shape) if shape else 'no'} axes: give one name per axis"
        )
    along = "x".join(str(d) if i == axis else "1" for i, d in enumerate(shape))
    return Group("x".join(map(str, shape)), along, shape[axis])


def resolve_group(f: CollectiveFields, devices: int) -> Group:
    if (axis := dcn_axis(f)) is not None:
        return _dcn_group(f, axis)
    shape_text, strategy_text = f.mesh_shape, f.sharding_strategy
    shape = _mesh(shape_text)
    warnings: list[str] = []
    if shape_text is not None and (shape is None or math.prod(shape) != devices):
        warnings.append(
            f"mesh_shape {shape_text} does not fill the {counted(devices, 'device')}: one axis of all "
            "of them (as jax-bench falls back), sharding_strategy ignored"
        )
        shape = None
    if shape is None:
        return Group("", "", devices, tuple(warnings))
    strategy = _ints(strategy_text) if strategy_text is not None else None
    if strategy_text is not None and (strategy is None or len(strategy) != len(shape)):
        warnings.append(
            f"sharding_strategy {strategy_text} does not match mesh_shape {shape_text}: every axis "
            "(as jax-bench falls back)"
        )
        strategy = None
    axes = range(len(shape)) if strategy is None else [i for i, v in enumerate(strategy) if v > 1]
    size = math.prod(shape[a] for a in axes)
    chosen = "x".join(str(v) for v in strategy) if strategy is not None else ""
    return Group("x".join(map(str, shape)), chosen, size, tuple(warnings))
