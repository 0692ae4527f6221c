"""Upstream TPUMS's tests/test_config.py (at 0f3404d7), one test per case and named after it: the same
files give the same expanded cases, in the same order, and the same errors, through `microbench
validate --config FILE --json` (a case's `fields` are the file's, in TPUMS's names). Where upstream's
test feeds fields a benchmark does not have (param1, layers), this project refuses or leaves them
out, so the test asserts the same fact with the benchmark's own fields (docs/tpums.md, departures)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def expanded(write_yaml, run_cli):
    """A TPUMS file's cases as (benchmark, fields) in run order."""

    def expand(text: str) -> list[dict]:
        path = write_yaml(textwrap.dedent(text))
        code, out, err = run_cli("validate", "--config", str(path), "--json")
        assert code == 0, err
        return [c["fields"] | {"name": c["benchmark"]} for c in json.loads(out)]

    return expand


@pytest.fixture
def refused(write_yaml, run_cli):
    """The one error line a TPUMS file gets (exit 2)."""

    def refuse(text: str) -> str:
        """Under --strict-layout: upstream's newest loader (an earlier layout is not read)."""
        path = write_yaml(textwrap.dedent(text))
        code, _, err = run_cli("validate", "--config", str(path), "--strict-layout")
        assert code == 2 and err.count("\n") == 1, err
        return err

    return refuse


def test_expand_sweep_no_sweep(expanded):
    (case,) = expanded("benchmark: {name: gemm, params: {m: 64, n: 32}}")
    assert (case["m"], case["n"]) == (64, 32)


def test_expand_sweep_sweep_list(expanded):
    cases = expanded("benchmark: {name: gemm, params: {m: 64}, sweep: {n: [32, 48]}}")
    assert [(c["m"], c["n"]) for c in cases] == [(64, 32), (64, 48)]


def test_expand_sweep_range_multiplier(expanded):
    cases = expanded("benchmark: {name: gemm, sweep: {n: {start: 2, end: 8, multiplier: 2}}}")
    assert [c["n"] for c in cases] == [2, 4, 8]


def test_expand_sweep_range_increase_by(expanded):
    cases = expanded("benchmark: {name: gemm, sweep: {n: {start: 2, end: 5, increase_by: 1}}}")
    assert [c["n"] for c in cases] == [2, 3, 4, 5]


def test_expand_sweep_range_start_greater_than_end_raises_error(expanded, refused):
    assert "start (5) > end (2)" in refused(
        "benchmark: {name: gemm, sweep: {n: {start: 5, end: 2}}}"
    )
    (case,) = expanded("benchmark: {name: gemm, sweep: {n: {start: 5, end: 5}}}")
    assert case["n"] == 5


def test_expand_sweep_combinatorial_explosion(write_yaml, run_cli):
    """10 x 10 x 20 = 2000 combinations: the first 1000 are run, and the run says so."""
    path = write_yaml(
        "benchmark:\n  name: gemm\n  sweep:\n"
        f"    m: {list(range(1, 11))}\n    n: {list(range(1, 11))}\n    k: {list(range(1, 21))}\n"
    )
    code, out, err = run_cli("validate", "--config", str(path), "--json", "--max-cases", "5000")
    assert code == 0 and len(json.loads(out)) == 1000 and "the first 1000 are run" in err


def test_load_config_with_sweeps(expanded):
    cases = expanded(
        "benchmark: {name: all_reduce, params: {matrix_dim: 100}, sweep: {seed: [1, 2]}}"
    )
    assert [(c["name"], c["matrix_dim"], c["seed"]) for c in cases] == [
        ("all_reduce", 100, 1),
        ("all_reduce", 100, 2),
    ]


def test_load_config_with_model_preset(expanded):
    """LLM-36B gives the fields the benchmark has (attention's heads and head size), none else."""
    (case,) = expanded("benchmark: {name: attention_flashed, model_preset: LLM-36B}")
    assert case["name"] == "attention_flashed"
    assert (case["num_q_heads"], case["num_kv_heads"], case["head_dim"]) == (56, 56, 128)
    assert "layers" not in case


