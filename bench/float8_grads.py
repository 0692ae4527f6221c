"""Issue 62 §4: where the float8 rowwise transformer block's gradients go wrong (not a test).

`bash bench/gpu_run.sh upstream62` gave float8 rowwise training of the compiled transformer block at
512x512x512 `wrong_result`: "float8 gradient of norm1.weight has SQNR -2.2 dB, below 10.0 dB", while the
same block eager (rowwise) and compiled (tensorwise) passed. This prints, for the block as the torchao
training op builds it, every gradient's SQNR against a float64 reference of the same step (same weights,
input and upstream gradient, on the CPU) for bf16 and both float8 scalings, eager, through AOTAutograd
without Inductor (`aot_eager`) and through Inductor (with and without persistent reductions); and against the bf16 step of the same mode (what the
op's check reads). Which variant departs says whose the error is: the reference (bf16 against float64),
torchao's scaling (eager), or the compiler (Inductor only).

    python bench/float8_grads.py [--device cuda|cpu] [--size 512] [--modes off aot_eager ...]

On a CPU torchao's float8 is emulated (`emulate=True`): its scaling and rounding, not the GPU's GEMMs.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from typing import Any

import torch
import torch._inductor.config

from torch_backend.models import create_model
from torch_backend.ops.torchao import sqnr_db
from torch_backend.ops.torchao_training import convert, float8_training_config

RECIPES = ("bf16", "tensorwise", "rowwise", "rowwise-exact")  # -exact: no fast accumulation
# each mode's backend, Inductor settings and recipes; no_persistent: Inductor without persistent
# reductions (pytorch/pytorch#186582: their layer norm's numerics, amplified by a reciprocal after it)
MODES = {
    "off": (None, {}, RECIPES),
    "aot_eager": ("aot_eager", {}, RECIPES),
    "default": ("inductor", {}, RECIPES),
    "no_persistent": ("inductor", {"triton.persistent_reductions": False}, ("bf16", "rowwise")),
}


def step(model: Any, x: Any, grad_out: Any, mode: str) -> dict[str, Any]:
    """The op's step (forward, then the input's and every parameter's gradient), named."""
    torch._dynamo.reset()
    backend, settings, _ = MODES[mode]
    forward = model if backend is None else torch.compile(model, backend=backend)
    named = [("input", x), *((n, q) for n, q in model.named_parameters() if q.requires_grad)]
    with torch._inductor.config.patch(settings):  # compiled at the first call
        out = forward(x)
        grads = torch.autograd.grad(out, [q for _, q in named], grad_out)
    return {"output": out.detach(), **{n: g for (n, _), g in zip(named, grads, strict=True)}}


def build(size: int, device: Any, recipe: str) -> tuple[Any, Any, Any]:
    torch.manual_seed(0)  # the op's weights and input (build_model), then its upstream gradient
    model = create_model("transformer_block", size, size).to(device=device, dtype=torch.bfloat16)
    # drawn on the CPU, as the float64 reference's is (a CUDA generator draws other numbers)
    x = torch.randn(size, size, dtype=torch.bfloat16).to(device).requires_grad_(True)
    generator = torch.Generator(device="cpu").manual_seed(1)
    grad_out = torch.randn((size, size), generator=generator).to(device, torch.bfloat16)
    if recipe != "bf16":  # the two fields the op's config reads
        fields = Fields(recipe.split("-")[0], "exact" not in recipe)
        convert(model, float8_training_config(fields, emulate=device.type != "cuda"))  # type: ignore[arg-type]
    return model, x, grad_out


@dataclasses.dataclass
class Fields:
    scaling_granularity: str
    use_fast_accum: bool


def reference(size: int) -> dict[str, Any]:
    """The same step in float64 on the CPU, from the bf16 model's weights and inputs."""
    model, x, grad_out = build(size, torch.device("cpu"), "bf16")
    exact = create_model("transformer_block", size, size).double()
    exact.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    x64 = x.detach().double().requires_grad_(True)
    return step(exact, x64, grad_out.double(), "off")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    args = parser.parse_args()
    device = torch.device(args.device)
    exact = reference(args.size)
    largest = max(g.double().norm().item() for n, g in exact.items() if n != "output")
    columns, runs = [], {}
    for mode in args.modes:
        for recipe in MODES[mode][2]:
            start = time.perf_counter()
            try:
                runs[recipe, mode] = step(*build(args.size, device, recipe), mode)
            except Exception as error:  # a recipe this device lacks: say so, keep the rest
                print(
                    f"- {recipe} {mode}: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
                )
                continue
            columns.append((recipe, mode))
            print(f"- {recipe} {mode}: {time.perf_counter() - start:.1f} s")
    print(
        f"\n### transformer_block {args.size}^3 on {device}: SQNR in dB against float64 "
        "(in brackets: against the bf16 step of the same mode, as the op checks)\n"
    )
    print(
        "| tensor | norm / largest gradient's | "
        + " | ".join(f"{r} {m}" for r, m in columns)
        + " |"
    )
    print("|---|---:|" + "---:|" * len(columns))
    for name, truth in exact.items():
        share = "" if name == "output" else f"{truth.double().norm().item() / largest:.3f}"
        cells = []
        for recipe, mode in columns:
            got = runs[recipe, mode][name].cpu()
            against = runs.get(("bf16", mode))
            base = (
                f" [{sqnr_db(against[name].cpu(), got):.1f}]"
                if against and recipe != "bf16"
                else ""
            )
            cells.append(f"{_db(sqnr_db(truth, got))}{base}")
        print(f"| {name} | {share} | " + " | ".join(cells) + " |")


def _db(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.1f}"


if __name__ == "__main__":
    main()
