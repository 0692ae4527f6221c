"""Every compute op on both backends at small shapes: numerics pass, a wrong op is caught, outputs agree."""

import csv
import dataclasses

import numpy as np
import pytest
from test_models import params

from accelbench.catalogue import all_specs, get_spec, implementations
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.errors import CaseFailure
from accelbench.ops.common import PlacementExtras

COMPUTE = [name for name, spec in all_specs().items() if spec.suite == "compute"]
# every dimension any compute op takes, small enough for a CPU
SMALL = {
    "m": 64,
    "k": 128,
    "n": 32,
    "num_elements": 4096,
    "batch_size": 1,
    "q_seq_len": 32,
    "kv_seq_len": 32,
    "q_heads": 4,
    "kv_heads": 2,
    "qk_head_dim": 16,
    "v_head_dim": 16,
    "data_size_mib": 1,
    "size": 4096,
    "batch": 2,
    "heads": 2,
    "seq_len": 16,
    "head_dim": 16,
    "model_dim": 64,
    "mslen": 32,
}


def case(op, backend, tmp_path, **given):
    spec = get_spec(op)
    p = params(op, **{**{k: v for k, v in SMALL.items() if k in spec.param_names}, **given})
    return Case(
        op=op,
        backend=backend,
        params=p,
        run=RunSettings(num_runs=3, warmup=1),
        outputs=Outputs(csv_path=str(tmp_path / "o.csv")),
        benchmark=op,
    )


def jax_backend():
    from accelbench.jax_backend.backend import JaxBackend

    return JaxBackend()


def torch_backend():
    from torch_backend.backend import TorchBackend

    return TorchBackend()


OP_LAYOUTS = [
    (op, layout)
    for op in COMPUTE
    for layout in (("kn", "nk") if "layout" in get_spec(op).param_names else (None,))
]


@pytest.mark.parametrize("op, layout", OP_LAYOUTS)
def test_every_op_passes_its_check_on_both_backends_and_they_agree(op, layout, tmp_path):
    given = {"layout": layout} if layout else {}
    results = {}
    for name, backend in (("jax", jax_backend()), ("torch", torch_backend())):
        c = case(op, name, tmp_path, **given)
        m = backend.measure(c)
        assert m.check.text == "passed" and m.check.max_rel_error_ratio is not None
        assert len(m.timing.samples_s) == 3 and min(m.timing.samples_s) > 0
        results[name] = m.outputs_digest
    for out in results["jax"]:
        a, b = results["jax"][out], results["torch"][out]
        scale = np.linalg.norm(b) or 1.0
        assert np.linalg.norm(a - b) / scale < 0.05, out


@pytest.mark.parametrize(
    "dtype", ["bfloat16", "float32", "float16", "float8_e4m3fn", "float8_e5m2"]
)
def test_gemm_multiple_run_dtypes_on_jax(dtype, tmp_path):
    m = jax_backend().measure(case("gemm_multiple_run", "jax", tmp_path, dtype=dtype))
    assert m.check.text == "passed"


def test_fp8_fallback_is_labelled_on_cpu(tmp_path):
    m = torch_backend().measure(case("gemm_simple", "torch", tmp_path))
    assert m.implementation == "fp32_fallback"


def test_a_deliberately_wrong_jax_op_is_caught(tmp_path, monkeypatch):
    import dataclasses

    from accelbench import catalogue, registrations

    unscaled = catalogue.get_implementation(
        "gemm_simple", "jax"
    )  # the GEMM without S_A, S_B: the reference's bug
    wrong = dataclasses.replace(
        unscaled, build=lambda p: lambda a, b, sa, sb: unscaled.build(p)(a, b)
    )
    with registrations.scoped(), pytest.raises(CaseFailure) as info:
        catalogue.add_implementation(dataclasses.replace(wrong, op="gemm"), replace=True)
        jax_backend().measure(case("gemm", "jax", tmp_path))
    assert info.value.status == "wrong_result"


@pytest.mark.parametrize("sharding, used", [("replicated", 4), ("split_m", 4)])
def test_jax_sharding_over_forced_host_devices(sharding, used, tmp_path):
    import jax

    assert jax.local_device_count() == 4
    m = jax_backend().measure(case("gemm_simple", "jax", tmp_path, sharding=sharding))
    assert m.check.text == "passed" and m.extras == PlacementExtras(
        used_device_count=used, sharding=sharding
    )


def test_jax_trace_dir_keeps_an_xprof_run_and_xla_dump(tmp_path, write_yaml, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    write_yaml("""
        benchmarks:
        - benchmark_name: add
          num_runs: 4
          csv_path: out.csv
          trace_dir: traces
          xla_dump_dir: hlo
          benchmark_params: [{m: 128, n: 128}]
        """)
    assert run_cli("run", "--config", "config.yaml", "--no-progress")[0] == 0
    (row,) = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert row["trace_path"].startswith("traces/") and row["sample_count"] == "4"
    assert list((tmp_path / row["trace_path"]).glob("*.xplane.pb"))  # the row names its session
    assert row["dominant_kernel"]  # the CPU trace's thunk names
    dumps = sorted(p.name for p in (tmp_path / "hlo").iterdir())
    assert any(d.endswith(".stablehlo.txt") for d in dumps) and any(
        d.endswith(".optimized_hlo.txt") for d in dumps
    )


@pytest.mark.slow
def test_two_backend_yaml_yields_paired_rows(tmp_path, write_yaml, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    write_yaml("""
        backend: [jax, torch]
        benchmarks:
        - benchmark_name: quantization
          num_runs: 2
          csv_path: out.csv
          benchmark_params: [{m: 64, n: 64}]
        """)
    assert run_cli("run", "--config", "config.yaml", "--no-progress")[0] == 0
    jax_row, *torch_rows = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert [r["backend"] for r in (jax_row, *torch_rows)] == ["jax", "torch", "torch"]
    assert [r["implementation"] for r in torch_rows] == ["eager", "compile"]  # both by default
    for torch_row in torch_rows:
        assert (
            torch_row["paired_with"] == jax_row["case_id"]
            and torch_row["paired_implementation"] == "jit"
        )
        assert float(torch_row["cross_backend_rel_error_ratio"]) < 0.05


MULTI_JAX = [
    (op, name)
    for op in COMPUTE
    for name in implementations(op, "jax")
    if len(implementations(op, "jax")) > 1
]


@pytest.mark.parametrize("op, name", MULTI_JAX)
def test_each_jax_implementation_runs_under_its_own_name(op, name, tmp_path):
    c = dataclasses.replace(case(op, "jax", tmp_path), implementation=name)
    gpu_or_tpu = {"jit:cudnn": "cuDNN attention needs an NVIDIA GPU", "pallas:splash": "TPUs only"}
    if name in gpu_or_tpu:  # an accelerator's kernel: on the CPU it must say so, not run another
        with pytest.raises(CaseFailure, match=gpu_or_tpu[name]):
            jax_backend().measure(c)
        return
    m = jax_backend().measure(c)
    assert m.implementation == name and m.check.text == "passed"


@pytest.mark.slow  # over a second: the full suite runs it
def test_a_compiled_torch_op_reports_its_compilation_apart_from_its_samples(tmp_path):
    c = dataclasses.replace(case("add", "torch", tmp_path), implementation="compile")
    m = torch_backend().measure(c)
    assert m.compile_s is not None and m.compile_s > 0
    assert m.compile_s > 10 * max(m.timing.samples_s)  # the first call compiled; samples did not
