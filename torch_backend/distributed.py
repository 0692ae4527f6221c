"""The PyTorch collectives' ranks: this process is rank 0, the harness starts ranks 1..n-1 (one process
per GPU, NCCL; or CPU processes, gloo) and keeps them for the run; rank 0 merges their timings. Ranks
keep in step through the cases: each starts with a world all-reduce (could every rank build it?), and a
wrong result is agreed within the group before anyone times, so no rank waits in a collective alone."""

from __future__ import annotations

import atexit
import contextlib
import traceback
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from accelbench.catalogue import PreparedImplementation, implementation_of, params_of
from accelbench.core.case import Case
from accelbench.core.types import CheckResult, Measurement, Prepared, Timing, slowest_per_iteration
from accelbench.errors import CaseFailure, Status, unsupported, wrong_result
from accelbench.measure.procedure import measure
from accelbench.ops.collective_model import (
    COLLECTIVES,
    CollectiveParams,
    devices_needed,
    groups,
    lone_group,
)
from accelbench.ops.collectives import extras_for
from accelbench.platform import processes
from accelbench.platform.backends import BACKENDS
from torch_backend.devices import default_device

# a rank gone quiet this long fails the case rather than hanging the run
TIMEOUT = timedelta(minutes=5)
NOT_BUILT = "another rank could not build the case"


@dataclass
class Outcome:
    """What one rank reports for a case: its timing and check, or why it failed; nothing if idle."""

    rank: int
    timing: Timing | None = None
    check: CheckResult | None = None
    failure: tuple[Status, str] | None = None


_GROUPS: dict[tuple[int, ...], Any] = {}


def make_groups(members: list[list[int]]) -> None:
    """Every group of a case, made by every rank in the same order, bystanders included: each
    `new_group` is a call of the whole job (a rank outside a send/recv pair that skipped it left the
    next pair's ranks waiting); groups are kept while the ranks live, keyed by their members."""
    for group in members:
        if len(group) < dist.get_world_size() and tuple(group) not in _GROUPS:
            _GROUPS[tuple(group)] = dist.new_group(list(group))


def process_group(mine: list[int]) -> Any:
    """The group of this rank's members (`make_groups` made it)."""
    return dist.group.WORLD if len(mine) == dist.get_world_size() else _GROUPS[tuple(mine)]


def _largest(value: float, group: Any = None) -> float:
    """The largest of the group's values (`Prepared.agree`: each round's size, whether to go on)."""
    held = torch.tensor([value], dtype=torch.float64, device=default_device(dist.get_rank()))
    dist.all_reduce(held, op=dist.ReduceOp.MAX, group=group)
    return float(held.item())


def _agree(ok: bool, group: Any = None) -> bool:
    """True on every rank of the group when it is true on all of them (no rank says it is not)."""
    return _largest(float(not ok), group) == 0.0


def agreed_check(prepared: Prepared, group: Any) -> Prepared:
    """The rank's check and timing decisions (`Prepared.agree`) agreed within its group."""
    check = prepared.check
    assert check is not None  # every collective checks its output

    def agreed(out: Any) -> float | None:
        try:
            err = check(out)
        except CaseFailure:
            _agree(False, group)  # the others fail too, on this rank's word
            raise
        if not _agree(True, group):
            raise wrong_result("another rank's output differs from the reference")
        return err

    return replace(prepared, check=agreed, agree=lambda value: _largest(value, group))


def run_rank(backend: Any, case: Case) -> Outcome:
    """This rank's part of a case (every rank, rank 0 included, runs exactly this)."""
    rank = dist.get_rank()
    prepared: Prepared | None = None
    failure: tuple[Status, str] | None = None
    members = groups(case.op, params_of(case, CollectiveParams))
    make_groups(members)
    # a bystander (send/recv between two other ranks) builds nothing; every rank agrees below
    if any(rank in group for group in members):
        try:
            impl = implementation_of(PreparedImplementation, case.op, "torch", case.implementation)
            prepared = impl.build(backend, case)
        except Exception as error:
            failure = _failure(rank, error, 300)
    if not _agree(failure is None):
        return Outcome(rank, failure=failure or (Status.ERROR, NOT_BUILT))
    if prepared is None:
        return Outcome(rank)
    try:
        device = prepared.device if prepared.device is not None else default_device(rank)
        m = measure(case, prepared, backend.timer(case, device), backend.device_info_for(device))
    except Exception as error:
        return Outcome(rank, failure=_failure(rank, error))
    return Outcome(rank, m.timing, m.check)


def _failure(rank: int, error: Exception, limit: int | None = None) -> tuple[Status, str]:
    """A case's failure as its status and reason; anything but a CaseFailure is an error of the rank."""
    if isinstance(error, CaseFailure):
        return error.status, error.reason
    return Status.ERROR, f"rank {rank}: {type(error).__name__}: {str(error)[:limit]}"


