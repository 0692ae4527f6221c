"""The Ironwood system benchmarks on CPU: host-device transfers, the throttling verdict and chart, the
GPU monitor's absence, the attention model (tests/test_models.py has its numbers)."""

import csv
import json

import pytest

from accelbench.core.samples import Samples
from accelbench.platform.gpu_monitor import Monitor, MonitorSummary
from accelbench.run.planning import plan_from_file


def test_decile_drift_compares_the_last_tenth_with_the_first():
    steady = [1.0] * 100
    assert Samples(steady).drift == (1.0, 10, False)
    slowing = [1.0] * 50 + [1.2] * 50  # the last tenth 20% slower than the first
    ratio, tenth, verdict = Samples(slowing).drift
    assert ratio == pytest.approx(1.2) and tenth == 10 and verdict is True
    # too few samples a tenth for a verdict, but the ratio is still reported
    assert Samples([1.0] * 20 + [2.0] * 20).drift == (2.0, 4, None)
    assert Samples([1.0] * 5).drift == (None, 0, None)


def test_gap_strategies_set_cadence_and_cache(write_yaml):
    cases = plan_from_file(
        str(
            write_yaml(
                """
                benchmarks:
                - benchmark_name: gemm_throttling
                  cache: cold
                  benchmark_sweep_params:
                  - m: 64
                    k: 64
                    n: 64
                    gap_strategy: [data_gen_once_block_every_iter, data_gen_once_noblock,
                                   data_gen_every_iter_block_every_iter,
                                   data_gen_once_noblock_stressed_no_sharding]
                """
            )
        )
    )
    assert [(c.run.cadence, c.run.cache) for c in cases] == [
        ("blocked", "warm"),
        ("sustained", "warm"),
        ("blocked", "cold"),
        ("sustained", "warm"),
    ]


def test_without_a_gpu_the_monitor_samples_nothing_and_says_why():
    with Monitor(0) as monitor:
        pass
    assert monitor.series == [] and monitor.summary() == MonitorSummary()
    assert monitor.note.startswith("no GPU monitor")


@pytest.mark.slow  # over a second: the full suite runs it
def test_a_throttling_run_keeps_its_series_and_report_charts_it(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"""
        benchmarks:
        - benchmark_name: gemm_throttling
          backend: [jax, torch]
          implementation: eager
          csv_path: {tmp_path}/t.csv
          benchmark_sweep_params:
          - {{m: 64, k: 64, n: 64, dtype: bfloat16, num_runs: 60, gap_strategy: data_gen_once_noblock}}
        """
    )
    code, _, _ = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert {r["cadence"] for r in rows} == {"sustained"}
    assert all(r["decile_sample_count"] == "6" and r["decile_drift_ratio"] for r in rows)
    lines = [json.loads(x) for x in open(tmp_path / "t.jsonl")]
    assert all(len(x["samples_s"]) == 60 for x in lines)
    code, out, _ = run_cli("report", str(tmp_path / "t.csv"), "--output-dir", str(tmp_path / "r"))
    assert code == 0
    charts = sorted(p.name for p in (tmp_path / "r").glob("series_gemm_throttling_*.png"))
    assert len(charts) == 2


def test_host_device_runs_both_directions_when_the_config_names_neither(write_yaml):
    cases = plan_from_file(
        str(
            write_yaml(
                "benchmarks:\n- benchmark_name: host_device\n"
                "  benchmark_sweep_params: [{data_size_mib: [1, 2]}]\n"
            )
        )
    )
    assert [(c.params.data_size_mib, c.params.direction) for c in cases] == [
        (1, "h2d"),
        (1, "d2h"),
        (2, "h2d"),
        (2, "d2h"),
    ]


@pytest.mark.slow  # over a second: the full suite runs it
def test_host_device_rows_carry_decimal_and_binary_bandwidth(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"""
        benchmarks:
        - benchmark_name: host_device
          backend: [jax, torch]
          num_runs: 3
          csv_path: {tmp_path}/h.csv
          benchmark_sweep_params: [{{data_size_mib: 2, host_memory: [pageable, pinned]}}]
        """
    )
    code, _, _ = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0
    rows = list(csv.DictReader(open(tmp_path / "h.csv")))
    ok = [r for r in rows if r["status"] == "ok"]
    # JAX has pinned host memory on the CPU; PyTorch's needs CUDA, so that row says so
    assert {(r["backend"], r["host_memory"]) for r in ok} == {
        ("jax", "pageable"),
        ("jax", "pinned"),
        ("torch", "pageable"),
    }
    unsupported = [r for r in rows if r["status"] == "unsupported"]
    assert len(unsupported) == 2 and all("CUDA" in r["error"] for r in unsupported)
    for r in ok:
        assert r["check"] == "passed" and r["timing_source"] == "wall_clock"
        gbps, gib_per_s = float(r["gb_per_s"]), float(r["gib_per_s"])
        assert gib_per_s == pytest.approx(gbps * 1e9 / 2**30, rel=1e-3)  # the CSV keeps 5 digits


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fwd", "bwd"])
def test_the_splash_kernel_matches_the_reference_in_the_pallas_interpreter(
    mode, tmp_path, monkeypatch
):
    """The TPU kernel's code path, run by Pallas's interpreter on the CPU (a TPU runs it compiled)."""
    import dataclasses

    from test_backends import case, jax_backend

    from accelbench.ops import attention

    monkeypatch.setattr(attention, "INTERPRET_OFF_TPU", True)
    shape = dict(q_seq_len=128, kv_seq_len=128, qk_head_dim=128, v_head_dim=128, mode=mode)
    c = dataclasses.replace(
        case("tokamax_splash_attention", "jax", tmp_path, **shape), implementation="pallas:splash"
    )
    m = jax_backend().measure(c)
    assert m.implementation == "pallas:splash" and m.check.text == "passed"


def test_off_a_tpu_the_splash_kernel_is_unsupported_not_replaced(tmp_path):
    import dataclasses

    from test_backends import case, jax_backend

    from accelbench.errors import CaseFailure

    c = dataclasses.replace(
        case("tokamax_splash_attention", "jax", tmp_path), implementation="pallas:splash"
    )
    with pytest.raises(CaseFailure, match="TPUs only"):
        jax_backend().measure(c)
