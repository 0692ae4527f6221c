"""Collectives: mesh groups, bandwidth formulas by hand, the numpy references, and real runs on 8 forced
host devices, two jax.distributed processes and two torch.distributed (gloo) ranks."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from accelbench.catalogue import get_spec
from accelbench.core.types import Timing, slowest_per_iteration
from accelbench.errors import CaseFailure
from accelbench.ops import collective_model as cm
from accelbench.ops import collectives as c


def params(op, **given):
    return get_spec(op).resolve(given, "test")


def test_groups_follow_the_mesh_axes_the_strategy_selects():
    p = params("psum", matrix_dim=8, ici_size=8, mesh_shape="2x4", sharding_strategy="1x4")
    assert cm.groups("psum", p) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    p = params("psum", matrix_dim=8, ici_size=8, mesh_shape="2x4", sharding_strategy="2x1")
    assert cm.groups("psum", p) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    # only > 1 matters, as in the reference: "1x1x4" on 4x4x8 is the whole last axis (8)
    p = params("psum", matrix_dim=8, ici_size=128, mesh_shape="4x4x8", sharding_strategy="1x1x4")
    assert cm.group_size("psum", p) == 8 and len(cm.groups("psum", p)) == 16
    assert cm.groups(
        "send_recv", params("send_recv", num_elements=1024, source_id=0, target_id=3)
    ) == [[0, 3]]


def test_bandwidth_follows_nccl_tests_and_the_reference_by_hand():
    p = params("psum", matrix_dim=4, ici_size=4, dtype="float32")  # 4 rows x 1024 x 4 B = 16 KiB
    timing = Timing(samples_s=[1e-3, 1e-3, 1e-3], source="test")
    x = c.extras_for("psum", p, timing, chips=[0, 1, 2, 3], processes=1)
    assert x.message_bytes == 16384
    assert x.algbw_gb_per_s == pytest.approx(16384 / 1e-3 / 1e9)
    assert x.bus_factor_ratio == pytest.approx(2 * 3 / 4)
    assert x.busbw_gb_per_s == pytest.approx(16384 / 1e-3 / 1e9 * 1.5)
    # reference: E*P*b*tf*2/r with P = r-1 = 3, tf = 1 (one device per chip)
    assert x.transferred_bytes == pytest.approx(4096 * 3 * 4 * 2 / 4)
    assert x.achieved_bw_gb_per_s == pytest.approx(4096 * 3 * 4 * 2 / 4 / 1e-3 / 1e9)
    gather = c.extras_for("all_gather", p, timing, [0, 1, 2, 3], 1)
    assert gather.message_bytes == 4 * 16384 and gather.bus_factor_ratio == pytest.approx(0.75)
    scatter = params("psum_scatter", matrix_dim=4, ici_size=4)
    assert cm.message_bytes("psum_scatter", scatter) == 4 * 16384  # input: r blocks
    assert cm.COLLECTIVES["ppermute"].bus_factor(4) == 1.0
    small = params("all_to_all", num_elements=256, ici_size=2)  # 1 KiB of fp32: 2 rows of 128
    assert cm.block_rows(small) == 2 and cm.message_bytes("all_to_all", small) == 1024


def test_two_cores_per_chip_follow_the_reference_traffic_model():
    chips = ["a", "a", "b", "b", "c", "c", "d", "d"]  # v7x: devices 2i and 2i+1 share a chip
    assert c.parallel_groups([0, 2, 4, 6], chips) == ("parallel", 3, 2)
    assert c.parallel_groups([0, 1, 2, 3], chips) == ("non-parallel", 2, 1)
    assert c.parallel_groups([0, 1], [0, 1]) == ("one_device_per_chip", 1, 1)


def test_all_to_all_peak_by_hand():
    # 2x2x1 (3-D, no wraparound): links = 2 * 1 (two spatial dims: the smaller) -> 4*100*2*P/r^2
    assert c.a2a_peak_gbps("2x2x1", 3, 4) == pytest.approx(4 * 100 * 2 * 3 / 16)
    # 4x4x4 wraps: two smallest dims product 16, times 2
    assert c.a2a_peak_gbps("4x4x4", 7, 8) == pytest.approx(4 * 100 * 32 * 7 / 64)


def test_references_gather_in_order_and_exchange_chunks():
    p = params("all_to_all", matrix_dim=4, ici_size=2)
    group = [0, 1]
    rows = np.arange(4)
    # member 1's output: chunk 0 from member 0's chunk 1 (rows 2,3), chunk 1 its own chunk 1
    want = np.concatenate([cm.block(p, 0, np.array([2, 3])), cm.block(p, 1, np.array([2, 3]))])
    np.testing.assert_array_equal(cm.expected("all_to_all", p, 1, group, rows), want)
    g = params("all_gather", matrix_dim=2, ici_size=2)
    got = cm.expected("all_gather", g, 0, group, np.arange(4))
    np.testing.assert_array_equal(
        got, np.concatenate([cm.block(g, 0, np.arange(2)), cm.block(g, 1, np.arange(2))])
    )
    ring = params("ppermute", matrix_dim=2, ici_size=4)
    np.testing.assert_array_equal(
        cm.expected("ppermute", ring, 0, [0, 1, 2, 3], np.arange(2)),
        cm.block(ring, 3, np.arange(2)),
    )
    s = params("psum", matrix_dim=2, ici_size=2)
    np.testing.assert_allclose(
        cm.expected("psum", s, 0, group, np.arange(2)),
        cm.block(s, 0, np.arange(2)).astype(float) + cm.block(s, 1, np.arange(2)),
    )


def test_a_wrong_output_is_caught():
    p = params("all_gather", matrix_dim=2, ici_size=2)
    swapped = np.concatenate([cm.block(p, 1, np.arange(2)), cm.block(p, 0, np.arange(2))])
    with pytest.raises(CaseFailure, match="differs"):
        cm.check_member("all_gather", p, 0, lambda rows: swapped[rows])
    right = cm.expected("all_gather", p, 0, [0, 1], np.arange(4))
    assert cm.check_member("all_gather", p, 0, lambda rows: right[rows]) == 0.0


def test_slowest_device_per_iteration():
    assert slowest_per_iteration({"a": [1.0, 5.0], "b": [2.0, 3.0]}) == [2.0, 5.0]


def test_max_dim_clamps_matrix_dim_and_num_elements(write_yaml, run_cli):
    path = write_yaml(
        """
        benchmarks:
        - benchmark_name: psum
          benchmark_sweep_params: [{matrix_dim: 4096, ici_size: 2}]
        - benchmark_name: send_recv
          benchmark_sweep_params: [{num_elements: 268435456, source_id: 0, target_id: 1, n_repeats: 7}]
        """
    )
    code, out, _ = run_cli("validate", "--config", str(path), "--json", "--max-dim", "64")
    assert code == 0
    cases = json.loads(out)
    cases = cases["cases"] if isinstance(cases, dict) else cases
    assert cases[0]["params"]["matrix_dim"] == 64
    assert cases[1]["params"]["num_elements"] == 64 * 64
    assert cases[1]["settings"]["num_runs"] == 7  # n_repeats is send_recv's num_runs


def _run(args, env_extra, tmp_path, timeout=240):
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",
        "JAX_PLATFORMS": "cpu",
        **env_extra,
    }
    return subprocess.run(
        [sys.executable, "-m", "accelbench.cli", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


ALL = """
benchmarks:
- benchmark_name: psum
  backend: {backend}
  benchmark_sweep_params: [{{matrix_dim: 8, ici_size: {n}, mesh_shape: "2x{half}", sharding_strategy: "1x{half}", num_runs: 3}}]
