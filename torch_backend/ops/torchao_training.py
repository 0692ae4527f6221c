"""float8 training (torchao.float8): a step is the forward and the gradients of the input and every
parameter for a fixed upstream gradient (`torch.autograd.grad`: nothing accumulates). A shape's
high-precision step is checked and timed once for every float8 variant, which starts from the same
weights and must match its output and every gradient (SQNR).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from accelbench.catalogue import implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared, Timing
from accelbench.errors import CaseFailure, first_line, unsupported, wrong_result
from accelbench.ops.torchao import TorchaoModelParams, TorchaoTrainingExtras, TorchaoTrainingParams
from accelbench.platform.frameworks import torch
from torch_backend.devices import resolve_device, synchronizer
from torch_backend.ops.torchao import (
    MIN_SQNR_DB,
    build_model,
    kept_baseline,
    median_s,
    ratio,
    sqnr_db,
    write_artifacts,
)
from torch_backend.recipes import FP8_CORES, Target, needs_sm
from torch_backend.recipes_today import BLOCK, kernel_preference
from torch_backend.tensors import torch_dtype

FP8_DIVISOR = 16  # torch._scaled_mm needs every GEMM dimension divisible by 16


def float8_training_config(p: TorchaoTrainingParams, emulate: bool = False) -> Any:
    """torchao.float8's config for the case's granularity and accumulation (`emulate`: CPU tests)."""
    from torchao.float8 import Float8LinearConfig
    from torchao.float8.config import Float8GemmConfig

    config = Float8LinearConfig.from_recipe_name(p.scaling_granularity)
    # use_fast_accum is the output GEMM's setting; the gradients' GEMMs keep torchao's choice
    return dataclasses.replace(
        config,
        gemm_config_output=Float8GemmConfig(use_fast_accum=p.use_fast_accum),
        emulate=emulate,
    )


def convert(module: Any, config: Any) -> Any:
    """The module with every linear layer a Float8Linear, or `unsupported` naming the ones left."""
    from torchao.float8 import convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear

    convert_to_float8_training(module, config=config)
    left = [
        name
        for name, m in module.named_modules()
        if isinstance(m, torch.nn.Linear) and not isinstance(m, Float8Linear)
    ]
    if left:
        raise unsupported(f"convert_to_float8_training left {', '.join(left)} in high precision")
    return module


def _blockwise(module: Any, p: TorchaoTrainingParams, target: Any) -> None:
    """torchao's prototype blockwise fp8 training (1x128 activations, 128x128 weights, Triton)."""
    from torchao.prototype.blockwise_fp8_training.linear import Float8BlockwiseLinearConfig
    from torchao.quantization import quantize_

    needs_sm(target, (9, 0), "the blockwise fp8 Triton kernels (sm90)")
    if any(d % BLOCK for d in (p.k, p.n)):
        raise unsupported(f"blockwise fp8 training needs k and n multiples of {BLOCK}")
    quantize_(module, Float8BlockwiseLinearConfig())


def _mxfp8(kernel: str) -> Callable[[Any, TorchaoTrainingParams, Any], None]:
    """torchao's prototype MXFP8 training of linear layers (SM 10.0+, or emulated anywhere)."""

    def apply(module: Any, p: TorchaoTrainingParams, target: Any) -> None:
        from torchao.prototype.moe_training.config import MXFP8TrainingOpConfig
        from torchao.quantization import quantize_

        if kernel == "auto":
            needs_sm(target, (10, 0), "Blackwell-class MX tensor cores")
        quantize_(module, MXFP8TrainingOpConfig(kernel_preference=kernel_preference(kernel)))

    return apply


# each scaling of float8 training, and how a model takes it
TRAINING_CONVERSIONS: dict[str, Callable[[Any, TorchaoTrainingParams, Any], None]] = {
    "tensorwise": lambda module, p, target: convert(module, float8_training_config(p)),
    "rowwise": lambda module, p, target: convert(module, float8_training_config(p)),
    "blockwise": _blockwise,
    "mxfp8": _mxfp8("auto"),
    "mxfp8-emulated": _mxfp8("emulated"),
}


@dataclass
class Step:
    """A model's training step, ready to time, and what its first run produced."""

    call: Callable[[], Any]
    compile_s: float | None
    output: Any = field(repr=False)
    grads: tuple[Any, ...] = field(repr=False)
    names: tuple[str, ...] = ()  # what each gradient is of: "input", then the parameters' names


def make_step(module: Any, x: Any, grad_out: Any, mode: str, device: Any) -> Step:
    """One forward + backward of `module` (compiled when a mode is set), run once."""
    if mode != "off":
        torch._dynamo.reset()  # no earlier model's graphs or guards carry over
    forward = module if mode == "off" else torch.compile(module, mode=mode)
    named = [(name, q) for name, q in module.named_parameters() if q.requires_grad]
    params = [q for _, q in named]

    def call() -> tuple[Any, ...]:
        out = forward(x)
        return (out.detach(), *torch.autograd.grad(out, [x, *params], grad_out))

    t0 = time.perf_counter()
    first = call()
    synchronizer(device)()
    compile_s = time.perf_counter() - t0 if mode != "off" else None
    return Step(call, compile_s, first[0], first[1:], ("input", *(n for n, _ in named)))


