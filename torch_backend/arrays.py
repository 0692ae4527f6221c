"""The array-op path shared by the compute families: host inputs to tensors, check, digest, placement."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelbench.catalogue import OpSpec, Params, get_spec, implementation, implementations
from accelbench.core.case import Case
from accelbench.core.types import Prepared
from accelbench.errors import unsupported
from accelbench.measure.inputs import Rotation, check_every_set, host_sets
from accelbench.measure.numerics import check_outputs, digest_rows
from accelbench.measure.procedure import check_fits
from accelbench.ops.common import PlacementExtras
from accelbench.platform.frameworks import torch
from torch_backend.devices import synchronizer
from torch_backend.tensors import take_rows, to_numpy, to_torch

Fn = Callable[..., dict[str, Any]]  # a compute op: input tensors in, named outputs out
Builder = Callable[[Any, Any], tuple[Fn, str]]  # (the op's parameters, device) -> (fn, its label)


def compute_device(case: Case) -> Any:
    """The case's device: GPU `device` when there are GPUs, else the CPU (one device, no sharding)."""
    where = case.params.placement
    if where.sharding != "none":
        raise unsupported(
            f"the PyTorch parity ops run on one device (sharding: none); this case has "
            f"sharding: {where.sharding}"
        )
    if not torch.cuda.is_available():
        if where.device != 0:
            raise unsupported(
                f"device {where.device} requested but this machine has no GPU, only the CPU"
            )
        return torch.device("cpu")
    index = int(where.device)
    if index >= torch.cuda.device_count():
        raise unsupported(
            f"device {index} requested but only {torch.cuda.device_count()} GPUs exist"
        )
    return torch.device("cuda", index)


def prepare_arrays(case: Case, build: Builder) -> Prepared:
    """Inputs drawn from the spec (bit-identical to JAX's), the built function, its check and digest."""
    spec: OpSpec = get_spec(case.op)
    device = compute_device(case)
    if device.type == "cuda":
        check_fits(spec, case, torch.cuda.get_device_properties(device).total_memory)
    hosts = host_sets(spec, case)
    rotation = Rotation([[to_torch(h[name], device) for name in h] for h in hosts])
    fn, label = build(case.params, device)

    def run(args: list[Any]) -> dict[str, Any]:
        with torch.inference_mode():
            return fn(*args)

    def call() -> dict[str, Any]:
        return run(rotation.next())

    sync = synchronizer(device)
    compile_s = None
    if label.startswith("compile"):  # torch.compile compiles at the first call: timed as such
        start = time.perf_counter()
        first = rotation.sets[0]
        if spec.traits.donated_input:  # an op that updates its input in place: compile on a copy
            first = [a.clone() for a in first]
        sync(run(first))
        compile_s = time.perf_counter() - start

    def fetch(out: dict[str, Any], name: str, rows: np.ndarray) -> np.ndarray:
        return to_numpy(take_rows(out[name], rows))

    def check_one(h: dict[str, np.ndarray], out: dict[str, Any]) -> float | None:
        return check_outputs(spec, case.params, h, lambda n, r: fetch(out, n, r))

    return Prepared(
        call=call,
        sync=sync,
        check=check_every_set(hosts, rotation, run, sync, check_one),
        input_sets=len(hosts),
        digest=lambda out: digest_rows(spec, case.params, hosts[0], lambda n, r: fetch(out, n, r)),
        implementation=label,
        compile_s=compile_s,
        device=device,
        finish=lambda timing, companions: PlacementExtras(used_device_count=1, sharding="none"),
    )


@dataclass(frozen=True)
class ArrayOp:
    """A compute op's torch implementation, keeping its builder for readers of the function."""

    build: Builder

    def __call__(self, backend: Any, case: Case) -> Prepared:
        return prepare_arrays(case, self.build)


def array_builder(op: str, implementation: str = "eager") -> Builder | None:
    """The builder behind an op's torch implementation, where it is an array op."""
    impl = implementations(op, "torch").get(implementation)
    made = getattr(impl, "build", None)
    return made.build if isinstance(made, ArrayOp) else None


def compiled(build: Builder) -> Builder:
    """The same builder with its function under torch.compile (compiled at the first, untimed call)."""

    def make(p: Params, device: Any) -> tuple[Fn, str]:
        fn, label = build(p, device)
        torch._dynamo.reset()
        return torch.compile(fn), "compile" if label == "eager" else f"compile:{label}"

    return make


def vjp(f: Callable[..., Any], primals: tuple[Any, ...], cotangent: Any) -> tuple[Any, ...]:
    """Gradients of f at `primals` against `cotangent`. Ops are called under torch.inference_mode,
    so a backward op steps out of it (its inputs were made outside it, so autograd may use them)."""
    with torch.inference_mode(False), torch.enable_grad():
        _, pullback = torch.func.vjp(f, *primals)
        return tuple(pullback(cotangent))


def register_array_op(ops: str | tuple[str, ...], build: Builder) -> None:
    """Register a compute op's PyTorch twins: `eager` and `compile` (torch.compile of the same function)."""
    implementation(ops, "torch", "eager")(ArrayOp(build))
    implementation(ops, "torch", "compile")(ArrayOp(compiled(build)))
