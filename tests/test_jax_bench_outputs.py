"""The jax-bench benchmarks' models and metrics by hand, summary.csv and detailed.json, soaks
(min_duration_s), per-flag-set processes, collectives on 8 devices and a SIGKILL mid-sweep."""

import contextlib
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelbench.benchmarks.base import V2, Figures
from accelbench.benchmarks.files import UpstreamFiles, UpstreamStats
from accelbench.catalogue import get_spec
from accelbench.dialects.jax_bench.outputs import JAX_BENCH, roofline
from accelbench.ops import collective_model as collectives
from accelbench.specs import HardwareStats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def resolve(op, **given):
    return get_spec(op).resolve(given, op)


def test_upstream_statistics_drop_samples_outside_1_5_iqr_as_its_test_shows():
    up = UpstreamStats.of([10, 11, 10.5, 9.5, 100, 0.1, 10.2])  # q1 9.75, q3 10.75: 100, 0.1 out
    kept = [10, 11, 10.5, 9.5, 10.2]
    assert up.avg_ms == pytest.approx(sum(kept) / 5)
    assert up.p50_ms == pytest.approx(10.2)
    assert UpstreamStats.of([1, 100, 2]).avg_ms == pytest.approx(103 / 3)  # 3 or fewer: no filter
    assert UpstreamStats.of([]).avg_ms == 0.0


@pytest.mark.parametrize(
    "op, given, flops, nbytes",
    [
        # 2mnk, + 2mn scaling, + mn for alpha != 1, + 2mn for beta not in {0, 1}; bf16 in and out
        (
            "gemm_generalized",
            dict(
                m=64, k=32, n=16, in_dtype="bfloat16", alpha=2.0, beta=0.5, use_scaling_factors=True
            ),
            2 * 64 * 32 * 16 + 2 * 64 * 16 + 64 * 16 + 2 * 64 * 16,
            (64 * 32 + 32 * 16) * 2 + 64 * 16 * 2 + 64 * 16 * 2 + 4 * (64 + 16),
        ),
        # triad: z = x + s*y, 2 FLOPs per element; x, y read, z written (fp32)
        ("hbm_bandwidth", dict(op_type="triad", size=1000, dtype="float32"), 2000, 3 * 4000),
        ("hbm_bandwidth", dict(op_type="copy", size=1000, dtype="bfloat16"), 0, 2 * 2000),
        # 6 FLOPs per rotated pair; X read and Y written once, the (seq_len, head_dim) cos/sin table
        # read once (upstream leaves the table out)
        (
            "rope",
            dict(batch=2, heads=3, seq_len=4, head_dim=8),
            6 * 2 * 3 * 4 * 4,
            2 * 4 * 2 * 3 * 4 * 8 + 4 * 4 * 8,
        ),
        # four matmuls 20 mslen D^2, norm and residuals 7 mslen D; x, y and the 10 D^2 weights
        (
            "transformer_layer_moe",
            dict(model_dim=8, mslen=4, dtype="float32"),
            20 * 4 * 64 + 7 * 4 * 8,
            4 * (2 * 4 * 8 + 10 * 64),
        ),
        ("simple_add", dict(size=100, dtype="bfloat16"), 100, 3 * 200),
        ("sigmoid_bwd", dict(m=4, n=8, dtype="float32"), 6 * 32, 3 * 4 * 32),
    ],
)
def test_models_of_the_new_ops_by_hand(op, given, flops, nbytes):
    spec = get_spec(op)
    p = resolve(op, **given)
    assert spec.flops(p) == pytest.approx(flops)
    assert spec.bytes(p) == pytest.approx(nbytes)


def fields(name, **given):
    """A benchmark's typed fields with upstream's defaults, as the dialect fills them in."""
    defaults = {p.name: p.default_value for p in V2[name].all_fields}
    return V2[name].typed(**{**defaults, **given})


def upstream_model(name, group=1, **given):
    f = fields(name, **given)
    return V2[name].flops(f, group), V2[name].bytes(f, group)


