"""The jax-bench benchmarks' models and metrics by hand, summary.csv and detailed.json, soaks
(min_duration_s), per-flag-set processes, collectives on 8 devices and a SIGKILL mid-sweep."""

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from microbench.catalogue import get_spec
from microbench.ops import collectives
from microbench.ops.jax_bench import V2, Figures, collective_metrics
from microbench.platform.system_presets import HardwareStats
from microbench.results.sinks.jax_bench import JaxBenchFiles, UpstreamStats, _roofline

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


def test_device_to_device_moves_its_mib_once_per_direction():
    uni = resolve("device_to_device", data_size_mib=2, source_id=0, target_id=1)
    bi = resolve("device_to_device", data_size_mib=2, source_id=0, target_id=1, direction="bi")
    assert get_spec("device_to_device").bytes(uni) == 2 * 2**20
    assert get_spec("device_to_device").bytes(bi) == 4 * 2**20
    fig = Figures(
        {"data_size_mib": 2, "direction": "bi", "src_device_index": 0, "dst_device_index": 1},
        0.0,
        4 * 2**20,
        1e-3,
    )
    metrics = V2["device_to_device"].metrics(fig)
    assert metrics["bandwidth_gb_s"] == pytest.approx(4 * 2**20 / 1e-3 / 1e9)
    assert metrics["total_bytes_mb"] == pytest.approx(4 * 2**20 / 1e6)


def test_collective_bandwidth_is_upstream_traffic_which_is_nccl_bus_bandwidth():
    # all-reduce of an S-byte block over N = 4: upstream moves 2 S (N-1) / N
    p = resolve("all_reduce", matrix_dim=8, ici_size=4, dtype="bfloat16")
    s = 8 * collectives.TILE * 2
    extras = SimpleNamespace(
        group_device_count=4,
        message_bytes=collectives.message_bytes("all_reduce", p),
        bus_factor_ratio=collectives.COLLECTIVES["all_reduce"].bus_factor(4),
    )
    f = {"matrix_dim": 8, "dtype": "bfloat16"}
    metrics = collective_metrics("shard_size_mb", lambda f: s)(Figures(f, 0.0, 0.0, 1e-3, extras))
    assert metrics["bandwidth_gb_s"] == pytest.approx(2 * s * 3 / 4 / 1e-3 / 1e9)
    assert metrics["shard_size_mb"] == pytest.approx(s / 1e6)
    # reduce-scatter: C (N-1), C = D * 256 * b (each member's output)
    rs = resolve("psum_scatter", num_elements=8 * 256, ici_size=4, dtype="bfloat16")
    c = 8 * 256 * 2
    bus = collectives.message_bytes("psum_scatter", rs) * collectives.COLLECTIVES[
        "psum_scatter"
    ].bus_factor(4)
    assert bus == pytest.approx(c * 3)


def test_roofline_fields_use_the_curve_at_the_case_bytes():
    stats = HardwareStats({"bfloat16": 100.0}, ((0.0, 1000.0), (1e6, 2000.0)))
    fig = Figures({"dtype": "bfloat16"}, flops=1e9, bytes=5e5, seconds=1e-3)
    out = _roofline(stats, {"tflops_per_sec": 1.0}, fig, "bfloat16", hbm=True)
    assert out["peak_bw_at_size_gb_s"] == pytest.approx(1500.0)  # linear in bytes
    assert out["roofline_tflops_limit"] == pytest.approx(min(100.0, 2000 * 1500 / 1000))
    assert out["roofline_efficiency"] == pytest.approx(100 * 1.0 / 100.0)
    ici = _roofline(stats, {"bandwidth_gb_s": 10.0}, fig, "bfloat16", hbm=False)
    assert "bw_efficiency" not in ici  # interconnect traffic is not compared with the HBM curve


def test_a_preset_of_another_chip_is_said_once_and_a_hardware_block_is_trusted():
    from microbench.platform.system_presets import IRONWOOD

    assert IRONWOOD.describes("TPU7x") and not IRONWOOD.describes("NVIDIA H100 80GB HBM3")
    assert HardwareStats(100.0).describes("cpu")  # a config's own numbers: no chip to compare
    sink = JaxBenchFiles(".", resume=False, overwrite=False)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for _ in range(3):
            sink._check_preset(IRONWOOD, "NVIDIA H100 80GB HBM3")
        sink._check_preset(IRONWOOD, "TPU7x")
    assert out.getvalue().count("warning: system 'ironwood'") == 1


