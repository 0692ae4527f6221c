"""The torchao inference suite: a row times the quantized model (compiled where a compile mode is set),
with the baseline and eager runs as companions. A shape's baseline is checked against float64 and timed
once for every recipe; the quantized copy must hold quantized weights and match it (SQNR) to be timed.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch_backend.recipes_today  # noqa: F401  (declares today's recipes)
from accelbench.catalogue import implementation, params_of
from accelbench.core.case import Case
from accelbench.core.types import Prepared, Timing
from accelbench.errors import CaseFailure, first_line, unsupported, wrong_result
from accelbench.measure.numerics import TOLERANCE, relative_error
from accelbench.ops.torchao import (
    BASELINE,
    BLOCK_DENSITY,
    TorchaoExtras,
    TorchaoInferenceParams,
    TorchaoModelParams,
    sparsity_kind,
)
from accelbench.platform.frameworks import torch
from torch_backend.devices import PeakMemory, memory_peaks, resolve_device, synchronizer
from torch_backend.recipes import (  # declares the recipes: their names are checked at planning
    Target,
    is_quantized,
    is_sparse,
    torchao_config,
    weight_bytes,
)
from torch_backend.tensors import torch_dtype, within

MIN_SQNR_DB = 10.0  # below this a quantized output is unusable, whatever the recipe
CHECK_ROWS = 64  # token-wise models are checked on this many rows in float64
BLOCK = 64  # block sparsity's block edge (torchao's BlockSparseWeightConfig default)


@dataclass
class Model:
    """One model ready to time: its eager and (optionally) compiled forward, and what it stores."""

    eager: Callable[[], Any]
    compiled: Callable[[], Any] | None
    compile_s: float | None
    weight_bytes: int
    output: Any = field(repr=False)

    @property
    def primary(self) -> Callable[[], Any]:
        return self.compiled or self.eager


@dataclass
class Baseline:
    """The high-precision model of a shape (a Model; a training Step), kept for every variant of it."""

    model: Any
    check_err: float
    tolerance: float
    timings: dict[str, Timing] = field(default_factory=dict)
    peaks: PeakMemory | None = None
    measured: bool = False  # peaks read (None off CUDA)

    def checked(self, what: str) -> float | None:
        """Its error against float64 (None: not checked), `wrong_result` past its tolerance."""
        if math.isnan(self.check_err):
            return None
        return within(
            self.check_err, self.tolerance, f"{what} output differs from the float64 model"
        )


_baselines: dict[str, dict[tuple[Any, ...], Baseline]] = {}  # per op


def build_model(p: TorchaoModelParams, device: Any, dtype: Any) -> tuple[Any, Any]:
    from torch_backend.models import create_model  # nn.Module subclasses: importing loads torch

    torch.manual_seed(0)
    model = create_model(p.model_type, p.k, p.n).to(device=device, dtype=dtype).eval()
    x = torch.randn(p.m, p.k, device=device, dtype=dtype)
    return model, x


def _ready(module: Any, x: Any, mode: str, device: Any) -> Model:
    eager = torch.no_grad()(lambda: module(x))
    output = eager()
    compiled = compile_s = None
    if mode != "off":
        torch._dynamo.reset()  # no recipe's graphs or guards carry over to the next
        compiled_module = torch.compile(module, mode=mode)
        compiled = torch.no_grad()(lambda: compiled_module(x))
        t0 = time.perf_counter()
        compiled()
        synchronizer(device)()
        compile_s = time.perf_counter() - t0
    return Model(eager, compiled, compile_s, weight_bytes(module), output)


def baseline_error(model: Any, x: Any, output: Any, model_type: str) -> tuple[float, float]:
    """Relative error of the baseline against the same model run in float64 on the CPU (NaN: too
    large), and its tolerance: twice the output dtype's (a norm, then a linear layer)."""
    from torch_backend.models import create_model

    tol = TOLERANCE[str(output.dtype).removeprefix("torch.")] * 2
    tokenwise = model_type != "transformer_block"
    if not tokenwise and x.shape[0] * x.shape[1] > (1 << 22):
        # attention mixes all tokens: a float64 reference would be the whole model
        return math.nan, tol
    rows = (
        torch.linspace(0, x.shape[0] - 1, min(CHECK_ROWS, x.shape[0])).long() if tokenwise else None
    )
    ref_model = create_model(model_type, x.shape[1], output.shape[1])
    ref_model.load_state_dict({k: v.double().cpu() for k, v in model.state_dict().items()})
    ref_in = (x[rows] if tokenwise else x).double().cpu()
    with torch.no_grad():
        ref = ref_model.double()(ref_in)
    got = (output[rows] if tokenwise else output).double().cpu()
    return relative_error(got.numpy(), ref.numpy()), tol