@pytest.mark.parametrize(
    "name, given, group, flops, nbytes",
    [
        # 2mnk + 2mn (scaling) + mn (alpha != 1) + 2mn (beta not 0 or 1); A, B in, out and C at out
        (
            "gemm_generalized",
            dict(
                m=64,
                k=32,
                n=16,
                in_dtype="float8_e4m3fn",
                alpha=2.0,
                beta=0.5,
                use_scaling_factors=True,
            ),
            1,
            2 * 64 * 32 * 16 + 2 * 64 * 16 + 64 * 16 + 2 * 64 * 16,
            (64 * 32 + 32 * 16) * 1 + 64 * 16 * 2 + 64 * 16 * 2,
        ),
        (
            "gemm_generalized",
            dict(m=8, k=4, n=2, beta=1.0),
            1,
            2 * 8 * 4 * 2 + 8 * 2,
            (32 + 8) + 16 * 2 * 2,
        ),
        (
            "quantization",
            dict(m=8, n=16),
            1,
            4 * 128,
            2 * 128 + 128 + 4 * 8,
        ),  # X bf16, Q fp8, scales
        (
            "swiglu",
            dict(batch=4, dim=8),
            1,
            10 * 32,
            4 * 16 * 2 + 32 * 2,
        ),  # X (4, 16) read, Y written
        ("rmsnorm", dict(batch=4, dim=8), 1, 5 * 32, 4 * 32 + 2 * 8),
        (
            "rope",
            dict(batch=2, heads=3, seq_len=4, head_dim=8),
            1,
            6 * 2 * 3 * 4 * 4,
            2 * 8 * 2 * 3 * 4 * 4,
        ),
        ("simple_add", dict(size=100), 1, 100, 6 * 100),
        # causal: (4 S^2 - 2 S^2) Hq D, no batch factor; bytes at 2 B: Q, K, V, O per batch
        (
            "attention_flashed",
            dict(batch=2, seq_len=16, num_q_heads=4, num_kv_heads=2, head_dim=8),
            1,
            2 * 16 * 16 * 4 * 8,
            2 * (2 * 4 * 16 * 8 * 2 + 2 * 2 * 16 * 8 * 2),
        ),
        (
            "attention_flashed",
            dict(
                batch=1,
                seq_len=16,
                num_q_heads=4,
                num_kv_heads=2,
                head_dim=8,
                causal=False,
                mode="bwd",
            ),
            1,
            2 * 4 * 16 * 16 * 4 * 8,
            4 * 4 * 16 * 8 * 2 + 4 * 2 * 16 * 8 * 2,
        ),
        ("transformer_layer_moe", dict(model_dim=8, mslen=4), 1, 24 * 4 * 64, 20 * 4 * 8 + 20 * 64),
        (
            "hbm_bandwidth",
            dict(op_type="copy", size=1000),
            1,
            1000,
            2 * 2000,
        ),  # x + 1: one FLOP each
        ("hbm_bandwidth", dict(op_type="TRIAD", size=1000, dtype="float32"), 1, 2000, 3 * 4000),
        ("host_to_device", dict(data_size_mib=3), 1, 0, 3 * 2**20),
        ("device_to_device", dict(data_size_mib=2, direction="bi"), 1, 0, 2 * 2 * 2**20),
        ("device_to_device", dict(data_size_mib=2, direction="sideways"), 1, 0, 2 * 2**20),
        # S = D * 8 * 128 * b per device; all-reduce 2 S (N-1)/N, all-gather S (N-1),
        # all-to-all S (N-1)/N; reduce-scatter C (N-1), C = D * 256 * b
        ("all_reduce", dict(matrix_dim=4), 4, 0, 2 * 4 * 1024 * 2 * 3 / 4),
        ("all_gather", dict(matrix_dim=4), 4, 0, 4 * 1024 * 2 * 3),
        ("all_to_all", dict(matrix_dim=4), 4, 0, 4 * 1024 * 2 * 3 / 4),
        ("reduce_scatter", dict(matrix_dim=4, dtype="float32"), 4, 0, 4 * 256 * 4 * 3),
    ],
)
def test_upstream_models_by_hand(name, given, group, flops, nbytes):
    assert upstream_model(name, group, **given) == (pytest.approx(flops), pytest.approx(nbytes))