def _serve(rank: int, world: int, port: int, conn: Any) -> None:
    """A worker rank: join the group, then run whatever case rank 0 sends until it sends None."""
    if torch.cuda.is_available():
        torch.cuda.set_device(rank)
    _init(rank, world, port)
    backend = BACKENDS["torch"].load()  # by the registry: the backend module imports this one
    try:
        while (case := conn.recv()) is not None:
            try:
                conn.send(run_rank(backend, case))
            except Exception:
                conn.send(
                    Outcome(rank, failure=(Status.CRASHED, traceback.format_exc(limit=3)[-300:]))
                )
    finally:
        dist.destroy_process_group()


def _init(rank: int, world: int, port: int) -> None:
    dist.init_process_group(
        "nccl" if torch.cuda.is_available() else "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=TIMEOUT,
    )


class Ranks:
    """Ranks 1..world-1 in their own processes, this process as rank 0."""

    def __init__(self, world: int) -> None:
        port = processes.free_port()
        context = mp.get_context("spawn")
        self.world = world
        self.conns = []
        self.procs = []
        for rank in range(1, world):
            ours, theirs = context.Pipe()
            proc = context.Process(target=_serve, args=(rank, world, port, theirs), daemon=True)
            proc.start()
            self.conns.append(ours)
            self.procs.append(proc)
        _init(0, world, port)

    def run(self, backend: Any, case: Case) -> list[Outcome]:
        for conn in self.conns:
            conn.send(case)
        outcomes = [run_rank(backend, case)]
        for rank, conn in enumerate(self.conns, start=1):
            try:
                outcomes.append(conn.recv())
            except (EOFError, OSError):
                outcomes.append(Outcome(rank, failure=(Status.CRASHED, f"rank {rank} exited")))
        return outcomes

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(None)
        for proc in self.procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
        if dist.is_initialized():
            dist.destroy_process_group()
        _GROUPS.clear()


_ranks: dict[int, Ranks] = {}  # the run's ranks, by world size: one set at a time


def ranks_for(world: int) -> Ranks:
    """The run's ranks, started again only when a case needs another world size."""
    if world not in _ranks:
        _close()
        _ranks[world] = Ranks(world)
        atexit.register(_close)
    return _ranks[world]


def _close() -> None:
    while _ranks:
        _ranks.popitem()[1].close()


def _drop_first(outcome: Outcome) -> Outcome:
    """The rank's timing without its settling iteration. The kernel breakdown goes too: it was
    averaged over every iteration, the settling one included (a barrier before each iteration instead
    made it worse: rank 0, the harness's own process, then launched ~190 us after the others)."""
    t = outcome.timing
    if t is None:
        return outcome
    trimmed = {
        name: getattr(t, name)[1:]
        for name in ("samples_s", "wall_samples_s", "span_samples_s", "launch_samples_s")
        if len(getattr(t, name)) > 1
    }
    return replace(outcome, timing=replace(t, kernels=[], **trimmed))


def measure_ranks(backend: Any, case: Case) -> Measurement:
    """Every rank measures the case; rank 0 merges: the slowest rank per iteration, the worst check."""
    if not processes.primary():
        raise unsupported("the torch.distributed ranks are started by process 0 of the job")
    p = params_of(case, CollectiveParams)
    if lone := lone_group(case.op, p):
        raise unsupported(lone)
    # the mesh's ranks, or every local GPU for a point-to-point pair (the reference's local mesh)
    world = devices_needed(case.op, p)
    if COLLECTIVES[case.op].point_to_point and torch.cuda.is_available():
        world = max(world, torch.cuda.device_count())
    if torch.cuda.is_available() and world > torch.cuda.device_count():
        raise unsupported(f"needs {world} GPUs, {torch.cuda.device_count()} are visible")
    # one more iteration than asked, dropped on every rank: the ranks' profilers start at different
    # moments, so the first timed collective of the early ranks waits for the late ones (93 ms seen)
    settled = replace(case, run=replace(case.run, num_runs=case.run.num_runs + 1))
    outcomes = [_drop_first(o) for o in ranks_for(world).run(backend, settled)]
    failed = [o for o in outcomes if o.failure]
    if any(o.failure and o.failure[0] is Status.CRASHED for o in outcomes):
        _close()  # a lost rank leaves the group unusable: the next case starts new ranks
    if failed:
        status, reason = failed[0].failure or (Status.ERROR, "")
        raise CaseFailure(status, reason)
    timings = {f"rank{o.rank}": o.timing for o in outcomes if o.timing is not None}
    first = next(iter(timings.values()))
    per_rank = {name: t.samples_s for name, t in timings.items()}
    merged = replace(
        first,
        samples_s=slowest_per_iteration(per_rank),
        source=f"{first.source}_slowest_rank",
        device_samples_s=per_rank,
    )
    checks = [o.check for o in outcomes if o.check]  # a rank's check comes with its timing
    worst = max((c.max_rel_error_ratio or 0.0 for c in checks), default=None)
    check = replace(checks[0], max_rel_error_ratio=worst) if checks else CheckResult("off", "off")
    return Measurement(
        timing=merged,
        device=replace(backend.device_info_for(default_device()), count=world),
        check=check,
        implementation=f"torch.distributed:{dist.get_backend() if dist.is_initialized() else ''}",
        # one device per rank: each its own chip, and each rank its own process
        extras=extras_for(case.op, p, merged, list(range(world)), processes=world),
    )