UPSTREAM_HEAD = [
    "warmup_tries",
    "num_runs",
    "min_duration_s",
    "xprof_timing",
    "xprof_dir",
    "system",
    "use_trace_roofline",
    "hardware_stats",
    "dtype",
    "op_type",
    "size",
    "device_id",
    "p50_ms",
    "p90_ms",
    "avg_ms",
    "std_ms",
    "throughput",
    "bandwidth_gb_s",
    "total_bytes_mb",
    "intensity",
    "roofline_tflops_limit",
    "peak_bw_at_size_gb_s",
    "bw_efficiency",
    "total_duration_s",
    "actual_runs",
    "platform",
    "device_count",
    "local_device_count",
    "jax_version",
    "chip_version",
    "benchmark",
    "test_name",
    "KET_ms",
    "start",
    "timing_source",
    "backend",
    "case_id",
]


def test_summary_csv_has_upstream_columns_in_upstream_order_and_never_replaces_a_file(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "global: {system: ironwood, num_runs: 4, warmup_tries: 1}\n"
        "benchmarks:\n- name: hbm_bandwidth\n  sweep: {size: [1024, 4096], op_type: [copy, TRIAD]}\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    with open(tmp_path / "results" / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == UPSTREAM_HEAD
    assert [r["op_type"] for r in rows] == ["copy", "triad", "copy", "triad"]
    assert (
        rows[0]["benchmark"] == "HBMBandwidthBenchmark" and rows[0]["KET_ms"] == rows[0]["avg_ms"]
    )
    assert rows[0]["test_name"].startswith("HBMBandwidthBenchmark_")
    detailed = json.loads((tmp_path / "results" / "detailed.json").read_text())
    assert len(detailed) == 4 and len(detailed[0]["raw_times_ms"]) == 4
    first = detailed[0]
    assert first["metadata"]["run_id"] == "copy_dim_1024_dev_0"
    assert first["metrics"]["bandwidth_gb_s"] == pytest.approx(
        2 * 1024 * 2 / (first["metrics"]["avg_ms"] / 1e3) / 1e9
    )
    # a second run numbers its files; the first run's are kept
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    assert (tmp_path / "results" / "summary.2.csv").exists()
    assert (tmp_path / "results" / "detailed.2.json").exists()
    assert len(json.loads((tmp_path / "results" / "detailed.json").read_text())) == 4


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
    (entry,) = json.loads((tmp_path / "detailed.json").read_text())
    assert entry["metrics"]["total_duration_s"] >= 0.4  # warm-up (>= 0.08 s) and 0.4 s of timing
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
        [sys.executable, "-m", "microbench.cli", "run", "--config", "c.yaml", "-o", "o.csv", "-q"],
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
    assert flags["hbm_bandwidth"].split("LIBTPU_INIT_ARGS=")[1].endswith("=7 --users_own=1")
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
        "- {name: all_gather, mesh_shape: 4x4, matrix_dim: 8}\n"
        "- {name: device_to_device, data_size_mib: 1, direction: bi, src_device_index: 1, "
        "dst_device_index: 6}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}/src:{ROOT}",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    }
    done = subprocess.run(
        [sys.executable, "-m", "microbench.cli", "run", "--config", "c.yaml", "-o", "o.csv", "-q"],
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
    assert [s for s in status if s[1] != "ok"] == [
        ("all_gather", "unsupported", "needs 16 devices, 8 are visible")
    ]
    assert all(r["check"] == "passed" for r in rows if r["status"] == "ok")
    ar = [r for r in rows if r["op"] == "all_reduce"]
    assert {r["reduce_op"] for r in ar} == {"sum", "mean", "max", "min"}
    assert all(r["group_device_count"] == "4" for r in ar)
    detailed = json.loads((tmp_path / "detailed.json").read_text())
    ring = [d for d in detailed if d["metadata"]["benchmark_name"] == "AllGatherBenchmark"]
    assert ring[0]["metrics"]["bandwidth_gb_s"] > 0 and ring[0]["metrics"]["shard_size_mb"] > 0


@pytest.mark.slow
def test_sigkill_during_a_v2_sweep_then_resume_keeps_every_case_once(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "global: {num_runs: 2, warmup_tries: 0, min_duration_s: 0.3}\n"
        "benchmarks:\n- name: simple_add\n  sweep: {size: {start: 128, end: 1024, increase_by: 128}}\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}/src:{ROOT}"}
    command = [sys.executable, "-m", "microbench.cli", "run", "--config", "c.yaml", "--no-progress"]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
    detailed = tmp_path / "results" / "detailed.json"
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
    with open(tmp_path / "results" / "summary.csv") as f:
        assert len(list(csv.DictReader(f))) == 8
    assert not (tmp_path / "results" / "summary.2.csv").exists()