def test_upstream_metrics_by_hand():
    d2d = fields(
        "device_to_device", data_size_mib=2, direction="bi", src_device_index=0, dst_device_index=1
    )
    m = V2["device_to_device"].metrics(Figures(d2d, 0.0, 4 * 2**20, 1e-3))
    assert m["bandwidth_gb_s"] == pytest.approx(4 * 2**20 / 1e-3 / 1e9)
    assert m["total_bytes_mb"] == pytest.approx(4 * 2**20 / 1e6)
    host = V2["host_to_device"].metrics(
        Figures(fields("host_to_device", data_size_mib=512), 0, 0, 0.5)
    )
    assert host == {"bandwidth_gb_s": 1.0, "total_bytes_mib": 512.0}  # GiB/s, as upstream
    ar = fields("all_reduce", matrix_dim=8)
    s = 8 * collectives.TILE * 2
    m = V2["all_reduce"].metrics(Figures(ar, 0.0, 2 * s * 3 / 4, 1e-3, group=4))
    assert m["bandwidth_gb_s"] == pytest.approx(2 * s * 3 / 4 / 1e-3 / 1e9)
    assert m["shard_size_mb"] == pytest.approx(s / 1e6)
    alone = V2["all_reduce"].metrics(Figures(ar, 0.0, 0.0, 1e-3, group=1))
    assert alone["bandwidth_gb_s"] == 0.0  # a group of one moves nothing
    gemm = V2["gemm_generalized"].metrics(Figures(fields("gemm_generalized"), 2e12, 4e9, 1.0))
    assert gemm == {"tflops_per_sec": 2.0, "total_flops": 2e12, "intensity": 500.0}


@pytest.mark.parametrize(
    "mesh, strategy, devices, expected, warned",
    [
        (None, None, 8, ("", "", 8), False),  # one axis of every device
        ("4x2", "4x1", 8, ("4x2", "4x1", 4), False),  # the axes above 1
        ("4x2", None, 8, ("4x2", "", 8), False),  # no strategy: every axis
        ("4x4", "4x1", 8, ("", "", 8), True),  # a mesh the devices cannot fill: one axis of all
        ("4x2", "4x1x1", 8, ("4x2", "", 8), True),  # a strategy of another rank: every axis
        ("4x2", "1x1", 8, ("4x2", "1x1", 1), False),  # all ones: a group of one
        ("a,b", None, 8, ("", "", 8), True),
    ],
)
def test_a_collective_group_is_resolved_as_upstream_resolves_it(
    mesh, strategy, devices, expected, warned
):
    from accelbench.benchmarks.collective import resolve_group

    group = resolve_group(
        fields("all_gather", mesh_shape=mesh, sharding_strategy=strategy), devices
    )
    assert (group.mesh_shape, group.strategy, group.size) == expected
    assert bool(group.warnings) == warned


def test_roofline_fields_use_the_curve_at_upstream_bytes():
    stats = HardwareStats({"bfloat16": 100.0}, ((0.0, 1000.0), (1e6, 2000.0)))
    fig = Figures({"dtype": "bfloat16"}, flops=1e9, bytes=5e5, seconds=1e-3)
    out = roofline(stats, {"tflops_per_sec": 1.0}, fig, "bfloat16")
    assert out["peak_bw_at_size_gb_s"] == pytest.approx(1500.0)  # linear in bytes
    assert out["roofline_tflops_limit"] == pytest.approx(min(100.0, 2000 * 1500 / 1000))
    assert out["roofline_efficiency"] == pytest.approx(100 * 1.0 / 100.0)
    ici = roofline(stats, {"bandwidth_gb_s": 10.0}, Figures({}, 0.0, 5e5, 1e-3), "bfloat16")
    assert ici["roofline_tflops_limit"] == 0.0  # no FLOPs: no compute roofline
    assert ici["bw_efficiency"] == pytest.approx(100 * 10 / 1500)  # upstream compares any traffic


