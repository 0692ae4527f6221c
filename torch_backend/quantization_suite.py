"""The torchao inference suite: one model before and after a recipe, eager and compiled.

Order inside a case: baseline (checked against a float64 run of the same model), then the
baseline is freed, then the quantized copy is built, verified to hold quantized weights,
compared with the baseline output (SQNR) and timed. Compilation happens outside every sample.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from microbench.errors import CaseFailure, unsupported, wrong_result
from microbench.measurement import Measurement, Prepared, Timing
from microbench.numerics import TOLERANCE, relative_error
from microbench.plan import Case
from microbench.registry import OpSpec
from torch_backend.devices import peak_memory_mb, resolve_device, synchronizer
from torch_backend.models import create_model
from torch_backend.recipes import is_quantized, torchao_config, weight_bytes
from torch_backend.tensors import torch_dtype

MIN_SQNR_DB = 10.0       # below this a quantized output is unusable, whatever the recipe
CHECK_ROWS = 64          # token-wise models are checked on this many rows in float64
_baselines: dict[tuple, "ModelRun"] = {}


@dataclass
class ModelRun:
    eager: Timing
    compiled: Timing | None
    compile_s: float | None
    peak_memory_mb: float | None
    weight_bytes: int
    output: torch.Tensor = field(repr=False)
    check_err: float | None = None  # baseline only: relative error against the float64 model


def _timing(fn: Any, x: torch.Tensor, device: torch.device, timer: Any, case: Case) -> Timing:
    def call() -> torch.Tensor:
        with torch.no_grad():
            return fn(x)
    prepared = Prepared(call=call, sync=synchronizer(device), fetch=lambda out, name, rows: np.empty(0), inputs={})
    return timer(prepared, case.run.warmup, case.run.num_runs)


def run_model(model: torch.nn.Module, x: torch.Tensor, case: Case, device: torch.device, timer: Any) -> ModelRun:
    with torch.no_grad():
        output = model(x)
    eager = _timing(model, x, device, timer, case)
    compiled = compile_s = None
    mode = case.params["compile_mode"]
    if mode != "off":
        torch._dynamo.reset()  # no recipe's graphs or guards carry over to the next
        fn = torch.compile(model, mode=mode)
        t0 = time.perf_counter()
        with torch.no_grad():
            fn(x)
        synchronizer(device)()
        compile_s = time.perf_counter() - t0
        compiled = _timing(fn, x, device, timer, case)
        peak = peak_memory_mb(lambda: fn(x), device)
        del fn
    else:
        peak = peak_memory_mb(lambda: model(x), device)
    return ModelRun(eager, compiled, compile_s, peak, weight_bytes(model), output)


def _build(p: dict[str, Any], device: torch.device, dtype: torch.dtype) -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = create_model(p["model_type"], p["k"], p["n"]).to(device=device, dtype=dtype).eval()
    x = torch.randn(p["m"], p["k"], device=device, dtype=dtype)
    return model, x


def check_baseline(model: torch.nn.Module, x: torch.Tensor, output: torch.Tensor, model_type: str) -> float | None:
    """Relative error of the baseline against the same model run in float64 on the CPU."""
    tokenwise = model_type != "transformer_block"
    if not tokenwise and x.shape[0] * x.shape[1] > (1 << 22):
        return None  # attention mixes all tokens: a float64 reference would be the whole model
    rows = torch.linspace(0, x.shape[0] - 1, min(CHECK_ROWS, x.shape[0])).long() if tokenwise else None
    ref_model = create_model(model_type, x.shape[1], output.shape[1])
    ref_model.load_state_dict({k: v.double().cpu() for k, v in model.state_dict().items()})
    ref_in = (x[rows] if tokenwise else x).double().cpu()
    with torch.no_grad():
        ref = ref_model.double()(ref_in)
    got = (output[rows] if tokenwise else output).double().cpu()
    err = relative_error(got.numpy(), ref.numpy())
    tol = TOLERANCE[str(output.dtype).removeprefix("torch.")] * 2  # two roundings: norm + linear
    if not err <= tol:
        raise wrong_result(f"baseline output differs from the float64 model: relative error {err:.3g} > {tol:.3g}")
    return err


def sqnr_db(reference: torch.Tensor, other: torch.Tensor) -> float:
    ref, diff = reference.double(), reference.double() - other.double()
    noise = diff.norm().item()
    return math.inf if noise == 0 else 20 * math.log10(ref.norm().item() / noise)


def _baseline(case: Case, device: torch.device, dtype: torch.dtype, timer: Any) -> tuple[ModelRun, float | None]:
    p = case.params
    key = (p["model_type"], p["m"], p["k"], p["n"], p["high_precision_dtype"], p["compile_mode"], str(device),
           case.run.num_runs, case.run.warmup)
    if key not in _baselines:
        model, x = _build(p, device, dtype)
        run = run_model(model, x, case, device, timer)
        run.check_err = check_baseline(model, x, run.output, p["model_type"])
        del model
        _baselines.clear()  # keep one baseline alive at a time
        _baselines[key] = run
    run = _baselines[key]
    return run, run.check_err


def _artifacts(model: torch.nn.Module, x: torch.Tensor, case: Case, device: torch.device) -> dict[str, Any]:
    p, out = case.params, {}
    stem = case.label
    if p["enable_profiler"]:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        path = os.path.join(p["output_dir"], "profiler", f"{stem}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with profile(activities=acts) as prof, torch.no_grad():
            for _ in range(3):
                model(x)
            synchronizer(device)()
        prof.export_chrome_trace(path)
        out["profiler_trace_path"] = path
    if p["enable_memory_profiler"]:
        if device.type != "cuda":
            out["memory_profile_note"] = "skipped: CUDA memory snapshots need a CUDA device"
        else:
            base = os.path.join(p["output_dir"], "memory_profiler", stem)
            os.makedirs(os.path.dirname(base), exist_ok=True)
            torch.cuda.memory._record_memory_history(max_entries=100000)
            with torch.no_grad():
                for _ in range(3):
                    model(x)
            torch.cuda.synchronize(device)
            snapshot = torch.cuda.memory._snapshot()
            torch.cuda.memory._record_memory_history(enabled=None)
            with open(base + ".pickle", "wb") as f:
                pickle.dump(snapshot, f)
            from torch.cuda._memory_viz import trace_plot
            with open(base + ".html", "w") as f:
                f.write(trace_plot(snapshot))
            out["memory_profile_path"] = base + ".pickle"
            out["memory_profile_note"] = f"visualisation: {base}.html"
    return out


def _ms(t: Timing | None) -> float | None:
    return float(np.median(t.samples_s)) * 1e3 if t else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


@contextmanager
def isolated_compiler_state() -> Iterator[None]:
    """torchao's configs set global inductor options (e.g. coordinate_descent_tuning for int8); restore
    them and dynamo's caches after each case so no recipe's settings reach the next case."""
    import torch._inductor.config as inductor_config
    saved = inductor_config.get_config_copy()
    try:
        yield
    finally:
        inductor_config.load_config(saved)
        torch._dynamo.reset()


def measure_quantization(backend: Any, case: Case, spec: OpSpec) -> Measurement:
    with isolated_compiler_state():
        return _measure_quantization(backend, case, spec)


def _measure_quantization(backend: Any, case: Case, spec: OpSpec) -> Measurement:
    p = case.params
    device = resolve_device(p["device"])
    dtype = torch_dtype(p["high_precision_dtype"])
    timer = backend.timer(device)
    config = torchao_config(p["recipe"], device, p["k"], p["n"])  # unsupported recipes stop here
    base, base_err = _baseline(case, device, dtype, timer)
    if config is None:
        quant, sqnr = base, math.inf
    else:
        from torchao.quantization import quantize_
        model, x = _build(p, device, dtype)
        try:
            quantize_(model, config)
            with torch.no_grad():
                model(x)
        except CaseFailure:
            raise
        except Exception as error:  # a kernel or layout this device/torchao lacks
            raise unsupported(f"{p['recipe']} failed on {device.type}: {str(error).splitlines()[0][:200]}") from None
        linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
        if not all(is_quantized(m.weight) for m in linears):
            raise unsupported(f"quantize_ with {p['recipe']} left the weights unquantized on {device.type}")
        quant = run_model(model, x, case, device, timer)
        sqnr = sqnr_db(base.output, quant.output)
        if sqnr < MIN_SQNR_DB:
            raise wrong_result(f"quantized output SQNR {sqnr:.1f} dB is below {MIN_SQNR_DB} dB")
        artifacts = _artifacts(model, x, case, device)
        del model
    if config is None:
        model, x = _build(p, device, dtype)
        artifacts = _artifacts(model, x, case, device)
        del model
    primary = quant.compiled or quant.eager
    extra = {
        "shape_name": p["shape_name"], "model_type": p["model_type"], "recipe": p["recipe"],
        "sparsity": p["sparsity"], "recipe_status": "quantized" if config is not None else "baseline",
        "compile_mode": p["compile_mode"], "torch_compile_mode": p["compile_mode"],
        "baseline_eager_ms": _ms(base.eager), "quantized_eager_ms": _ms(quant.eager),
        "baseline_compile_ms": _ms(base.compiled), "quantized_compile_ms": _ms(quant.compiled),
        "eager_speedup": _ratio(_ms(base.eager), _ms(quant.eager)),
        "compile_speedup": _ratio(_ms(base.compiled), _ms(quant.compiled)),
        "eager_vs_compile_speedup": _ratio(_ms(quant.eager), _ms(quant.compiled)),
        "baseline_compile_time_s": base.compile_s, "quantized_compile_time_s": quant.compile_s,
        "sqnr_db": sqnr, "weight_bytes_baseline": base.weight_bytes, "weight_bytes_quantized": quant.weight_bytes,
        "baseline_peak_memory_mb": base.peak_memory_mb, "quantized_peak_memory_mb": quant.peak_memory_mb,
        "cpu_threads": torch.get_num_threads(), **artifacts,
    }
    return Measurement(timing=primary, device=backend.device_info_for(device), max_rel_error=base_err,
                       check="passed" if base_err is not None else "skipped: reference too large",
                       compile_s=quant.compile_s, implementation="compiled" if quant.compiled else "eager",
                       extra=extra)
