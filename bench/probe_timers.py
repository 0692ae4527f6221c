"""Probe what the profilers report on this GPU (not a test): kineto's device events for one add, a JAX
trace with the cold-cache flush, and whether torch.compile compiled the quantization op.

    python bench/probe_timers.py
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def jax_cold() -> None:
    from microbench.catalogue import get_spec
    from microbench.config.cases import Case, Outputs, RunSettings
    from microbench.jax_backend import xplane
    from microbench.jax_backend.backend import JaxBackend

    spec = get_spec("add")
    case = Case(
        op="add",
        backend="jax",
        params=spec.resolve({"m": 1024, "n": 1024}, "probe"),
        run=RunSettings(num_runs=5, warmup=1, cache="cold"),
        outputs=Outputs(csv_path="x.csv", trace_dir=tempfile.mkdtemp()),
        benchmark="probe",
    )
    try:
        m = JaxBackend().measure(case)
        print("jax cold ok", m.timing.samples_s)
    except Exception as error:
        print("jax cold error:", error)
        for root, _, files in os.walk(case.outputs.trace_dir):
            for f in files:
                if f.endswith(".xplane.pb"):
                    profile = xplane.load(os.path.join(root, f))
                    for plane in profile.planes:
                        names = {
                            e.stats.get("hlo_module") if hasattr(e, "stats") else None
                            for line in plane.lines
                            for e in list(line.events)[:50]
                        }
                        print(
                            "plane",
                            plane.name,
                            [line.name for line in plane.lines][:6],
                            list(names)[:6],
                        )


def torch_events() -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        x + x
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("mb::iteration"):
            x + x
            torch.cuda.synchronize()
    for e in prof.profiler.kineto_results.events():
        if "CUDA" in str(e.device_type()):
            print(
                "device event:",
                e.name()[:60],
                e.start_ns(),
                e.duration_ns(),
                e.device_resource_id(),
                e.activity_type() if hasattr(e, "activity_type") else "",
            )


def torch_compile() -> None:
    import torch
    import torch._dynamo

    from torch_backend.ops.gemm import quantize

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)

    def fn(x):
        q, s = quantize(x, 1, torch.float8_e4m3fn)
        return {"q": q.contiguous(), "scale": s}

    torch._dynamo.reset()
    compiled = torch.compile(fn)
    with torch.inference_mode():
        compiled(x)
    from torch._dynamo.utils import counters

    print("dynamo counters:", {k: dict(v) for k, v in counters.items() if v})
    try:
        explanation = torch._dynamo.explain(fn)(x)
        print(
            "graphs:",
            explanation.graph_count,
            "breaks:",
            explanation.graph_break_count,
            explanation.break_reasons[:3],
        )
    except Exception as error:
        print("explain failed:", error)


if __name__ == "__main__":
    for probe in (jax_cold, torch_events, torch_compile):
        try:
            probe()
        except Exception as error:
            print(probe.__name__, "failed:", type(error).__name__, str(error)[:300])
