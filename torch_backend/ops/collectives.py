"""The collectives through torch.distributed, in every rank (torch_backend/distributed.py starts them):
rank = mesh position, the groups those of the JAX version. all_reduce works in place, as nccl-tests
does: the first call (the checked one) sums the inputs; later ones keep summing its result, which only
changes the values, not the traffic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accelbench.catalogue import implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.errors import unsupported
from accelbench.ops import collective_model as spec
from accelbench.platform.frameworks import torch
from torch_backend.devices import default_device, synchronizer
from torch_backend.tensors import to_torch


def _permute(
    x: Any, out: Any, mine: list[int], member: int, group: Any, pairs: list[tuple[int, int]]
) -> Any:
    """This member's sends, then its receives, of a permute's (sender, receiver) pairs."""
    dist = torch.distributed
    ops = [dist.P2POp(dist.isend, x, mine[d], group) for s, d in pairs if s == member]
    ops += [dist.P2POp(dist.irecv, out, mine[s], group) for s, d in pairs if d == member]
    return _wait(ops) if ops else None


def _wait(ops: list[Any]) -> list[Any]:
    return [request.wait() for request in torch.distributed.batch_isend_irecv(ops)]


def _reduction(reduce_op: str, out: Any, r: int, group: Any) -> tuple[Callable[[], Any], str]:
    """all_reduce with the case's reduction, and its name for the row; a mean where the process group
    has no AVG (gloo) is a sum then a division, one more kernel, and the name says so."""
    dist = torch.distributed
    if reduce_op != "mean" or dist.get_backend(group) == "nccl":
        op = getattr(dist.ReduceOp, {"sum": "SUM", "mean": "AVG"}.get(reduce_op, reduce_op.upper()))
        return lambda: dist.all_reduce(out, op=op, group=group), f"all_reduce({reduce_op})"

    def sum_then_divide() -> Any:
        dist.all_reduce(out, group=group)
        return out.div_(r)

    return sum_then_divide, "all_reduce(sum)/r"


@implementation(tuple(spec.COLLECTIVES), "torch", "torch.distributed")
def torch_collective(backend: Any, case: Case) -> Prepared:
    """This rank's tensors and call (every rank that takes part; the ranks see to bystanders)."""
    from torch_backend.distributed import agreed_check, process_group

    dist = torch.distributed
    op, p = case.op, params_of(case, spec.CollectiveParams)
    rank = dist.get_rank()
    members = spec.groups(op, p)
    (mine,) = [g for g in members if rank in g]
    group = process_group(mine)
    member, r = mine.index(rank), len(mine)
    c, n = spec.COLLECTIVES[op], spec.block_rows(p)
    if c.must_split and n % r:
        raise unsupported(f"{n} rows do not split into {r} chunks")
    device = default_device(rank)
    x = to_torch(spec.block(p, rank, np.arange(c.in_rows(n, r))), device)
    out = (
        x.clone()
        if c.in_place
        else torch.zeros((c.out_rows(n, r), spec.row_len(p)), dtype=x.dtype, device=device)
    )
    reduction, reduction_name = _reduction(p.reduce_op or "sum", out, r, group)
    # the *_single names replaced *_into_tensor / *_tensor in newer PyTorch (same arguments)
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    pairs = c.pairs(r, p)
    calls: dict[str, Callable[[], Any]] = {
        "psum": lambda: dist.all_reduce(out, group=group),
        "all_gather": lambda: gather(out, x, group=group),
        "psum_scatter": lambda: scatter(out, x, group=group),
        "all_to_all": lambda: dist.all_to_all_single(out, x, group=group),
        "send_recv": lambda: (
            dist.send(x, mine[1], group) if member == 0 else dist.recv(out, mine[0], group)
        ),
        "all_reduce": reduction,
    }
    call = calls.get(op, lambda: _permute(x, out, mine, member, group, pairs))
    how = {"all_reduce": reduction_name}.get(op, op)

    def run() -> Any:
        call()
        return out

    def check(result: Any) -> float:
        return spec.check_member(
            op,
            p,
            rank,
            lambda rows: result[torch.as_tensor(rows, device=device)].float().cpu().numpy(),
        )

    prepared = Prepared(
        call=run,
        sync=synchronizer(device),
        check=check,
        implementation=f"torch.distributed:{how}",
        device=device,
    )
    return agreed_check(prepared, group)