def test_a_preset_of_another_chip_is_said_once_and_a_hardware_block_is_trusted():
    from accelbench.specs import presets

    IRONWOOD = presets()["ironwood"]

    assert IRONWOOD.describes("TPU7x") and not IRONWOOD.describes("NVIDIA H100 80GB HBM3")
    assert HardwareStats(100.0).describes("cpu")  # a config's own numbers: no chip to compare
    sink = UpstreamFiles(JAX_BENCH, "s.csv", "d.json", resume=False, overwrite=False)
    with contextlib.redirect_stderr(io.StringIO()) as out:
        for _ in range(3):
            sink._check_preset(IRONWOOD, "NVIDIA H100 80GB HBM3")
        sink._check_preset(IRONWOOD, "TPU7x")
    assert out.getvalue().count("warning: system 'ironwood'") == 1


UPSTREAM = json.loads(
    (Path(ROOT) / "tests" / "data" / "jax_bench_upstream_columns.json").read_text()
)


def cell_kind(value):
    if value == "":
        return "empty"
    if value in ("True", "False"):
        return "bool"
    if re.fullmatch(r"-?\d+", value):
        return "int"
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", value):
        return "iso"
    if value.startswith("{"):
        return "dict"
    with contextlib.suppress(ValueError):
        float(value)
        return "float"
    return "text"