def test_load_config_with_cases_from_csv(write_yaml, expanded):
    write_yaml("m,n,k\n128,128,128\n256,256,256\n", "shapes.csv")
    cases = expanded(
        "benchmark: {name: gemm, params: {in_dtype: float32}, cases_from_csv: shapes.csv}"
    )
    assert [(c["name"], c["in_dtype"], c["m"]) for c in cases] == [
        ("gemm", "float32", 128),
        ("gemm", "float32", 256),
    ]


def test_load_config_missing_benchmark_raises_error(write_yaml, capsys):
    from accelbench.dialects.tpums.cli import main

    path = write_yaml("warmup_tries: 2\nnum_runs: 10\n")
    assert main(["benchmark", "run-config", str(path)]) == 2
    assert "must define a 'benchmark:' mapping" in capsys.readouterr().err


def test_load_config_with_cases(expanded):
    cases = expanded(
        """
        benchmark:
          name: gemm
          params: {warmup_tries: 2, in_dtype: bfloat16}
          cases:
            - {m: 4096, n: 4096, k: 4096}
            - {m: 8192, n: 8192, k: 8192}
        """
    )
    assert [(c["warmup_tries"], c["in_dtype"], c["m"], c["n"], c["k"]) for c in cases] == [
        (2, "bfloat16", 4096, 4096, 4096),
        (2, "bfloat16", 8192, 8192, 8192),
    ]


def test_load_config_cases_not_a_list_raises_error(refused):
    assert "to be a list" in refused("benchmark: {name: gemm, cases: not_a_list}")


def test_load_config_cases_item_not_a_dict_raises_error(refused):
    assert "to be a dict" in refused("benchmark: {name: gemm, cases: [not_a_dict]}")


def test_load_config_four_stage_precedence(expanded):
    """Preset, then params, then each case, then the sweep's product over the cases."""
    cases = expanded(
        """
        benchmark:
          name: attention_flashed
          model_preset: LLM-36B
          params: {warmup_tries: 2, num_runs: 5, dtype: bfloat16, seq_len: 4096}
          cases:
            - head_dim: 64
            - head_dim: 256
          sweep:
            causal: [true, false]
        """
    )
    assert [(c["head_dim"], c["causal"]) for c in cases] == [
        (64, True),
        (64, False),
        (256, True),
        (256, False),
    ]
    assert all(c["seq_len"] == 4096 and c["num_q_heads"] == 56 for c in cases)  # params, preset
    assert all(c["warmup_tries"] == 2 for c in cases)


def test_load_config_mutual_exclusion_cases_and_cases_from_csv_raises_error(refused):
    err = refused("benchmark: {name: gemm, cases: [{m: 1024}], cases_from_csv: shapes.csv}")
    assert "cannot specify both 'cases' and 'cases_from_csv'" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("benchmark: {name: gemm, sweep: {name: [gemm_a, gemm_b]}}", "reserved key(s)"),
        (
            "benchmark: {name: gemm, params: {m: 1024}, sweep: {m: [1024, 2048]}}",
            "collide with keys in 'params'",
        ),
        (
            "benchmark: {name: gemm, cases: [{m: 1024, n: 512}], sweep: {m: [1024, 2048]}}",
            "collide with keys in 'cases'",
        ),
        (
            "benchmark: {name: gemm, cases_from_csv: shapes.csv, sweep: {m: [1024, 2048]}}",
            "collide with keys in 'cases_from_csv'",
        ),
    ],
    ids=["reserved_key", "params_collision", "cases_collision", "cases_from_csv_collision"],
)
def test_load_config_sweep_key_collision_raises_error(write_yaml, refused, text, message):
    write_yaml("m,n\n1024,1024\n", "shapes.csv")
    assert message in refused(text)


def test_load_config_sweep_overrides_model_preset(expanded):
    cases = expanded(
        """
        benchmark:
          name: attention_flashed
          model_preset: LLM-36B
          params: {warmup_tries: 2, num_runs: 5, dtype: bfloat16}
          sweep: {seq_len: [2048, 4096]}
        """
    )
    assert [c["seq_len"] for c in cases] == [2048, 4096]  # the preset's 8192, swept over
    assert all(c["head_dim"] == 128 for c in cases)  # the preset's other fields stay


