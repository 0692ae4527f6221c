"""The planner: command-line overrides go through it, a case named twice runs once, op traits set
defaults, and the same op on the same inputs pairs across backends."""

import json

import pytest
from conftest import ROOT, run_options

from accelbench.config.loader import load_config
from accelbench.config.planner import plan
from accelbench.errors import UserError


def cases_of(write_yaml, text, **options):
    return plan(load_config(str(write_yaml(text))), run_options(**options))


SWEEP = """
benchmarks:
- benchmark_name: add
  backend: [jax, torch]
  implementation: [jit, eager]
  csv_path: {csv}
  benchmark_sweep_params:
  - {{m: [8, 16], n: 8}}
  - {{m: 8, n: 8}}
"""


def test_a_case_named_twice_runs_once_and_backends_pair(write_yaml, tmp_path):
    cases = cases_of(write_yaml, SWEEP.format(csv=tmp_path / "a.csv"))
    assert len(cases) == 4  # (8, 8) appears in both entries: once per backend
    by_shape = {}
    for c in cases:
        by_shape.setdefault(c.params.m, set()).add((c.backend, c.pair_key))
    assert all(len({key for _, key in pair}) == 1 for pair in by_shape.values())
    assert len({next(iter(pair))[1] for pair in by_shape.values()}) == 2


def test_overrides_from_the_command_line_go_through_the_planner(write_yaml, tmp_path):
    text = SWEEP.format(csv=tmp_path / "a.csv")
    cases = cases_of(write_yaml, text, num_runs=7, output=str(tmp_path / "all.csv"))
    assert {c.run.num_runs for c in cases} == {7}
    assert {c.outputs.csv_path for c in cases} == {str(tmp_path / "all.csv")}
    only = cases_of(write_yaml, text, only=("*-torch-*",))
    assert {c.backend for c in only} == {"torch"}
    with pytest.raises(UserError, match="leave none"):
        cases_of(write_yaml, text, skip=("add",))


def test_an_op_names_its_default_implementations_and_its_run_settings(write_yaml):
    elementwise = cases_of(
        write_yaml,
        "benchmarks:\n- benchmark_name: elementwise\n  backend: torch\n"
        "  benchmark_params: [{batch: 1, seq: 2, hidden: 8, device: cpu}]\n",
    )
    assert [c.implementation for c in elementwise] == ["eager"]  # not every registered kernel
    throttling = cases_of(
        write_yaml,
        "benchmarks:\n- benchmark_name: gemm_throttling\n  benchmark_params:\n"
        "  - {m: 8, k: 8, n: 8, gap_strategy: data_gen_once_noblock}\n",
    )
    assert (throttling[0].run.cadence, throttling[0].run.cache) == ("sustained", "warm")


def test_top_level_run_settings_are_checked_against_the_timer_registry(write_yaml):
    with pytest.raises(UserError, match="timer: must be one of") as info:
        cases_of(
            write_yaml,
            "timer: cuptii\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        )
    assert info.value.suggestion == "cupti"


FOUR_ENTRIES = """
benchmarks:
- benchmark_name: gemm_simple_with_dtype
  xprof_device_mode: first_device
  benchmark_params: [{m: 16, k: 16, n: 16}]
- benchmark_name: gemm_simple_with_dtype
  xprof_device_mode: max_device
  benchmark_params: [{m: 16, k: 16, n: 16}]
- benchmark_name: gemm_simple_with_dtype
  min_duration_s: 0.1
  soak_chunk: 2
  benchmark_params: [{m: 16, k: 16, n: 16}]
- benchmark_name: gemm_simple_with_dtype
  min_duration_s: 0.1
  soak_chunk: 3
  benchmark_params: [{m: 16, k: 16, n: 16}]
"""


def test_entries_that_differ_only_in_a_run_setting_are_four_cases(write_yaml, run_cli):
    """A case's id comes from every declared run setting that differs from its default, so entries
    differing only in xprof_device_mode or soak_chunk are not merged; the listing tells them apart."""
    path = write_yaml(FOUR_ENTRIES)
    code, out, err = run_cli("validate", "--config", str(path))
    assert code == 0 and out.strip().endswith(": 4 cases"), err
    code, out, _ = run_cli("validate", "--config", str(path), "--json")
    ids = {c["case_id"] for c in json.loads(out)}
    assert len(ids) == 4
    code, out, _ = run_cli("validate", "--config", str(path), "--list")
    assert "xprof_device_mode=max_device" in out and "soak_chunk=3" in out


def test_cases_that_max_dim_makes_equal_run_once_and_the_run_says_how_many(run_cli):
    """sample.yaml's 11 HBM sizes and 4 GEMM points are one case each at --max-dim 256; a point
    the file names twice (m=k=n=2048 in the sweep and again alone) is still run twice, as jax-bench
    runs it, and the listing says which is the repeat."""
    sample = str(ROOT / "configs" / "jax_bench" / "sample_configs" / "sample.yaml")
    code, out, err = run_cli("validate", "--config", sample, "--max-dim", "256", "--json")
    cases = json.loads(out)
    assert code == 0 and len({c["case_id"] for c in cases}) == len(cases)
    ops = [c["op"] for c in cases]
    assert ops.count("hbm_bandwidth") == 1 and ops.count("gemm_generalized") == 2
    (note,) = [line for line in err.splitlines() if line.startswith("note:")]
    assert note == (
        f"note: {30 - len(cases)} of 30 cases are the same as another after --max-dim 256 and run "
        f"once ({len(cases)} distinct)"
    )
    code, out, _ = run_cli("validate", "--config", sample, "--max-dim", "256", "--list")
    assert "repeat_count=1" in out
    code, _, err = run_cli("validate", "--config", sample)
    assert "note:" not in err  # nothing collapses without --max-dim