@pytest.fixture(scope="module")
def every_benchmark_summarised(tmp_path_factory):
    """Each of the 16 benchmarks once (the cases bench/jax_bench_beside.py runs upstream's package
    with), on 4 forced CPU devices, each in its own folder through the `jax-bench` command."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from jax_bench_beside import CASES

    root = tmp_path_factory.mktemp("every")
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}/src:{ROOT}",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
        "JAX_PLATFORMS": "cpu",
    }
    script = "; ".join(
        [
            "import sys",
            "from accelbench.dialects.jax_bench.cli import run",
            *(
                f"assert run({['--run', n, *a, '--num_runs', '3', '--warmup_tries', '1', '--output', str(root / n)]}) == 0"
                for n, a in CASES.items()
            ),
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root


@pytest.mark.slow  # one process running all sixteen benchmarks on 4 devices
@pytest.mark.parametrize("name", sorted(UPSTREAM["benchmarks"]))
def test_summary_csv_starts_with_upstream_columns_and_cell_kinds(name, every_benchmark_summarised):
    with open(every_benchmark_summarised / name / "summary.csv") as f:
        reader = csv.reader(f)
        header, first = next(reader), next(reader)
    expected = UPSTREAM["benchmarks"][name]
    assert header[: len(expected)] == [c for c, _ in expected]
    kinds = [cell_kind(v) for v in first[: len(expected)]]
    assert kinds == [k for _, k in expected]
    ours = header[len(expected) :]  # this project's columns, after upstream's
    assert {"conditions", "timing_source", "device_p50_ms", "check", "case_id"} <= set(ours)
    assert (every_benchmark_summarised / name / "detailed.json").exists()


def test_summary_and_detailed_follow_the_run_store_and_never_replace_a_file(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "global: {system: ironwood, num_runs: 4, warmup_tries: 1}\n"
        "benchmarks:\n- name: hbm_bandwidth\n  sweep: {size: [1024, 4096], op_type: [copy, TRIAD]}\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    with open(tmp_path / "results" / "c.summary.csv") as f:
        rows = list(csv.DictReader(f))
    columns = [c for c, _ in UPSTREAM["benchmarks"]["hbm_bandwidth"]]
    roofline_columns = ["roofline_tflops_limit", "peak_bw_at_size_gb_s", "bw_efficiency"]
    at = columns.index("total_duration_s")  # a preset adds upstream's roofline columns before it
    assert list(rows[0])[: len(columns) + 3] == [*columns[:at], *roofline_columns, *columns[at:]]
    assert [r["op_type"] for r in rows] == ["copy", "triad", "copy", "triad"]
    assert (
        rows[0]["benchmark"] == "HBMBandwidthBenchmark" and rows[0]["KET_ms"] == rows[0]["avg_ms"]
    )
    assert rows[0]["test_name"].startswith("HBMBandwidthBenchmark_")
    assert rows[0]["hardware_stats"].startswith("{'tflops': {'bfloat16': 2307.0")  # echoed
    assert rows[0]["conditions"] == "upstream" and rows[0]["cache"] == "warm"
    detailed = json.loads((tmp_path / "results" / "c.detailed.json").read_text())
    assert len(detailed) == 4 and len(detailed[0]["raw_times_ms"]) == 4
    first = detailed[0]
    assert first["microbench"]["run_id"] == "copy_dim_1024_dev_0"
    assert set(first["metadata"]) == {
        "benchmark_name",
        "test_name",
        "start_time",
        "end_time",
        "params",
        "device_info",
    }
    assert first["metrics"]["bandwidth_gb_s"] == pytest.approx(
        2 * 1024 * 2 / (first["metrics"]["avg_ms"] / 1e3) / 1e9
    )
    assert first["metrics"]["bw_efficiency"] > 0
    # a second run is run 2 of the store: its own pair, the first run's kept
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    assert (tmp_path / "results" / "c.2.summary.csv").exists()
    assert (tmp_path / "results" / "c.2.detailed.json").exists()
    assert len(json.loads((tmp_path / "results" / "c.detailed.json").read_text())) == 4
    # --overwrite replaces the latest run, its pair with it; run 1's pair is untouched
    before = (tmp_path / "results" / "c.summary.csv").read_text()
    assert run_cli("run", "--config", "c.yaml", "--no-progress", "--overwrite")[0] == 0
    assert (tmp_path / "results" / "c.summary.csv").read_text() == before
    assert not (tmp_path / "results" / "c.3.summary.csv").exists()


def test_upstream_conditions_keep_a_repeated_case_and_strict_ones_run_it_once(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    body = "benchmarks:\n- {name: simple_add, size: 256}\n- {name: simple_add, size: 256}\n"
    (tmp_path / "u.yaml").write_text("global: {num_runs: 2, warmup_tries: 0}\n" + body)
    (tmp_path / "s.yaml").write_text(
        "global: {num_runs: 2, warmup_tries: 0, conditions: strict}\n" + body
    )
    assert run_cli("run", "--config", "u.yaml", "--no-progress")[0] == 0
    assert run_cli("run", "--config", "s.yaml", "--no-progress")[0] == 0
    upstream = json.loads((tmp_path / "results" / "u.detailed.json").read_text())
    strict = json.loads((tmp_path / "results" / "s.detailed.json").read_text())
    assert len(upstream) == 2 and len(strict) == 1
    assert {e["microbench"]["conditions"] for e in upstream} == {"upstream"}
    assert strict[0]["microbench"]["conditions"] == "strict"
    assert strict[0]["microbench"]["cache"] == "cold"
    # the command line switches a whole file
    assert run_cli("run", "--config", "u.yaml", "--no-progress", "--conditions", "strict")[0] == 0
    assert len(json.loads((tmp_path / "results" / "u.2.detailed.json").read_text())) == 1


def test_min_duration_s_keeps_timing_until_the_duration_has_passed(write_yaml, tmp_path, run_cli):
    path = write_yaml(
        "global: {num_runs: 2, warmup_tries: 0, min_duration_s: 0.4}\n"
        "benchmarks:\n- {name: simple_add, size: 1024}\n"
    )
    out = tmp_path / "o.csv"
    code, _, err = run_cli("run", "--config", str(path), "-o", str(out), "--no-progress")
    assert code == 0, err
    with open(out) as f:
        row = next(csv.DictReader(f))
    # at least num_runs samples (how many more depends on this machine's load: test_timers counts them)
    assert int(row["sample_count"]) >= 2 and float(row["min_duration_s"]) == 0.4
    (entry,) = json.loads((tmp_path / "o.detailed.json").read_text())
    assert entry["metrics"]["total_duration_s"] >= 0.4  # the timed loop: at least 0.4 s
    assert entry["metrics"]["actual_runs"] == int(row["sample_count"])


@pytest.mark.slow  # three worker processes, each importing JAX
def test_each_flag_set_runs_in_its_own_process_with_its_environment(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "global: {num_runs: 2, warmup_tries: 0}\n"
        "benchmarks:\n- {name: gemm_generalized, m: 16, k: 16, n: 16, in_dtype: bfloat16}\n"
        "- {name: hbm_bandwidth, size: 1024}\n- {name: rope, batch: 1, heads: 1, seq_len: 8}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}/src:{ROOT}",
        "MICROBENCH_FLAG_GROUPS": "1",
        "LIBTPU_INIT_ARGS": "--users_own=1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "-o", "o.csv", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "o.csv") as f:
        flags = {r["op"]: r["env_flags"] for r in csv.DictReader(f)}
    assert "--xla_tpu_accumulate_into_mrb=true" in flags["gemm_generalized"]
    assert "--xla_jf_bounds_check=false" in flags["hbm_bandwidth"]
    # the user's own flags are kept, last (so they win); no flag set: the user's alone
    assert (
        flags["hbm_bandwidth"]
        .split("LIBTPU_INIT_ARGS=")[1]
        .endswith("--xla_jf_profile_cheap_ops=true --users_own=1")
    )
    assert "LIBTPU_INIT_ARGS=--users_own=1" in flags["rope"]


@pytest.mark.slow
def test_collectives_and_device_to_device_on_8_host_devices(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "global: {num_runs: 2, warmup_tries: 1}\n"
        "benchmarks:\n"
        "- name: all_reduce\n  mesh_shape: 4x2\n  sharding_strategy: 4x1\n  matrix_dim: 8\n"
        "  sweep: {reduce_op: [sum, mean, max, min]}\n"
        "- {name: all_gather, matrix_dim: 8}\n- {name: all_to_all, matrix_dim: 8}\n"
        "- {name: reduce_scatter, matrix_dim: 8}\n"
        "- {name: all_gather, mesh_shape: 4x4, matrix_dim: 8, reduce_op: max}\n"
        "- {name: device_to_device, data_size_mib: 1, direction: bi, src_device_index: 1, "
        "dst_device_index: 6}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}/src:{ROOT}",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    }
    done = subprocess.run(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "-o", "o.csv", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "o.csv") as f:
        rows = list(csv.DictReader(f))
    status = [(r["op"], r["status"], r["error"]) for r in rows]
    assert [s for s in status if s[1] != "ok"] == []  # a 4x4 mesh on 8 devices: one axis of 8
    assert "mesh_shape 4x4 does not fill the 8 devices" in done.stderr
    assert all(r["check"] == "passed" for r in rows if r["status"] == "ok")
    ar = [r for r in rows if r["op"] == "all_reduce"]
    assert {r["reduce_op"] for r in ar} == {"sum", "mean", "max", "min"}
    assert all(r["group_device_count"] == "4" for r in ar)
    detailed = json.loads((tmp_path / "o.detailed.json").read_text())
    ring = [d for d in detailed if d["metadata"]["benchmark_name"] == "AllGatherBenchmark"]
    assert ring[0]["metrics"]["bandwidth_gb_s"] > 0 and ring[0]["metrics"]["shard_size_mb"] > 0


@pytest.mark.slow
def test_sigkill_during_a_v2_sweep_then_resume_keeps_every_case_once(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "global: {num_runs: 2, warmup_tries: 0, min_duration_s: 0.3}\n"
        "benchmarks:\n- name: simple_add\n  sweep: {size: {start: 128, end: 1024, increase_by: 128}}\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}/src:{ROOT}"}
    command = [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "--no-progress"]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
    detailed = tmp_path / "results" / "c.detailed.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if detailed.exists() and len(json.loads(detailed.read_text())) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = json.loads(detailed.read_text())  # whole, never half-written
    assert 2 <= len(kept) < 8
    done = subprocess.run(
        command + ["--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    entries = json.loads(detailed.read_text())
    sizes = [e["metadata"]["params"]["size"] for e in entries]
    assert sorted(sizes) == list(range(128, 1025, 128))
    with open(tmp_path / "results" / "c.summary.csv") as f:
        assert len(list(csv.DictReader(f))) == 8
    assert not (tmp_path / "results" / "c.2.summary.csv").exists()
