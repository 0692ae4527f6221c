"""The planner: command-line overrides go through it, a case named twice runs once, op traits set
defaults, and the same op on the same inputs pairs across backends."""

import pytest

from microbench.config.loader import load_config
from microbench.config.planner import plan
from microbench.core.options import RunOptions
from microbench.errors import UserError


def cases_of(write_yaml, text, **options):
    return plan(load_config(str(write_yaml(text))), RunOptions(**options))


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
        by_shape.setdefault(c.params["m"], set()).add((c.backend, c.pair_key))
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