- benchmark_name: all_gather
  backend: {backend}
  benchmark_sweep_params: [{{num_elements: 1024, ici_size: {n}, num_runs: 3}}]
- benchmark_name: psum_scatter
  backend: {backend}
  benchmark_sweep_params: [{{matrix_dim: 2, ici_size: {n}, num_runs: 3}}]
- benchmark_name: all_to_all
  backend: {backend}
  topology: 2x2x1
  benchmark_sweep_params: [{{matrix_dim: {n}, ici_size: {n}, num_runs: 3}}]
- benchmark_name: ppermute
  backend: {backend}
  benchmark_sweep_params: [{{matrix_dim: 4, ici_size: {n}, num_runs: 3}}]
- benchmark_name: send_recv
  backend: {backend}
  benchmark_sweep_params: [{{num_elements: 2048, source_id: 0, target_id: {last}, n_repeats: 3}}]
"""


@pytest.mark.slow  # over a second: the full suite runs it
def test_every_collective_on_eight_host_devices_matches_numpy(write_yaml, tmp_path):
    path = write_yaml(ALL.format(backend="jax", n=8, half=4, last=7))
    done = _run(
        ["run", "--config", str(path), "--output-dir", "out", "-q"],
        {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _rows(tmp_path / "out" / "config.csv")
    assert [r["op"] for r in rows] == [
        "psum",
        "all_gather",
        "psum_scatter",
        "all_to_all",
        "ppermute",
        "send_recv",
    ]
    for r in rows:
        assert r["status"] == "ok" and r["check"] == "passed", r
        assert r["timing_source"] == "xprof_cpu_slowest_device"
        assert float(r["busbw_gb_per_s"]) > 0 and r["used_device_count"] == "8"
    assert rows[0]["group_device_count"] == "4" and rows[0]["group_count"] == "2"
    assert float(rows[3]["theoretical_bw_gb_per_s"]) > 0  # all-to-all with a topology


@pytest.mark.slow
def test_two_jax_processes_write_one_set_of_rows(write_yaml, tmp_path):
    path = write_yaml(
        """
        benchmarks:
        - benchmark_name: psum
          benchmark_sweep_params: [{matrix_dim: 8, ici_size: 4, num_runs: 3}]
        - benchmark_name: all_to_all
          benchmark_sweep_params: [{matrix_dim: 8, ici_size: 4, num_runs: 3}]
        """
    )
    done = _run(
        ["run", "--config", str(path), "--output-dir", "out", "--no-progress", "--processes", "2"]
        + ["--format", "csv"],
        {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # stdout is the format's alone (gloo's "[Gloo] Rank 0 is connected" lines are native prints)
    assert list(csv.reader(done.stdout.splitlines()))[0][0] == "op", done.stdout
    assert len(done.stdout.splitlines()) == 3
    rows = _rows(tmp_path / "out" / "config.csv")
    assert len(rows) == 2  # process 0 alone writes
    for r in rows:
        assert r["status"] == "ok" and r["check"] == "passed"
        assert r["process_count"] == "2" and r["used_device_count"] == "4"
    lines = [json.loads(line) for line in open(tmp_path / "out" / "config.jsonl")]
    assert sorted(lines[0]["device_samples_s"]) == ["p0/CPU:0", "p0/CPU:1", "p1/CPU:0", "p1/CPU:1"]
    # a job stopped after its first case: resumed, every process runs the second case alone (process 0
    # tells the others what its rows hold), and the rows are each case once
    for name, keep in (("config.csv", 2), ("config.jsonl", 1)):
        kept = (tmp_path / "out" / name).read_text().splitlines(keepends=True)[:keep]
        (tmp_path / "out" / name).write_text("".join(kept))
    again = _run(
        ["run", "--config", str(path), "--output-dir", "out", "-q", "--processes", "2", "--resume"],
        {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
        tmp_path,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resuming: 1 of 2 cases already done" in again.stderr
    assert [r["op"] for r in _rows(tmp_path / "out" / "config.csv")] == ["psum", "all_to_all"]


@pytest.mark.slow
def test_a_jax_bench_collective_spans_every_process_s_devices(write_yaml, tmp_path):
    """A mesh without a shape spans the job's devices, as upstream's does: two processes' (one
    device each, the launcher's count too), not one process's."""
    path = write_yaml(
        "global: {num_runs: 3, warmup_tries: 1}\nbenchmarks:\n- {name: all_reduce, matrix_dim: 8}\n"
    )
    done = _run(
        ["run", "--config", str(path), "-o", "r.csv", "-q", "--processes", "2"], {}, tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = _rows(tmp_path / "r.csv")
    assert row["status"] == "ok" and row["process_count"] == "2", row["error"]


@pytest.mark.slow
def test_torch_distributed_twins_on_gloo(write_yaml, tmp_path):
    path = write_yaml(
        ALL.format(backend="torch", n=2, half=1, last=1)
        .replace('mesh_shape: "2x1", sharding_strategy: "1x1", ', "")
        .replace("  topology: 2x2x1\n", "")
    )
    done = _run(["run", "--config", str(path), "--output-dir", "out", "-q"], {}, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _rows(tmp_path / "out" / "config.csv")
    assert len(rows) == 6
    for r in rows:
        assert r["status"] == "ok" and r["check"] == "passed", r
        assert r["implementation"] == "torch.distributed:gloo"
        assert r["timing_source"].endswith("_slowest_rank")
    assert rows[0]["group_device_count"] == "2" and float(rows[0]["busbw_gb_per_s"]) > 0


@pytest.mark.slow
def test_torch_pairs_that_leave_a_rank_out_run_one_after_another(write_yaml, tmp_path):
    """Three gloo ranks, a pair without rank 0 then one without rank 1: every rank makes every pair's
    group (torch.distributed's rule), so the bystander of the first does not leave the second hung."""
    cases = "\n".join(
        "- benchmark_name: send_recv\n  backend: torch\n  benchmark_sweep_params: "
        f"[{{num_elements: 2048, source_id: {a}, target_id: {b}, n_repeats: 3}}]"
        for a, b in ((1, 2), (2, 0))
    )
    path = write_yaml("benchmarks:\n" + cases + "\n")
    done = _run(
        ["run", "--config", str(path), "-o", "r.csv", "-q", "--timeout", "60"], {}, tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _rows(tmp_path / "r.csv")
    assert [(r["status"], r["check"]) for r in rows] == [("ok", "passed")] * 2, rows


@pytest.mark.slow
def test_a_soaked_collective_runs_its_rounds_alike_on_every_rank(write_yaml, tmp_path):
    """A soak's rounds end by each rank's own clock; the ranks agree on each (`Prepared.agree`), so
    none is left waiting in a collective the others stopped calling (without it, this run hung).
    Two JAX processes on CPU cannot run this: their XLA CPU collectives stall at 40 sustained calls
    queued back to back, soak or not, so only `Prepared.agree`'s unit test covers JAX's rounds."""
    path = write_yaml(
        """
        benchmarks:
        - benchmark_name: psum
          backend: torch
          min_duration_s: 0.5
          benchmark_sweep_params: [{matrix_dim: 8, ici_size: 2}]
        """
    )
    done = _run(["run", "--config", str(path), "--output-dir", "out", "-q"], {}, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = _rows(tmp_path / "out" / "config.csv")
    assert row["status"] == "ok" and row["stop_reason"] == "min_duration", row
    assert float(row["timed_loop_s"]) >= 0.5


def test_a_torch_rank_agrees_only_when_no_rank_says_no():
    """`_agree` (builds, checks) and `_largest` (timing decisions) are one reduction: on a group of
    one, agreement is the rank's own answer and the largest value its own."""
    code = (
        "import torch.distributed as dist\n"
        "from torch_backend import distributed as d\n"
        "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:0', rank=0, world_size=1)\n"
        "print(d._agree(True), d._agree(False), d._largest(3.5), d._largest(True))\n"
        "dist.destroy_process_group()\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "False", "3.5", "1.0"]