def kept_baseline(
    case: Case, p: TorchaoModelParams, device: Any, build: Callable[[], Any]
) -> Baseline:
    """A shape's baseline, built once for every case of that shape (and run length); one kept alive at
    a time. `build` gives the ready model, its module, input and output, checked against float64."""
    kept = _baselines.setdefault(case.op, {})
    model = (p.model_type, p.m, p.k, p.n, p.high_precision_dtype, p.compile_mode, str(device))
    key = (*model, case.run.num_runs, case.run.warmup)
    if key not in kept:
        ready, module, x, output = build()
        built = Baseline(ready, *baseline_error(module, x.detach(), output, p.model_type))
        kept.clear()
        kept[key] = built
    return kept[key]


def sqnr_db(reference: Any, other: Any) -> float:
    ref, diff = reference.double(), reference.double() - other.double()
    noise = diff.norm().item()
    return math.inf if noise == 0 else 20 * math.log10(ref.norm().item() / noise)


def write_artifacts(call: Callable[[], Any], case: Case, device: Any) -> dict[str, Any]:
    """The profiler trace and CUDA memory snapshot a case asks for, of three calls."""
    p, out = params_of(case, TorchaoModelParams), {}
    stem = case.label
    if p.enable_profiler:
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        path = os.path.join(p.output_dir, "profiler", f"{stem}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with profile(activities=acts) as prof:
            for _ in range(3):
                call()
            synchronizer(device)()
        prof.export_chrome_trace(path)
        out["profiler_trace_path"] = path
    if p.enable_memory_profiler:
        if device.type != "cuda":
            out["memory_profile_note"] = "skipped: CUDA memory snapshots need a CUDA device"
        else:
            base = os.path.join(p.output_dir, "memory_profiler", stem)
            os.makedirs(os.path.dirname(base), exist_ok=True)
            torch.cuda.memory._record_memory_history(max_entries=100000)
            for _ in range(3):
                call()
            torch.cuda.synchronize(device)
            snapshot = torch.cuda.memory._snapshot()
            torch.cuda.memory._record_memory_history(enabled=None)
            with open(base + ".pickle", "wb") as f:
                pickle.dump(snapshot, f)
            from torch_backend.memory_page import page

            with open(base + ".html", "w", encoding="utf-8") as f:
                f.write(page(snapshot, stem))  # offline: PyTorch's own loads a script from a CDN
            out["memory_profile_path"] = base + ".pickle"
            out["memory_profile_note"] = f"visualisation: {base}.html"
    return out


def median_s(t: Timing | None) -> float | None:
    return t.median_s if t else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def prune(module: Any, sparsity: str) -> float:
    """Zero every linear layer's weights in the sparsity's pattern (2:4 by magnitude, or all but the
    largest-norm blocks), the fraction kept returned: a sparse kernel is only right on sparse weights."""
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    kept = total = 0
    with torch.no_grad():
        for linear in linears:
            w = linear.weight
            if sparsity_kind(sparsity) == "semi-sparse":
                groups = w.abs().reshape(-1, 4)
                mask = torch.zeros_like(groups, dtype=torch.bool)
                mask.scatter_(1, groups.topk(2, dim=1).indices, True)
                mask = mask.reshape(w.shape)
            else:
                rows, cols = w.shape[0] // BLOCK, w.shape[1] // BLOCK
                if rows * BLOCK != w.shape[0] or cols * BLOCK != w.shape[1]:
                    raise unsupported(f"block sparsity needs dimensions divisible by {BLOCK}")
                norms = w.float().reshape(rows, BLOCK, cols, BLOCK).norm(dim=(1, 3))
                keep = max(1, round(BLOCK_DENSITY * norms.numel()))
                blocks = torch.zeros(norms.numel(), dtype=torch.bool, device=w.device)
                blocks[norms.flatten().topk(keep).indices] = True
                mask = blocks.reshape(rows, 1, cols, 1).expand(rows, BLOCK, cols, BLOCK)
                mask = mask.reshape(w.shape)
            w.mul_(mask)
            kept += int(mask.sum())
            total += mask.numel()
    return kept / total


def _transformed(
    p: TorchaoInferenceParams, config: Any, device: Any, dtype: Any
) -> tuple[Model, Any, float]:
    """The model after the recipe and sparsity, the output it must reproduce (the dense model's, or
    the pruned dense model's for a sparse case) and the weights' density."""
    from torchao.quantization import quantize_

    module, x = build_model(p, device, dtype)
    density, reference = 1.0, None
    try:
        if p.sparsity != "none":
            density = prune(module, p.sparsity)
            with torch.no_grad():
                reference = module(x)
        quantize_(module, config)
        with torch.no_grad():
            module(x)
    except CaseFailure:
        raise
    except Exception as error:  # a kernel or layout this device/torchao lacks
        what = "+".join(n for n in (p.recipe, p.sparsity) if n not in (BASELINE, "none"))
        raise unsupported(f"{what} failed on {device.type}: {first_line(error, 200)}") from None
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    if p.recipe != BASELINE and not all(is_quantized(m.weight) for m in linears):
        raise unsupported(
            f"quantize_ with {p.recipe} left the weights unquantized on {device.type}"
        )
    if p.sparsity != "none" and not all(is_sparse(m.weight) for m in linears):
        kinds = sorted({type(m.weight).__name__ for m in linears})
        raise unsupported(f"{p.sparsity} left dense weights ({', '.join(kinds)}) on {device.type}")
    return _ready(module, x, p.compile_mode, device), reference, density


@dataclass
class Sides:
    """One torchao case's models: the baseline, the transformed model and what it is compared with."""

    case: Case
    device: Any
    base: Any  # the baseline model and its check (kept_baseline)
    quant: Any  # the transformed model (or the baseline itself for the baseline recipe)
    reference: Any  # the output the transformed model's SQNR is taken against
    density: float
    transformed: bool  # a recipe or a sparsity was applied

    def companions(self, sync: Callable[[Any], None]) -> dict[str, Prepared]:
        """The other timings a row reports; for the baseline recipe the op itself is one of them."""

        def side(fn: Callable[[], Any]) -> Prepared:
            return Prepared(call=fn, sync=sync, device=self.device)

        base, quant = self.base.model, self.quant
        if not self.transformed:
            return {"baseline_eager": side(base.eager)} if quant.compiled else {}
        out = {"baseline_eager": side(base.eager)}
        if base.compiled:
            out["baseline_compiled"] = side(base.compiled)
        if quant.compiled:
            out["quantized_eager"] = side(quant.eager)
        return out

    def check(self, out: Any) -> float | None:
        err = self.base.checked("baseline")
        if self.transformed and (db := sqnr_db(self.reference, out)) < MIN_SQNR_DB:
            raise wrong_result(f"quantized output SQNR {db:.1f} dB is below {MIN_SQNR_DB} dB")
        return err

    def finish(self, primary: Timing, timings: dict[str, Timing]) -> TorchaoExtras:
        p, base, quant = params_of(self.case, TorchaoInferenceParams), self.base, self.quant
        own = "quantized" if self.transformed else "baseline"  # the baseline recipe's is both
        t = {**timings, f"{own}_{'compiled' if quant.compiled else 'eager'}": primary}
        base.timings.update({k: v for k, v in t.items() if k.startswith("baseline")})
        b_eager, b_compiled, q_eager, q_compiled = (
            median_s(t.get(f"{side}_{mode}"))
            for side in ("baseline", own)
            for mode in ("eager", "compiled")
        )
        if not base.measured:
            base.peaks, base.measured = memory_peaks(base.model.primary, self.device), True
        b, q = (
            base.peaks,
            memory_peaks(quant.primary, self.device) if self.transformed else base.peaks,
        )
        done = (("quantized", p.recipe != BASELINE), ("sparse", self.density < 1))
        mode = p.compile_mode
        return TorchaoExtras(
            shape_name=p.shape_name,
            model_type=p.model_type,
            recipe=p.recipe,
            sparsity=p.sparsity,
            recipe_status="+".join(w for w, applied in done if applied) or "baseline",
            compile_mode=mode,
            torch_compile_mode=mode,
            baseline_eager_s=b_eager,
            quantized_eager_s=q_eager,
            baseline_compiled_s=b_compiled,
            quantized_compiled_s=q_compiled,
            eager_speedup_ratio=ratio(b_eager, q_eager),
            compiled_speedup_ratio=ratio(b_compiled, q_compiled),
            compiled_over_eager_speedup_ratio=ratio(q_eager, q_compiled),
            baseline_compile_time_s=base.model.compile_s,
            quantized_compile_time_s=quant.compile_s,
            sqnr_db=sqnr_db(self.reference, quant.output) if self.transformed else math.inf,
            weight_density_pct=100 * self.density,
            baseline_weight_bytes=base.model.weight_bytes,
            quantized_weight_bytes=quant.weight_bytes,
            baseline_peak_memory_bytes=b.allocated_bytes if b else None,
            quantized_peak_memory_bytes=q.allocated_bytes if q else None,
            baseline_peak_reserved_bytes=b.reserved_bytes if b else None,
            quantized_peak_reserved_bytes=q.reserved_bytes if q else None,
            baseline_fragmentation_bytes=b.fragmentation_bytes if b else None,
            quantized_fragmentation_bytes=q.fragmentation_bytes if q else None,
            **write_artifacts(quant.eager, self.case, self.device),
        )


@implementation("torchao_inference", "torch", "torchao")
def prepare_torchao(backend: Any, case: Case) -> Prepared:
    p = params_of(case, TorchaoInferenceParams)
    device = resolve_device(p.device)
    dtype = torch_dtype(p.high_precision_dtype)
    target = Target(p.recipe, device, p.k, p.n, dtype, p.model_type)
    config = torchao_config(target, p.sparsity)  # unsupported recipes stop here

    def build() -> tuple[Model, Any, Any, Any]:
        module, x = build_model(p, device, dtype)
        model = _ready(module, x, p.compile_mode, device)
        return model, module, x, model.output

    base = kept_baseline(case, p, device, build)
    quant, reference, density = base.model, base.model.output, 1.0
    if config is not None:
        quant, pruned, density = _transformed(p, config, device, dtype)
        reference = base.model.output if pruned is None else pruned
    sync = synchronizer(device)
    sides = Sides(case, device, base, quant, reference, density, config is not None)
    return Prepared(
        call=quant.primary,
        sync=sync,
        check=sides.check,
        compile_s=quant.compile_s,
        implementation="compiled" if quant.compiled else "eager",
        device=device,
        companions=sides.companions(sync),
        known_timings=dict(base.timings),
        finish=sides.finish,
    )