def test_load_config_unrecognized_key_in_benchmark_raises_error(refused):
    err = refused("benchmark: {name: gemm, warmup_tries: 2}")
    assert "Unrecognized key(s) in 'benchmark' mapping" in err
    assert "Baseline execution parameters should be placed under 'params:'" in err


def test_load_config_unknown_model_preset_raises_error(refused):
    err = refused("benchmark: {name: swiglu, model_preset: NONEXISTENT_MODEL}")
    assert "Unknown model preset 'NONEXISTENT_MODEL'" in err


def test_benchmark_key_enum():
    """The keys of `benchmark:` are TPUMS's seven, and xprof_device_mode its runner takes there."""
    from accelbench.dialects.tpums.layouts import STAGE_B

    upstream = {
        "name",
        "model_preset",
        "params",
        "cases",
        "cases_from_csv",
        "sweep",
        "xprof_timing",
    }
    assert set(STAGE_B) == upstream | {"xprof_device_mode"}


def test_load_config_params_not_a_dict_raises_error(refused):
    err = refused("benchmark: {name: gemm, params: not_a_dict}")
    assert "Expected 'params' in benchmark" in err and "to be a dict" in err


def test_load_config_params_reserved_key_raises_error(refused):
    assert "reserved key(s)" in refused("benchmark: {name: gemm, params: {sweep: {m: [1024]}}}")


def test_load_config_sweep_invalid_type_raises_error(refused):
    err = refused("benchmark: {name: gemm, sweep: not_a_dict}")
    assert "Expected 'sweep' in benchmark" in err and "to be a non-empty dict" in err


def test_load_config_sweep_empty_mapping_raises_error(refused):
    err = refused("benchmark: {name: gemm, sweep: {}}")
    assert "Expected 'sweep' in benchmark" in err and "to be a non-empty dict" in err


@pytest.mark.parametrize(
    ("snippet", "traced"),
    [("xprof_timing: true, ", True), ("xprof_timing: false, ", False), ("", False)],
)
def test_load_config_root_xprof_timing_extracted(write_yaml, snippet, traced):
    """The file's xprof_timing traces every case (left out: not traced)."""
    from conftest import run_options

    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan

    path = write_yaml(f"benchmark: {{name: gemm, {snippet}params: {{warmup_tries: 1}}}}")
    (case,) = plan(load_config(str(path)), run_options(), lambda: 1)
    assert case.origin.fields.as_dict()["xprof_timing"] is traced
    assert (case.outputs.trace_dir is not None) is traced


@pytest.mark.parametrize(
    "snippet",
    [
        "params: {xprof_timing: true}",
        "sweep: {xprof_timing: [true, false]}",
        "cases: [{m: 1024, xprof_timing: true}]",
    ],
    ids=["in_params", "in_sweep", "in_cases"],
)
def test_load_config_xprof_timing_reserved_key_raises_error(refused, snippet):
    err = refused(f"benchmark: {{name: gemm, {snippet}}}")
    assert "reserved key(s)" in err and "xprof_timing" in err


@pytest.mark.parametrize(
    "value", ['"false"', '"true"', "1"], ids=["string_false", "string_true", "integer"]
)
def test_load_config_xprof_timing_non_bool_raises_error(refused, value):
    err = refused(f"benchmark: {{name: gemm, xprof_timing: {value}, params: {{m: 1024}}}}")
    assert "Expected 'xprof_timing' in benchmark" in err and "to be a bool" in err


def test_a_stage_a_file_with_cases_loads_as_its_loader_read_it(expanded):
    """configs/7x/2x2x1/gemm_generalized.yaml at 19141ac5: flat fields beside a cases list, each
    case over them (its `system:` global key marks the earlier form)."""
    cases = expanded(
        """
        system: ironwood
        benchmark:
          name: gemm_generalized
          warmup_tries: 2
          num_runs: 5
          dtype: bfloat16
          xprof_timing: true
          cases:
            - {m: 4096, k: 4096, n: 4096}
            - {m: 8192, k: 8192, n: 8192}
        """
    )
    assert [(c["m"], c["num_runs"], c["warmup_tries"]) for c in cases] == [
        (4096, 5, 2),
        (8192, 5, 2),
    ]
