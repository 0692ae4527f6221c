"""Fusion and elementwise suites on CPU: every pattern/op runs and matches, models, kernel counts, entry points."""

import csv
import json

import pytest
import torch
from test_models import params

from accelbench.catalogue import get_spec
from accelbench.ops.fusion import unfused_bytes

FUSION_YAML = """
backend: torch
num_runs: 3
warmup: 1
benchmarks:
- benchmark_name: fusion_linear
  csv_path: out.csv
  benchmark_sweep_params:
  - {pattern: [linear_bias, linear_bias_relu, linear_bias_gelu], m: 32, k: 64, n: 48, device: cpu, dtype: [float32, bfloat16]}
- benchmark_name: fusion_conv
  csv_path: out.csv
  benchmark_sweep_params:
  - {pattern: [conv_relu, conv_bn, conv_bn_relu], batch: 2, in_channels: 8, out_channels: 16, size: 8, device: cpu}
- benchmark_name: fusion_attention
  csv_path: out.csv
  benchmark_sweep_params:
  - {pattern: [qk, qk_softmax, attention], batch: 2, heads: 2, seq: 32, head_dim: 16, device: cpu, dtype: [float32, bfloat16]}
- benchmark_name: elementwise
  csv_path: ew.csv
  benchmark_sweep_params:
  - {operation: [layernorm, gelu, gelu_tanh, silu, mse_loss, cross_entropy], implementation: [eager, triton, cuda],
     batch: 2, seq: 8, hidden: 96, device: cpu, dtype: [float32, bfloat16]}
  - {operation: gelu, implementation: compile, batch: 2, seq: 8, hidden: 96, device: cpu}
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from accelbench.cli import main

    root = tmp_path_factory.mktemp("fe")
    cfg = root / "c.yaml"
    cfg.write_text(
        FUSION_YAML.replace("out.csv", str(root / "out.csv")).replace(
            "ew.csv", str(root / "ew.csv")
        )
    )
    assert (
        main(["run", "--config", str(cfg), "--no-progress", "--seed-json", str(root / "seed.json")])
        == 0
    )
    fusion = list(csv.DictReader(open(root / "out.csv")))
    elementwise = list(csv.DictReader(open(root / "ew.csv")))
    return fusion, elementwise, json.loads((root / "seed.json").read_text())


@pytest.mark.slow  # the module's fixture runs every pattern and operation
def test_every_fusion_pattern_runs_matches_and_counts_kernels(results):
    fusion, _, _ = results
    assert len(fusion) == 3 * 2 + 3 + 3 * 2
    for row in fusion:
        assert row["status"] == "ok", row["error"]
        assert float(row["max_rel_error_ratio"]) <= 2e-2
        assert (
            float(row["unfused_kernels_per_iter"]) >= 1
            and float(row["fused_kernels_per_iter"]) >= 1
        )
        assert row["fusion_verdict"].startswith(("fused:", "not fused:"))
        assert float(row["speedup_ratio"]) == pytest.approx(
            float(row["unfused_latency_s"]) / float(row["fused_latency_s"]), rel=1e-3
        )
    linear = [r for r in fusion if r["op"] == "fusion_linear"]
    assert all(
        float(r["fused_kernels_per_iter"]) < float(r["unfused_kernels_per_iter"]) for r in linear
    )
    sdpa = [r for r in fusion if r["pattern"] == "attention"]
    assert {r["fused_impl"] for r in sdpa} == {"sdpa:flash_attention"}


@pytest.mark.slow  # the module's fixture runs every pattern and operation
def test_every_elementwise_operation_runs_or_says_why(results):
    _, rows, _ = results
    by = {(r["operation"], r["implementation"], r["dtype"]): r for r in rows}
    for op in ("layernorm", "gelu", "gelu_tanh", "silu", "mse_loss", "cross_entropy"):
        for dtype in ("float32", "bfloat16"):
            eager = by[(op, "eager", dtype)]
            assert eager["status"] == "ok" and float(eager["max_rel_error_ratio"]) <= 2e-2
            assert float(eager["gb_per_s"]) > 0 and float(eager["calls_per_s"]) > 0
            assert by[(op, "triton", dtype)]["status"] == "unsupported"
            assert by[(op, "cuda", dtype)]["status"] == "unsupported"
    assert by[("gelu", "compile", "bfloat16")]["status"] == "ok"
    assert by[("gelu", "triton", "float32")]["error"] == "the Triton kernels need a CUDA GPU"
    assert (
        by[("mse_loss", "triton", "float32")]["error"]
        == "this project has no triton kernel for mse_loss"
    )


@pytest.mark.slow  # the module's fixture runs every pattern and operation
def test_seed_json_format(results):
    rows, ew_rows, seed = results
    fusion = [r for r in seed if "fusion_pattern" in r]
    ew = [r for r in seed if "operation" in r]
    assert set(fusion[0]) >= {
        "fusion_pattern",
        "input_shape",
        "unfused_latency_ms",
        "unfused_gflops",
        "unfused_bytes",
        "fused_latency_ms",
        "fused_gflops",
        "fused_bytes",
        "speedup_factor",
        "memory_reduction",
        "extra_params",
        "flops",
    }
    assert isinstance(fusion[0]["input_shape"], list) and isinstance(fusion[0]["fused_bytes"], int)
    assert set(ew[0]) >= {
        "operation",
        "implementation",
        "batch_size",
        "sequence_length",
        "tensor_dimension",
        "time_ms",
        "memory_mb",
        "inference_speed",
        "gpu_efficiency",
        "throughput_gbps",
    }
    # the seed's milliseconds and fractions are the rows' seconds and percents, converted (the CSV
    # holds six significant digits, the seed JSON the full value)
    first, ew_first = rows[0], next(r for r in ew_rows if r["status"] == "ok")

    def same(seed_value, csv_value):
        return seed_value == pytest.approx(csv_value, rel=1e-5)

    assert same(fusion[0]["unfused_latency_ms"], float(first["unfused_latency_s"]) * 1e3)
    assert same(fusion[0]["memory_reduction"], float(first["memory_reduction_pct"]) / 100)
    assert fusion[0]["flops"] == int(first["model_flop"])
    assert same(ew[0]["time_ms"], float(ew_first["time_median_s"]) * 1e3)
    assert same(ew[0]["throughput_gbps"], float(ew_first["gb_per_s"]))
    assert {r["operation"] for r in ew} >= {
        "LayerNorm",
        "GELU",
        "Swish",
        "MSELoss",
        "CrossEntropyLoss",
    }


@pytest.mark.parametrize(
    "op, given, flops, unfused, fused",
    [
        # X 512x1024, W 1024x1024, b, Y 512x1024 in fp32; unfused adds a re-read and re-write of Y
        (
            "fusion_linear",
            dict(pattern="linear_bias", m=512, k=1024, n=1024),
            1073741824 + 524288,
            (2098176 + 1048576) * 4,
            2098176 * 4,
        ),
        (
            "fusion_linear",
            dict(pattern="linear_bias_relu", m=512, k=1024, n=1024),
            1073741824 + 2 * 524288,
            (2098176 + 2 * 1048576) * 4,
            2098176 * 4,
        ),
        # x 4x128x28x28, w 128x128x3x3, out 4x128x28x28; BN: read y + 4 vectors, write y; folded: + bias
        (
            "fusion_conv",
            dict(pattern="conv_bn", batch=4, in_channels=128, out_channels=128, size=28),
            924844032 + 802816,
            3801088 + 3213312,
            3801600,
        ),
        # flash: Q,K,V in, O out; unfused writes S and re-reads it through scale, softmax and P@V
        (
            "fusion_attention",
            dict(pattern="attention", batch=4, heads=8, seq=256, head_dim=64, dtype="bfloat16"),
            536870912 + 10485760,
            4194304 + 7 * 4194304,
            4194304,
        ),
    ],
)
def test_fusion_models_match_hand_computed_values(op, given, flops, unfused, fused):
    spec = get_spec(op)
    p = params(op, **given)
    assert spec.flops(p) == flops
    assert unfused_bytes(op, p) == unfused
    assert spec.bytes(p) == fused


def test_seed_memory_reduction_figures():
    spec = get_spec("fusion_linear")
    for pattern, reduction in (("linear_bias", 0.333), ("linear_bias_relu", 0.5)):
        p = params("fusion_linear", pattern=pattern, m=512, k=1024, n=1024)
        assert 1 - spec.bytes(p) / unfused_bytes("fusion_linear", p) == pytest.approx(
            reduction, abs=1e-3
        )


@pytest.mark.parametrize(
    "given, flops, nbytes",
    [
        (
            dict(operation="layernorm", batch=32, seq=512, hidden=768),
            8 * 12582912,
            2 * 12582912 * 2 + 2 * 768 * 2,
        ),
        (
            dict(operation="silu", batch=32, seq=512, hidden=768, dtype="float32"),
            4 * 12582912,
            2 * 12582912 * 4,
        ),
        (
            dict(operation="cross_entropy", batch=2, seq=16, hidden=64, dtype="float32"),
            4 * 2048,
            2048 * 4 + 32 * 8 + 4,
        ),
        (dict(operation="mse_loss", batch=2, seq=16, hidden=64), 3 * 2048, 2 * 2048 * 2 + 2),
    ],
)
def test_elementwise_models_match_hand_computed_values(given, flops, nbytes):
    spec = get_spec("elementwise")
    p = params("elementwise", **given)
    assert (spec.flops(p), spec.bytes(p)) == (flops, nbytes)


def test_cpu_kernel_count_counts_top_level_operator_calls():
    from torch_backend.profiling import count_kernels

    x = torch.randn(16)
    assert count_kernels(lambda: (x + 1) * 2, torch.device("cpu")) == 2
    assert count_kernels(lambda: torch.relu(x), torch.device("cpu")) == 1


@pytest.mark.slow
def test_fusion_entry_points_return_the_seed_keys():
    from torch_backend.fusion import (
        calibrate_attention_fusion_patterns,
        calibrate_conv_fusion_patterns,
        calibrate_linear_fusion_patterns,
    )

    for fn, count in (
        (calibrate_linear_fusion_patterns, 3),
        (calibrate_conv_fusion_patterns, 3),
        (calibrate_attention_fusion_patterns, 3),
    ):
        results = fn(quick=True, device="cpu", num_trials=2, num_warmup=1)
        assert len(results) == count
        for r in results:
            assert r["status"] == "ok"
            assert {"fusion_pattern", "speedup_factor", "memory_reduction", "input_shape"} <= set(r)
            assert 0 <= r["memory_reduction"] < 1


def test_elementwise_entry_point_writes_the_guides_json(tmp_path):
    from torch_backend.elementwise import run_comprehensive_benchmark

    out = tmp_path / "r.json"
    results = run_comprehensive_benchmark(
        batch_sizes=[2],
        sequence_lengths=[8],
        tensor_dimensions=[32],
        operations=["LayerNorm", "Swish"],
        implementations=["eager", "triton"],
        output_file=str(out),
        device="cpu",
        num_trials=3,
    )
    assert json.loads(out.read_text()) == results
    assert [(r["operation"], r["implementation"], r["status"]) for r in results] == [
        ("LayerNorm", "PyTorch", "ok"),
        ("LayerNorm", "Triton", "unsupported"),
        ("Swish", "PyTorch", "ok"),
        ("Swish", "Triton", "unsupported"),
    ]


BUILD_LOG = (
    "Error building extension 'microbench_elementwise': [1/3] /usr/local/cuda/bin/nvcc ... -c cuda.cu\n"
    "FAILED: cuda.cuda.o\n"
    "torch/include/ATen/cuda/CUDAContextLight.h:10:10: fatal error: {line}\n"
)


@pytest.mark.parametrize(
    ("line", "status", "named"),
    [
        ("cusparse.h: No such file or directory", "unsupported", "needs cusparse.h"),
        ("expected a ';'", "error", "Error building extension"),  # our own code's fault: an error
    ],
)
def test_a_cuda_build_that_fails_is_tried_once_and_names_what_is_missing(
    tmp_path, monkeypatch, line, status, named
):
    """A toolkit without a header the kernels include gives `unsupported` rows naming it (the CUDA 13
    image's); any other build failure stays an error. The failed build is not retried per case."""
    from accelbench.cli import main
    from torch_backend.kernels import cuda_kernels

    tries = []

    def load():
        tries.append(1)
        raise RuntimeError(BUILD_LOG.format(line=line))

    monkeypatch.setattr(cuda_kernels, "available", lambda: None)
    monkeypatch.setattr(cuda_kernels, "_load", load)
    cuda_kernels._build.cache_clear()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "backend: torch\nnum_runs: 2\nbenchmarks:\n- benchmark_name: elementwise\n"
        f"  csv_path: {tmp_path / 'ew.csv'}\n  benchmark_sweep_params:\n"
        "  - {operation: [gelu, silu], implementation: cuda, batch: 2, seq: 4, hidden: 8, device: cpu}\n"
    )
    try:
        main(["run", "--config", str(cfg), "--no-progress", "-q"])
    finally:
        cuda_kernels._build.cache_clear()
    rows = list(csv.DictReader(open(tmp_path / "ew.csv")))
    assert [r["status"] for r in rows] == [status, status] and len(tries) == 1
    assert all(named in r["error"] for r in rows)
