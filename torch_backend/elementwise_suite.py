"""The elementwise suite: one operation, one implementation, checked against PyTorch in fp32, then timed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from microbench.errors import unsupported, wrong_result
from microbench.measurement import Measurement, Prepared
from microbench.numerics import TOLERANCE
from microbench.ops.elementwise import elements
from microbench.plan import Case
from microbench.registry import OpSpec
from torch_backend.devices import peak_memory_mb, resolve_device, synchronizer
from torch_backend.tensors import relative_error, torch_dtype

EAGER: dict[str, Callable[..., torch.Tensor]] = {
    "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": lambda x: F.silu(x),
    "mse_loss": lambda x, t: F.mse_loss(x, t),
    "cross_entropy": lambda logits, target: F.cross_entropy(logits, target),
}


def make_inputs(p: dict[str, Any], device: torch.device) -> list[torch.Tensor]:
    dt = torch_dtype(p["dtype"])
    g = torch.Generator(device="cpu").manual_seed(p["seed"])
    shape = (p["batch"], p["seq"], p["hidden"])

    def randn(*s: int) -> torch.Tensor:
        return torch.randn(*s, generator=g).to(device=device, dtype=dt)

    op = p["operation"]
    if op == "layernorm":
        return [randn(*shape), 1 + 0.1 * randn(p["hidden"]), 0.1 * randn(p["hidden"])]
    if op == "mse_loss":
        return [randn(*shape), randn(*shape)]
    if op == "cross_entropy":
        rows = p["batch"] * p["seq"]
        return [randn(rows, p["hidden"]), torch.randint(0, p["hidden"], (rows,), generator=g).to(device)]
    return [randn(*shape)]


def implementation(p: dict[str, Any], device: torch.device) -> Callable[..., torch.Tensor]:
    op, impl = p["operation"], p["implementation"]
    if impl == "eager":
        return EAGER[op]
    if impl == "compile":
        torch._dynamo.reset()
        return torch.compile(EAGER[op])
    if op in ("mse_loss", "cross_entropy"):
        raise unsupported(f"this project has no {impl} kernel for {op}")
    if impl == "triton":
        if device.type != "cuda":
            raise unsupported("the Triton kernels need a CUDA GPU")
        try:
            from torch_backend.kernels import triton_kernels as tk
        except ImportError as error:
            raise unsupported(f"Triton is not installed ({error})") from None
        return tk.layernorm if op == "layernorm" else (lambda x: tk.activation(x, op))
    from torch_backend.kernels import cuda_kernels
    ext = cuda_kernels.extension()
    if op == "layernorm":
        return lambda x, w, b: ext.layernorm(x, w, b, 1e-5)
    code = {"gelu": 0, "gelu_tanh": 1, "silu": 2}[op]
    return lambda x: ext.activation(x, code)


def reference(p: dict[str, Any], inputs: list[torch.Tensor]) -> torch.Tensor:
    """The eager PyTorch result computed in fp32 from the same (rounded) inputs."""
    upcast = [t.float() if t.is_floating_point() else t for t in inputs]
    return EAGER[p["operation"]](*upcast)


def measure_elementwise(backend: Any, case: Case, spec: OpSpec) -> Measurement:
    p = case.params
    device = resolve_device(p["device"])
    inputs = make_inputs(p, device)
    fn = implementation(p, device)

    def call() -> torch.Tensor:
        with torch.no_grad():
            return fn(*inputs)

    out = call()  # also compiles / builds; never timed
    synchronizer(device)()
    err = relative_error(out, reference(p, inputs))
    tol = 2 * TOLERANCE[p["dtype"]]
    if not err <= tol:
        raise wrong_result(f"{p['implementation']} {p['operation']} differs from PyTorch: "
                           f"relative error {err:.3g} > {tol:.3g}")
    del out
    prepared = Prepared(call=call, sync=synchronizer(device), fetch=lambda o, n, r: np.empty(0), inputs={},
                        implementation=p["implementation"])
    timing = backend.timer(device)(prepared, case.run.warmup, case.run.num_runs)
    median = float(np.median(timing.samples_s))
    extra = {"time_ms": median * 1e3, "memory_mb": peak_memory_mb(call, device),
             "inference_speed": 1.0 / median, "elements_per_s": elements(p) / median,
             "throughput_gbps": spec.bytes(p) / median / 1e9}
    return Measurement(timing=timing, device=backend.device_info_for(device), max_rel_error=err, check="passed",
                       implementation=p["implementation"], extra=extra)
