"""The elementwise suite: one operation, one implementation, checked against PyTorch in fp32, then timed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from accelbench.catalogue import implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared, Timing
from accelbench.errors import unsupported
from accelbench.ops.elementwise import ElementwiseExtras, ElementwiseParams, elements
from accelbench.platform.frameworks import torch
from torch_backend.devices import peak_memory_bytes, resolve_device, synchronizer
from torch_backend.tensors import close_to, seeded_normal, torch_dtype


def _f() -> Any:
    return torch.nn.functional


EAGER: dict[str, Callable[..., Any]] = {
    "layernorm": lambda x, w, b: _f().layer_norm(x, (x.shape[-1],), w, b),
    "gelu": lambda x: _f().gelu(x),
    "gelu_tanh": lambda x: _f().gelu(x, approximate="tanh"),
    "silu": lambda x: _f().silu(x),
    "mse_loss": lambda x, t: _f().mse_loss(x, t),
    "cross_entropy": lambda logits, target: _f().cross_entropy(logits, target),
}
CUDA_ACTIVATION_CODES = {"gelu": 0, "gelu_tanh": 1, "silu": 2}
Make = Callable[[ElementwiseParams, Any], Callable[..., Any]]  # an implementation's function


def make_inputs(p: ElementwiseParams, device: Any) -> list[Any]:
    randn, g = seeded_normal(p.seed, device, torch_dtype(p.dtype))
    shape = (p.batch, p.seq, p.hidden)
    rows = p.batch * p.seq
    inputs: dict[str, Callable[[], list[Any]]] = {  # per operation; the activations take x alone
        "layernorm": lambda: [randn(*shape), 1 + 0.1 * randn(p.hidden), 0.1 * randn(p.hidden)],
        "mse_loss": lambda: [randn(*shape), randn(*shape)],
        "cross_entropy": lambda: [
            randn(rows, p.hidden),
            torch.randint(0, p.hidden, (rows,), generator=g).to(device),
        ],
    }
    return inputs.get(p.operation, lambda: [randn(*shape)])()


def _compiled(p: ElementwiseParams, device: Any) -> Callable[..., Any]:
    torch._dynamo.reset()
    return torch.compile(EAGER[p.operation])


def _triton(p: ElementwiseParams, device: Any) -> Callable[..., Any]:
    if device.type != "cuda":
        raise unsupported("the Triton kernels need a CUDA GPU")
    try:
        from torch_backend.kernels import triton_kernels as tk
    except ImportError as error:
        raise unsupported(f"Triton is not installed ({error})") from None
    op = p.operation
    return {"layernorm": tk.layernorm}.get(op, lambda x: tk.activation(x, op))


def _cuda(p: ElementwiseParams, device: Any) -> Callable[..., Any]:
    from torch_backend.kernels import cuda_kernels

    ext = cuda_kernels.extension()
    own: dict[str, Callable[..., Any]] = {"layernorm": lambda x, w, b: ext.layernorm(x, w, b, 1e-5)}
    return own.get(p.operation) or (lambda x: ext.activation(x, CUDA_ACTIVATION_CODES[p.operation]))


KERNELS_FOR = ("layernorm", *CUDA_ACTIVATION_CODES)  # what the project's own kernels cover


def kernel(make: Make, name: str) -> Any:
    """One of the project's kernels, for the operations it covers."""

    def build(p: ElementwiseParams, device: Any) -> Callable[..., Any]:
        if p.operation not in KERNELS_FOR:
            raise unsupported(f"this project has no {name} kernel for {p.operation}")
        return make(p, device)

    return build


def reference(p: ElementwiseParams, inputs: list[Any]) -> Any:
    """The eager PyTorch result computed in fp32 from the same (rounded) inputs."""
    upcast = [t.float() if t.is_floating_point() else t for t in inputs]
    return EAGER[p.operation](*upcast)


def prepared(name: str, make: Make, backend: Any, case: Case) -> Prepared:
    """One operation by one implementation, checked against eager PyTorch in fp32."""
    p = params_of(case, ElementwiseParams)
    device = resolve_device(p.device)
    inputs = make_inputs(p, device)
    fn = make(p, device)
    call = torch.no_grad()(lambda: fn(*inputs))
    close = close_to(p.dtype, f"{name} {p.operation} differs from PyTorch")

    def finish(timing: Timing, companions: dict[str, Timing]) -> ElementwiseExtras:
        median = timing.median_s
        return ElementwiseExtras(
            peak_memory_bytes=peak_memory_bytes(call, device),
            calls_per_s=1.0 / median,
            elements_per_s=elements(p) / median,
        )

    return Prepared(
        call=call,
        sync=synchronizer(device),
        check=lambda out: close(out, reference(p, inputs)),
        implementation=name,
        device=device,
        finish=finish,
    )


IMPLEMENTATIONS = {
    "eager": lambda p, device: EAGER[p.operation],
    "compile": _compiled,
    "triton": kernel(_triton, "triton"),
    "cuda": kernel(_cuda, "cuda"),
}

for _name, _make in IMPLEMENTATIONS.items():
    implementation("elementwise", "torch", _name)(functools.partial(prepared, _name, _make))