def check_step(reference: Step, output: Any, grads: tuple[Any, ...]) -> tuple[float, float]:
    """Output and gradient SQNR against the high-precision step; `wrong_result` below MIN_SQNR_DB."""
    out_db = sqnr_db(reference.output, output)
    # the worst over the input gradient and every parameter gradient, and whose it is
    scores = zip(reference.grads, grads, reference.names, strict=True)
    grad_db, worst_grad = min((sqnr_db(r, g), name) for r, g, name in scores)
    if out_db < MIN_SQNR_DB:
        raise wrong_result(f"float8 output SQNR {out_db:.1f} dB is below {MIN_SQNR_DB} dB")
    if grad_db < MIN_SQNR_DB:
        raise wrong_result(
            f"float8 gradient of {worst_grad} has SQNR {grad_db:.1f} dB, below {MIN_SQNR_DB} dB"
        )
    return out_db, grad_db


def _inputs(p: TorchaoModelParams, device: Any, dtype: Any) -> tuple[Any, Any, Any]:
    module, x = build_model(p, device, dtype)
    x.requires_grad_(True)
    with torch.no_grad():
        shape = module(x).shape
    generator = torch.Generator(device="cpu").manual_seed(1)
    grad_out = torch.randn(shape, generator=generator, dtype=torch.float32).to(device, dtype)
    return module, x, grad_out


def _float8_step(p: TorchaoTrainingParams, device: Any, dtype: Any) -> Step:
    if p.scaling_granularity == "none":
        raise unsupported(
            f"float8 training needs a scaling_granularity: {', '.join(TRAINING_CONVERSIONS)}"
        )
    target = Target(f"float8 {p.scaling_granularity} training", device, p.k, p.n, dtype)
    if not p.scaling_granularity.endswith("emulated"):
        needs_sm(target, *FP8_CORES)
    if any(d % FP8_DIVISOR for d in (p.m, p.k, p.n)):
        raise unsupported(f"float8 GEMMs need m, k, n divisible by {FP8_DIVISOR}")
    module, x, grad_out = _inputs(p, device, dtype)
    try:
        TRAINING_CONVERSIONS[p.scaling_granularity](module, p, target)
        return make_step(module, x, grad_out, p.compile_mode, device)
    except CaseFailure:
        raise
    except Exception as error:  # a kernel this device or torch lacks
        raise unsupported(
            f"float8 {p.scaling_granularity} training failed: {first_line(error, 200)}"
        ) from None


@implementation("torchao_training", "torch", "torchao")
def prepare_training(backend: Any, case: Case) -> Prepared:
    p = params_of(case, TorchaoTrainingParams)
    device = resolve_device(p.device)
    dtype = torch_dtype(p.high_precision_dtype)
    float8 = p.recipe == "float8"
    step = _float8_step(p, device, dtype) if float8 else None  # unsupported stops here

    def build() -> tuple[Step, Any, Any, Any]:
        module, x, grad_out = _inputs(p, device, dtype)
        high = make_step(module, x, grad_out, p.compile_mode, device)
        return high, module, x, high.output

    base = kept_baseline(case, p, device, build)
    timed = step or base.model
    sync = synchronizer(device)
    sqnr = (math.inf, math.inf)

    def check(out: Any) -> float | None:
        nonlocal sqnr
        err = base.checked("high-precision")
        if float8:
            sqnr = check_step(base.model, out[0], out[1:])
        return err

    def finish(primary: Timing, timings: dict[str, Timing]) -> TorchaoTrainingExtras:
        baseline_s = median_s(base.timings.setdefault("baseline", timings.get("baseline", primary)))
        return TorchaoTrainingExtras(
            baseline_s=baseline_s,
            float8_s=median_s(primary) if float8 else None,
            speedup_ratio=ratio(baseline_s, median_s(primary)) if float8 else None,
            grad_sqnr_db=sqnr[1],
            output_sqnr_db=sqnr[0],
            baseline_compile_time_s=base.model.compile_s,
            compile_time_s=timed.compile_s,
            **write_artifacts(timed.call, case, device),
        )

    companions = {}
    if float8 and not base.timings:
        companions["baseline"] = Prepared(call=base.model.call, sync=sync, device=device)
    return Prepared(
        call=timed.call,
        sync=sync,
        check=check,
        compile_s=timed.compile_s,
        implementation="compiled" if p.compile_mode != "off" else "eager",
        device=device,
        companions=companions,
        known_timings=dict(base.timings),
        finish=finish,
    )
