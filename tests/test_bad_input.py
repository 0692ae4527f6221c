"""The bad-input catalogue: each malformed input gives one exact line, exit code 2, and no files."""

import os

import pytest
import yaml
from conftest import ROOT as ROOT_DIR
from conftest import files_under

CASES = {
    "yaml_syntax": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 1, n: 2}\n",
        "config.yaml: line 4, column 1: YAML syntax error: "
        + (
            "did not find expected ',' or ']'"
            if yaml.__with_libyaml__  # libyaml words it so
            else "expected ',' or ']', but got '<stream end>'"
        ),
    ),
    "top_level_list": (
        "- benchmark_name: add\n",
        "config.yaml: (top level): the top level must be a mapping, got list",
    ),
    "top_level_scalar": (
        "just a string\n",
        "config.yaml: (top level): the top level must be a mapping, got str",
    ),
    "empty_file": ("", "config.yaml: the file is empty (no YAML value in it)"),
    "comments_only": ("# later\n\n", "config.yaml: the file is empty (no YAML value in it)"),
    "binary": (
        b"benchmarks:\n\xff\xfe\x00",
        "config.yaml: not UTF-8 text (byte 12): a config is YAML",
    ),
    "no_dialect": (
        "foo: 1\n",
        "config.yaml: (top level): not a benchmark config: expected 'benchmark: {name: ...}' "
        "(TPUMS dialect), 'global:' or 'benchmarks: - name:' (jax-bench dialect), "
        "'benchmarks: - benchmark_name:' (Ironwood dialect), "
        "'model_params' (torchao dialect); found foo",
    ),
    "benchmarks_not_list": (
        "benchmarks: add\n",
        "config.yaml: benchmarks: Input should be a valid list (got 'add')",
    ),
    "benchmarks_empty": (
        "benchmarks: []\n",
        "config.yaml: benchmarks: List should have at least 1 item after validation, not 0 (got [])",
    ),
    "unknown_top_key": (
        "benchmarks:\n- benchmark_name: add\nnum_run: 3\n",
        "config.yaml: num_run: unknown key 'num_run' (did you mean 'num_runs'?)",
    ),
    "unknown_benchmark_key": (
        "benchmarks:\n- benchmark_name: add\n  csv_pth: x.csv\n",
        "config.yaml: benchmarks[0].csv_pth: unknown key 'csv_pth' (did you mean 'csv_path'?)",
    ),
    "missing_name": (
        "benchmarks:\n- num_runs: 3\n",
        "config.yaml: benchmarks[0].benchmark_name: required key is missing",
    ),
    "unknown_op": (
        "benchmarks:\n- benchmark_name: gemm_simpel\n",
        "config.yaml: benchmarks[0].benchmark_name: unknown op 'gemm_simpel' (did you mean 'gemm_simple'?)",
    ),
    "unknown_param": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, nn: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].nn: unknown parameter 'nn' for op 'add' (did you mean 'n'?)",
    ),
    "missing_dim": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0]: op 'add' needs parameter 'n'",
    ),
    "zero_dim": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 0, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].m: must be positive, got 0",
    ),
    "negative_dim": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m: [8, -8], n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m: must be positive, got -8",
    ),
    "huge_dim": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 100000000, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].m: 100000000 is absurdly large for one dimension (limit 4194304)",
    ),
    "dim_wrong_type": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: big, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].m: must be a positive integer, got 'big'",
    ),
    "float_dim": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 1.5, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].m: must be a positive integer, got 1.5",
    ),
    "unknown_dtype": (
        "benchmarks:\n- benchmark_name: gemm_multiple_run\n  benchmark_params: [{m: 8, k: 8, n: 8, dtype: bfloat61}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].dtype: unknown dtype 'bfloat61' (did you mean 'bfloat16'?)",
    ),
    "unsupported_dtype": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, dtype: float8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].dtype: dtype 'float8' is not supported by this op "
        "(choose from bfloat16, float32, float16)",
    ),
    "bad_choice": (
        "benchmarks:\n- benchmark_name: gemm_simple\n  benchmark_params: [{m: 8, k: 8, n: 8, layout: km}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].layout: 'km' is not one of kn, nk",
    ),
    "num_runs_zero": (
        "benchmarks:\n- benchmark_name: add\n  num_runs: 0\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].num_runs: must be an integer from 1 to 10,000,000, got 0",
    ),
    "num_runs_in_params_wrong": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, num_runs: many}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].num_runs: must be an integer from 1 to 10,000,000, got 'many'",
    ),
    "endless_multiplier": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n  - {m_range: {start: 8, end: 64, multiplier: 1}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range.multiplier: range never ends: "
        "multiplier must be > 1 and start > 0 (got multiplier=1, start=8)",
    ),
    "endless_increase": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n  - {m_range: {start: 8, end: 64, increase_by: 0}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range.increase_by: range never ends: increase_by must be > 0 (got 0)",
    ),
    "same_as_cycle": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: SAME_AS_n, n: SAME_AS_m}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].m: SAME_AS_ cycle: m -> n -> m",
    ),
    "same_as_unknown": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: SAME_AS_k}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].n: SAME_AS_ refers to unknown key 'k'",
    ),
    "sweep_too_large": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n  - {m_range: {start: 1, end: 100, increase_by: 1}, n_range: {start: 1, end: 100, increase_by: 1}}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0]: the config expands to more than 5000 cases; "
        "raise the cap with --max-cases or 'max_cases:' if this is intended",
    ),
    "unknown_backend": (
        "benchmarks:\n- benchmark_name: add\n  backend: jaxx\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].backend: unknown backend 'jaxx' (did you mean 'jax'?)",
    ),
    "backend_without_op": (
        "benchmarks:\n- benchmark_name: fault\n  backend: jax\n",
        "config.yaml: benchmarks[0].backend: op 'fault' has no jax implementation (implemented in: numpy)",
    ),
    "sweep_entry_not_mapping": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [[8, 8]]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0]: Input should be a valid dictionary (got [8, 8])",
    ),
    "torchao_unknown_key": (
        "model_params:\n  matrix_shape:\n  - name: custom\n",
        "config.yaml: model_params[0].matrix_shape: unknown key 'matrix_shape' (did you mean 'matrix_shapes'?)",
    ),
    "torchao_recipe_typo": (
        "quantization_config_recipe_names: [baseline, int8w0]\nmodel_params:\n  matrix_shapes: [{name: llama}]\n",
        "config.yaml: quantization_config_recipe_names[1]: unknown quantization recipe 'int8w0' (did you mean 'int8wo'?)",
    ),
    "torchao_generator_typo": (
        "model_params:\n  matrix_shapes: [{name: lama}]\n",
        "config.yaml: model_params[0].matrix_shapes[0].name: unknown shape generator 'lama' (did you mean 'llama'?)",
    ),
    "torchao_shape_not_3d": (
        "model_params:\n  matrix_shapes: [{name: custom, shapes: [[1, 2]]}]\n",
        "config.yaml: model_params[0].matrix_shapes[0].shapes: Value error, each shape must be [m, k, n], got [1, 2] (got [[1, 2]])",
    ),
    "torchao_model_type_typo": (
        "model_params:\n  matrix_shapes: [{name: llama}]\n  model_type: ln_linear_gleu\n",
        "config.yaml: model_params[0].model_type: unknown model_type 'ln_linear_gleu' (did you mean 'ln_linear_gelu'?)",
    ),
    "torchao_zero_shape": (
        "model_params:\n  matrix_shapes: [{name: custom, shapes: [[0, 2, 3]]}]\n",
        "config.yaml: model_params[0].matrix_shapes[0].shapes[0][0]: Input should be greater than 0 (got 0)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_config_is_one_exact_line_exit_2_and_writes_nothing(
    name, tmp_path, monkeypatch, run_cli
):
    text, expected = CASES[name]
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "config.yaml"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    code, out, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert code == 2
    assert err == f"error: {expected}\n"
    assert "Traceback" not in out + err
    assert files_under(tmp_path) == [tmp_path / "config.yaml"]


def test_backend_for_every_benchmark_is_checked_on_what_only_keeps(tmp_path, monkeypatch, run_cli):
    """`--backend` blames only a benchmark that --only/--skip keep (trial finding 15a)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n"
        "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n"
    )
    lacks = "error: config.yaml: --backend: op 'add' has no numpy implementation (implemented in: "
    for selection in ((), ("--only", "add"), ("--skip", "fault")):
        code, _, err = run_cli(
            "run", "--config", "config.yaml", "--backend", "numpy", *selection, "--no-progress"
        )
        assert code == 2 and err.startswith(lacks) and len(err.splitlines()) == 1
        assert files_under(tmp_path) == [tmp_path / "config.yaml"]
    code, _, err = run_cli(
        "run", "--config", "config.yaml", "--backend", "numpy", "--only", "fault", "-q"
    )
    assert code == 0, err


def test_missing_config_file(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("run", "--config", "nope.yaml")
    assert (code, err) == (2, "error: nope.yaml: config file not found\n")


def test_output_path_under_a_file_is_refused_before_running(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blocker").write_text("i am a file")
    (tmp_path / "config.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: blocker/out.csv\n"
    )
    code, _, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert code == 2
    assert (
        err
        == "error: csv_path 'blocker/out.csv': cannot create the output directory: 'blocker' is a file\n"
    )
    assert files_under(tmp_path) == [tmp_path / "blocker", tmp_path / "config.yaml"]


def test_output_path_that_is_a_directory_is_refused(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.csv").mkdir()
    (tmp_path / "config.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n"
    )
    code, _, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert (code, err) == (
        2,
        "error: csv_path 'out.csv': output path is a directory, expected a file\n",
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_is_refused(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    (tmp_path / "config.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: locked/x/out.csv\n"
    )
    code, _, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert code == 2 and "is not writable" in err


def test_resume_with_results_of_another_config_is_refused(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 2\n  csv_path: out.csv\n"
    )
    (tmp_path / "b.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 3\n  csv_path: out.csv\n"
    )
    assert run_cli("run", "--config", "a.yaml", "--no-progress")[0] == 0
    before = (tmp_path / "out.csv").read_text()
    code, _, err = run_cli("run", "--config", "b.yaml", "--resume", "--no-progress")
    assert code == 2
    assert err.startswith(
        "error: --resume 'out.csv': cannot resume: this results file was written by a different config"
    )
    assert (tmp_path / "out.csv").read_text() == before


def test_the_readme_yaml_example_is_valid(tmp_path, run_cli):
    import re

    from conftest import ROOT

    text = (ROOT / "README.md").read_text()
    example = re.search(
        r"\*\*Ironwood dialect\*\* \(`benchmarks:`\):\n\n```yaml\n(.*?)```", text, re.S
    ).group(1)
    (tmp_path / "readme.yaml").write_text(example)
    code, out, _ = run_cli("validate", "--config", str(tmp_path / "readme.yaml"))
    assert code == 0 and out.endswith(": 21 cases\n")


@pytest.mark.parametrize(
    "path",
    sorted(
        str(p.relative_to(ROOT_DIR)) for p in (ROOT_DIR / "Ironwood" / "configs").rglob("*.yaml")
    )
    + sorted(
        str(p.relative_to(ROOT_DIR))
        for p in (ROOT_DIR / "configs").rglob("*.yaml")
        if not p.name.endswith("suite.yaml")  # suite files list configs: tests/test_tpums.py
    ),
)
def test_every_shipped_config_validates(path, run_cli, monkeypatch):
    monkeypatch.chdir(ROOT_DIR)
    code, out, err = run_cli("validate", "--config", path)
    assert code == 0, err


BOUNDED = {
    "duplicate_key": (
        "benchmarks:\n- benchmark_name: add\nbenchmarks:\n- benchmark_name: gemm\n",
        "config.yaml: line 3: duplicate key 'benchmarks' (lines 1 and 3); YAML would keep only the last",
    ),
    "alias_bomb": (
        "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "benchmarks: [{benchmark_name: add, benchmark_params: [{m: 1, n: 1, seed: *f}]}]\n",
        "config.yaml: (top level): the config expands to more than 1,000,000 values "
        "(YAML aliases re-used many times?)",
    ),
    "deep_nesting": (
        "benchmarks: " + "[" * 200 + "]" * 200 + "\n",
        "config.yaml: (top level): the config nests deeper than 64 levels",
    ),
}


def test_a_huge_file_and_a_device_are_refused_without_reading_them(tmp_path, monkeypatch, run_cli):
    import time

    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "big.yaml", "wb") as f:
        f.truncate(50 << 20)  # 50 MiB, sparse
    t0 = time.process_time()  # CPU seconds: what a neighbour's load cannot stretch
    assert run_cli("run", "--config", "big.yaml")[:3:2] == (
        2,
        "error: big.yaml: the config is 50.0 MiB; the limit is 4 MiB\n",
    )
    assert run_cli("run", "--config", "/dev/zero")[:3:2] == (
        2,
        "error: /dev/zero: not a regular file (a config is a YAML file)\n",
    )
    assert run_cli("run", "--config", str(tmp_path))[0] == 2
    assert run_cli("run", "--config", "")[:3:2] == (
        2,
        "error: --config is empty; name a YAML file\n",
    )
    assert time.process_time() - t0 < 1.0


@pytest.mark.parametrize(
    "setting, dialect",
    [
        ("check: off", "ironwood"),
        ("throttle: off", "ironwood"),
        ("throttle: off", "tpums"),
        ("throttle: off", "jax_bench"),
    ],
)
def test_off_as_yaml_writes_it_is_accepted_wherever_off_is_a_choice(
    setting, dialect, tmp_path, run_cli
):
    """YAML 1.1 reads a bare `off` as false: every setting with an `off` choice takes it as `off`."""
    text = {
        "ironwood": f"benchmarks:\n- benchmark_name: fault\n  {setting}\n",
        "tpums": f"benchmark: {{name: gemm, params: {{{setting}, m: 16}}}}\n",
        "jax_bench": f"global: {{{setting}}}\nbenchmarks:\n- name: simple_add\n",
    }[dialect]
    (tmp_path / "c.yaml").write_text(text)
    code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 0, err


def test_a_threshold_s_error_speaks_of_the_threshold(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  throttle_threshold: 1.5\n"
    )
    code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 2 and "throttle_threshold" in err and "SM clock" in err and "median" not in err


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["--num-runs", "0"],
            "error: argument --num-runs: must be an integer from 1 to 10,000,000, got '0'\n",
        ),
        (
            ["--num-runs", "true"],
            "error: argument --num-runs: must be an integer from 1 to 10,000,000, got 'true'\n",
        ),
        (
            ["--timeout", "-1"],
            "error: argument --timeout: must be a positive number of seconds up to 604800, got -1\n",
        ),
        (
            ["--timeout", "nan"],
            "error: argument --timeout: must be a positive number of seconds up to 604800, got nan\n",
        ),
        (
            ["--max-cases", "0"],
            "error: argument --max-cases: must be an integer from 1 to 1,000,000, got '0'\n",
        ),
        (
            ["--max-dim", "0"],
            "error: argument --max-dim: must be an integer from 1 to 1,099,511,627,776, got '0'\n",
        ),
    ],
)
def test_options_are_validated_like_yaml_values(args, expected, tmp_path, monkeypatch, capsys):
    from accelbench.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("benchmarks:\n- benchmark_name: fault\n")
    with pytest.raises(SystemExit) as info:
        main(["run", "--config", "c.yaml", *args])
    assert info.value.code == 2 and capsys.readouterr().err == expected
    assert files_under(tmp_path) == [tmp_path / "c.yaml"]


def test_report_on_a_foreign_file_writes_nothing(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    code, _, err = run_cli("report", "x.csv", "--output-dir", "rep")
    assert code == 2 and "not a results file" in err and not (tmp_path / "rep").exists()


STRICT = {
    "bool_is_not_a_count": (
        "benchmarks:\n- benchmark_name: add\n  num_runs: true\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].num_runs: must be an integer from 1 to 10,000,000, got True",
    ),
    "empty_backend_list": (
        "backend: []\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].backend: backend list is empty",
    ),
    "nan_range_end": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n"
        "  - {m_range: {start: 1, end: .nan, multiplier: 2}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range.end: must be a finite number, got nan",
    ),
    "inf_range_end": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n"
        "  - {m_range: {start: 1, end: .inf, increase_by: 1}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range.end: must be a finite number, got inf",
    ),
    "endless_range": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n"
        "  - {m_range: {start: 1, end: 1.0e+300, multiplier: 1.0000001}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range: the range has more than 100,000 values",
    ),
    "huge_increase_range": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params:\n"
        "  - {m_range: {start: 1, end: 1000000000000, increase_by: 1}, n: 8}\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range: the range has more than 100,000 values",
    ),
    "zero_cases": (
        "model_params: []\n",
        "config.yaml: (top level): the config expands to zero cases (an empty range or list?)",
    ),
}


def test_repeated_sweep_values_are_one_case(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  benchmark_sweep_params: [{n: [8, 8, 16]}]\n"
        "  benchmark_params: [{n: 8}]\n"
    )
    code, out, _ = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 0 and out.endswith(": 2 cases\n")


MORE = {
    "unknown_timer": (
        "benchmarks:\n- benchmark_name: add\n  timer: cuptii\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].timer: must be one of auto, cuda_events, cuda_graph, cupti, traced_wall, wall, xprof, got 'cuptii' (did you mean 'cupti'?)",
    ),
    "bad_cache": (
        "benchmarks:\n- benchmark_name: add\n  cache: cool\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].cache: must be one of cold, warm, got 'cool' (did you mean 'cold'?)",
    ),
    "bad_cadence": (
        "benchmarks:\n- benchmark_name: add\n  cadence: burst\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].cadence: must be one of blocked, sustained, got 'burst'",
    ),
    "threads_zero": (
        "benchmarks:\n- benchmark_name: add\n  threads: 0\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].threads: must be an integer from 1 to 4,096, got 0",
    ),
    "threads_bool": (
        "threads: true\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: threads: must be an integer from 1 to 4,096, got True",
    ),
    "warmup_negative": (
        "benchmarks:\n- benchmark_name: add\n  warmup: -1\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].warmup: must be an integer from 0 to 10,000,000, got -1",
    ),
    "timeout_negative": (
        "benchmarks:\n- benchmark_name: add\n  timeout_s: -5\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].timeout_s: must be a positive number of seconds up to 604800, got -5",
    ),
    "check_bad": (
        "benchmarks:\n- benchmark_name: add\n  check: strictly\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].check: must be one of strict, flag, off, got 'strictly' (did you mean 'strict'?)",
    ),
    "check_in_params_bad": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, check: maybe}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].check: must be one of strict, flag, off, got 'maybe'",
    ),
    "timer_in_params_bad": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, timer: fast}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].timer: must be one of auto, cuda_events, cuda_graph, cupti, traced_wall, wall, xprof, got 'fast'",
    ),
    "cache_in_params_bad": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, cache: hot}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].cache: must be one of cold, warm, got 'hot'",
    ),
    "threads_in_params_bad": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, threads: many}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].threads: must be an integer from 1 to 4,096, got 'many'",
    ),
    "unknown_implementation": (
        "benchmarks:\n- benchmark_name: add\n  backend: torch\n  implementation: compiled\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].implementation: op 'add' has no torch implementation 'compiled' (registered: eager, compile) (did you mean 'compile'?)",
    ),
    "max_cases_zero": (
        "max_cases: 0\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: max_cases: Input should be greater than 0 (got 0)",
    ),
    "peaks_negative": (
        "peaks: {bf16_tflops: -1}\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: peaks.bf16_tflops: Input should be greater than 0 (got -1)",
    ),
    "peaks_unknown_key": (
        "peaks: {bf16: 900}\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: peaks.bf16: unknown key 'bf16'",
    ),
    "layout_typo": (
        "benchmarks:\n- benchmark_name: gemm\n  benchmark_params: [{m: 8, k: 8, n: 8, layout: nn}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].layout: 'nn' is not one of kn, nk",
    ),
    "qdtype_bad": (
        "benchmarks:\n- benchmark_name: quantization\n  benchmark_params: [{m: 8, n: 8, qdtype: int4}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].qdtype: unknown dtype 'int4' (did you mean 'int8'?)",
    ),
    "sharding_bad": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, sharding: split_n}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].sharding: 'split_n' is not one of none, replicated, split_m (did you mean 'split_m'?)",
    ),
    "seed_float": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, seed: 1.5}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].seed: must be an integer, got 1.5",
    ),
    "range_without_step": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m_range: {start: 8, end: 64}, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range: range needs exactly one of 'multiplier' or 'increase_by'",
    ),
    "range_bool_end": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m_range: {start: 1, end: true, multiplier: 2}, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m_range.end: must be a number, got True",
    ),
    "mapping_without_range_keys": (  # a mapping is a range whatever the key's suffix
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m: {begin: 8, end: 64}, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m.begin: unknown range key 'begin'",
    ),
    "empty_list": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m: [], n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0].m: empty list of values",
    ),
    "plain_and_list": (
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m: 8, m_list: [16], n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_sweep_params[0]: parameter 'm' is given twice (plain and _list/_range)",
    ),
    "torchao_dtype_typo": (
        "model_params:\n  matrix_shapes: [{name: llama}]\n  device: cpu\n  high_precision_dtype: torch.bfloat61\n",
        "config.yaml: model_params[0].high_precision_dtype: unknown dtype 'torch.bfloat61' (did you mean 'bfloat16'?)",
    ),
    "torchao_min_power_bool": (
        "model_params:\n  matrix_shapes: [{name: pow2, min_power: true}]\n",
        "config.yaml: model_params[0].matrix_shapes[0].min_power: Input should be a valid integer (got True)",
    ),
}


def test_one_file_whatever_its_spelling(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out/x.csv\n  benchmark_params: [{n: 8}]\n"
        "- benchmark_name: fault\n  csv_path: ./out/x.csv\n  benchmark_params: [{n: 16}]\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    import csv

    assert sorted(r["n"] for r in csv.DictReader(open(tmp_path / "out" / "x.csv"))) == ["16", "8"]


def test_huge_generator_power_and_a_directory_twin_are_refused_before_running(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "model_params:\n  matrix_shapes: [{name: sweep, min_power: 1, max_power: 1000}]\n"
    )
    code, _, err = run_cli("run", "--config", "t.yaml", "--no-progress")
    assert (code, err) == (
        2,
        "error: t.yaml: model_params[0].matrix_shapes[0].name: max_power 1000 makes "
        "dimensions of 2^1000; the largest allowed is 2^22\n",
    )
    (tmp_path / "out.jsonl").mkdir()
    (tmp_path / "c.yaml").write_text("benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n")
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert (code, err) == (
        2,
        "error: csv_path's .jsonl twin 'out.jsonl': output path is a directory, expected a file\n",
    )
    assert not (tmp_path / "out.csv").exists()


def test_compare_on_a_non_numeric_results_file_is_not_a_traceback(tmp_path, run_cli):
    from test_compare_report import row, write

    write(tmp_path / "a.csv", [row(1, 1e-3)])
    write(
        tmp_path / "b.csv",
        [dict(row(1, 1e-3), time_median_s="fast", time_p10_s="x", time_p90_s="y")],
    )
    code, out, err = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert code in (0, 1) and "Traceback" not in out + err


ONE_LINE = {**BOUNDED, **STRICT, **MORE}


@pytest.fixture
def warm():
    """What every run loads once per process (the catalogue, the timers): timed answers measure the
    answer, not a worker's first import."""
    from accelbench.measure.timers import timer_names

    timer_names()


ADD = "benchmarks:\n- benchmark_name: add\n"
PSUM = "backend: jax\nbenchmarks:\n- benchmark_name: psum\n"
# issue 28: each of these was accepted, hung, or answered with a traceback or a 200 KB line
HOSTILE = {
    "num_runs_1e30": (
        ADD + "  num_runs: 1000000000000000000000000000000\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].num_runs: must be an integer from 1 to 10,000,000, "
        "got 1000000000000000000000000000000",
    ),
    "warmup_1e30_in_params": (
        ADD + "  benchmark_params: [{m: 8, n: 8, warmup: 1000000000000000000000000000000}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].warmup: must be an integer from 0 to "
        "10,000,000, got 1000000000000000000000000000000",
    ),
    "max_cases_1e12": (
        "max_cases: 1000000000000\n" + ADD + "  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: max_cases: Input should be less than or equal to 1000000 (got 1000000000000)",
    ),
    "timeout_inf": (
        ADD + "  timeout_s: .inf\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].timeout_s: must be a positive number of seconds up to 604800, got inf",
    ),
    "timeout_1e300_in_params": (
        ADD + "  benchmark_params: [{m: 8, n: 8, timeout_s: 1.0e+300}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].timeout_s: must be a positive number of "
        "seconds up to 604800, got 1e+300",
    ),
    "threads_1e21": (
        ADD + "  threads: 1000000000000000000000\n  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].threads: must be an integer from 1 to 4,096, "
        "got 1000000000000000000000",
    ),
    "peak_inf": (
        "peaks: {bf16_tflops: .inf}\n" + ADD + "  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: peaks.bf16_tflops: Input should be a finite number (got inf)",
    ),
    "long_value_quoted_short": (
        ADD + "  benchmark_params: [{m: 8, n: 8, dtype: " + "x" * 200_000 + "}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].dtype: unknown dtype '"
        + "x" * 79  # the quote is the word's first character: 80 kept
        + "...(200,002 characters)",
    ),
    "nul_in_csv_path": (
        ADD + '  csv_path: "a\\0b.csv"\n  benchmark_params: [{m: 8, n: 8}]\n',
        "config.yaml: csv_path 'a\\x00b.csv': a path cannot contain a NUL character",
    ),
    "escape_in_csv_path": (
        ADD + '  csv_path: "x\\e[1m.csv"\n  benchmark_params: [{m: 8, n: 8}]\n',
        "config.yaml: csv_path x\\x1b[1m.csv: an output path cannot contain a control character",
    ),
    "trace_dir_under_a_file": (
        ADD + "  trace_dir: config.yaml/traces\n  benchmark_params: [{m: 8, n: 8}]\n",
        "trace_dir 'config.yaml/traces': cannot create the folder: 'config.yaml' is a file",
    ),
    "mesh_shape_not_integers": (
        PSUM + "  benchmark_params: [{matrix_dim: 8, mesh_shape: 'a,b'}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0]: op 'psum': mesh_shape must be positive "
        "integers joined by 'x' (like 2x4), got 'a,b'",
    ),
    "sharding_strategy_not_integers": (
        PSUM + "  benchmark_params: [{matrix_dim: 8, mesh_shape: 2x1, sharding_strategy: x}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0]: op 'psum': sharding_strategy must be "
        "positive integers joined by 'x' (like 2x4), got 'x'",
    ),
    # (a jax-bench mesh_shape that is not integers falls back to one axis of all devices, as upstream
    # does: test_jax_bench_dialect.test_what_upstream_ignores_is_ignored_with_a_warning)
    "mesh_negative": (
        PSUM + "  benchmark_params: [{matrix_dim: 8, ici_size: -2}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0]: op 'psum': ici_size counts devices: "
        "1 or more, got -2",
    ),
    "torchao_group_size_zero": (
        "quantization_config_recipe_names: [int4wo-0]\nmodel_params:\n"
        "- {matrix_shapes: [{name: custom, shapes: [[64, 64, 64]]}], device: cpu}\n",
        "config.yaml: quantization_config_recipe_names[0]: recipe 'int4wo-0': group size 0 is not "
        "one of 32, 64, 128, 256",
    ),
    "torchao_bits_nine": (
        "quantization_config_recipe_names: [uintx-9-64]\nmodel_params:\n"
        "- {matrix_shapes: [{name: custom, shapes: [[64, 64, 64]]}], device: cpu}\n",
        "config.yaml: quantization_config_recipe_names[0]: recipe 'uintx-9-64': weight bits must "
        "be 1..8, got 9",
    ),
    "pow2_with_shapes": (
        "model_params:\n- {matrix_shapes: [{name: pow2, shapes: [[64, 64, 64]]}], device: cpu}\n",
        "config.yaml: model_params[0].matrix_shapes[0].name: 'shapes' is read by the custom "
        "generator only; 'pow2' makes its own (use name: custom, or drop shapes)",
    ),
    # issue 35: what was silently accepted or chosen
    "jax_bench_peak_nan": (
        "hardware: {tflops: .nan}\nbenchmarks: [{name: simple_add, size: 256}]\n",
        "config.yaml: hardware.tflops: must be a finite non-negative number, got nan",
    ),
    "jax_bench_curve_inf": (
        "hardware: {hbm_bw: [[1024, .inf]]}\nbenchmarks: [{name: simple_add, size: 256}]\n",
        "config.yaml: hardware.hbm_bw: must be a finite non-negative number, got inf",
    ),
    "sustained_with_precision": (
        ADD + "  cadence: sustained\n  target_precision: 0.000001\n"
        "  benchmark_params: [{m: 8, n: 8}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].target_precision: target_precision needs one sample per "
        "iteration, and cadence: sustained (collectives run sustained) gives one mean per round: use "
        "cadence: blocked, or drop target_precision",
    ),
    "collective_precision": (
        "benchmarks: [{name: all_reduce, matrix_dim: 8, conditions: strict, target_precision: 0.01}]\n",
        "config.yaml: benchmarks[0].target_precision: target_precision needs one sample per "
        "iteration, and cadence: sustained (collectives run sustained) gives one mean per round: use "
        "cadence: blocked, or drop target_precision",
    ),
    "input_sets_without_rotate": (
        ADD + "  benchmark_params: [{m: 8, n: 8, input_sets: 3}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0].input_sets: input_sets counts the sets "
        "`inputs: rotate` cycles through; add inputs: rotate or drop it",
    ),
    "jax_bench_cap_across_entries": (
        "max_cases: 10\nbenchmarks:\n"
        + "".join(
            f"- {{name: simple_add, sweep: {{size: [{', '.join(str(256 + k) for k in range(6))}]}}}}\n"
            for _ in range(2)
        ),
        "config.yaml: benchmarks[1]: the config expands to more than 10 cases; raise the cap with "
        "--max-cases or 'max_cases:' if this is intended",
    ),
    "source_id_negative": (
        "backend: jax\nbenchmarks:\n- benchmark_name: send_recv\n"
        "  benchmark_params: [{num_elements: 128, source_id: -1}]\n",
        "config.yaml: benchmarks[0].benchmark_params[0]: op 'send_recv': source_id and target_id "
        "are device indices: 0 or more",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_configs_are_one_short_line(name, tmp_path, monkeypatch, run_cli, warm):
    text, expected = HOSTILE[name]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(text)
    code, _, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert (code, err) == (2, f"error: {expected}\n")
    assert len(err) < 700
    assert files_under(tmp_path) == [tmp_path / "config.yaml"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--num-runs", "1" + "0" * 22], "--num-runs: must be an integer from 1 to 10,000,000"),
        (["--max-cases", "1000000000000"], "--max-cases: must be an integer from 1 to 1,000,000"),
        (["--timeout", "inf"], "--timeout: must be a positive number of seconds up to 604800"),
        (["--resume", "--overwrite"], "--resume continues the results file and --overwrite"),
        (["--hw", "ironwood"], "--hw: --hw applies to jax-bench configs"),
        (["--conditions", "strict"], "--conditions: --conditions applies to jax-bench configs"),
        (["--max-cases", "\u0661\u0660"], "--max-cases: must be an integer from 1 to 1,000,000"),
    ],
)
def test_unbounded_or_contradictory_options_are_refused(args, expected, tmp_path, capsys):
    from accelbench.cli import main

    (tmp_path / "config.yaml").write_text(ADD + "  benchmark_params: [{m: 8, n: 8}]\n")
    try:
        code = main(["run", "--config", str(tmp_path / "config.yaml"), *args])
    except SystemExit as stop:  # argparse's own refusals exit from inside the parser
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and expected in err and err.count("\n") == 1


def test_yaml_merge_keys_and_x_anchors_are_read(tmp_path, run_cli):
    (tmp_path / "config.yaml").write_text(
        "x-shape: &shape {m: 8, n: 8}\n"
        + ADD
        + "  benchmark_params: [{<<: *shape, n: 16}, {<<: *shape}]\n"
    )
    code, out, err = run_cli("validate", "--config", str(tmp_path / "config.yaml"))
    assert (code, err) == (0, "") and "2 cases" in out


@pytest.mark.parametrize("name", sorted(ONE_LINE))
def test_more_bad_configs_are_one_exact_line_in_well_under_a_second(
    name, tmp_path, monkeypatch, run_cli, warm
):
    import time

    text, expected = ONE_LINE[name]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(text)
    t0 = time.process_time()  # CPU seconds: what a neighbour's load cannot stretch
    code, _, err = run_cli("run", "--config", "config.yaml", "--no-progress")
    assert time.process_time() - t0 < 1.0
    assert (code, err) == (2, f"error: {expected}\n")
    assert files_under(tmp_path) == [tmp_path / "config.yaml"]


def test_every_schema_key_is_in_the_readme_yaml_reference():
    """The README's YAML reference names every key the schema accepts (earlier spellings included)."""
    import re

    from conftest import ROOT
    from pydantic import BaseModel

    from accelbench.config import schema
    from accelbench.dialects.ironwood import schema as ironwood
    from accelbench.dialects.torchao import schema as torchao

    text = (ROOT / "README.md").read_text()
    reference = text[text.index("## YAML reference") : text.index("## CSV columns")]
    documented = set(re.findall(r"`([a-z_0-9]+)`", reference)) | set(
        re.findall(r"([a-z_0-9]+):", reference)  # keys of the YAML examples
    )
    models = [
        getattr(module, name)
        for module in (schema, ironwood, torchao)
        for name in dir(module)
        if isinstance(getattr(module, name), type)
        and issubclass(getattr(module, name), BaseModel)
        and getattr(module, name).__module__ == module.__name__
    ]
    keys = {k for m in models for k in [*m.model_fields, *getattr(m, "EARLIER_KEYS", ())]}
    assert keys - documented == set()


def test_the_readme_csv_table_is_the_generated_one():
    """The README's column reference is what the row classes generate (every column, every suite)."""
    from conftest import ROOT

    from accelbench.results.column_docs import END, START, markdown

    text = (ROOT / "README.md").read_text()
    section = text[text.index(START) : text.index(END) + len(END)]
    assert section == markdown(), "run: python -m accelbench.results.column_docs --write README.md"


def test_the_readme_settings_table_is_the_generated_one():
    """The README's run settings are what their one declaration generates."""
    from conftest import ROOT

    from accelbench.results.column_docs import SETTINGS_END, SETTINGS_START, settings_markdown

    text = (ROOT / "README.md").read_text()
    section = text[text.index(SETTINGS_START) : text.index(SETTINGS_END) + len(SETTINGS_END)]
    assert section == settings_markdown(), (
        "run: python -m accelbench.results.column_docs --write README.md"
    )


def test_every_run_setting_is_declared_once_and_everything_else_follows():
    """The schemas, the checks, the one-off command line, the jax-bench keys and the README's table
    all come from RunSettings' declarations: each setting is in every one of them."""
    from accelbench.benchmarks.base import OURS
    from accelbench.config.loader import one_off_params
    from accelbench.config.settings import RUN_KEYS
    from accelbench.core.case import declared_settings
    from accelbench.dialects.ironwood.schema import Benchmark, IronwoodConfig
    from accelbench.results.column_docs import settings_markdown

    names = [f.name for f in declared_settings()]
    assert list(RUN_KEYS) == names
    assert set(names) <= set(Benchmark.model_fields) and set(names) <= set(
        IronwoodConfig.model_fields
    )
    assert set(names) <= {p.name for p in one_off_params("add")}
    assert set(names) - {"num_runs", "warmup", "min_duration_s"} <= set(OURS)  # upstream has those
    assert all(f"| `{name}` |" in settings_markdown() for name in names)


@pytest.mark.parametrize(
    "key, value",
    [("num_runs", 0), ("threads", 5000), ("max_time_s", -1), ("cache", "tepid"), ("input_sets", 1)],
)
def test_a_run_setting_is_checked_by_its_rule_wherever_it_is_given(key, value, tmp_path, run_cli):
    """One validator: at the top level, in a block, in a parameter entry and in a jax-bench file's
    `global:` or entry, one mistake reads as one message, at the key that gave it."""
    places = {
        "": f"{key}: {value!r}\n" + ADD + "  benchmark_params: [{m: 8, n: 8}]\n",
        "benchmarks[0].": ADD + f"  {key}: {value!r}\n  benchmark_params: [{{m: 8, n: 8}}]\n",
        "benchmarks[0].benchmark_params[0].": ADD
        + f"  benchmark_params: [{{m: 8, n: 8, {key}: {value!r}}}]\n",
        "global.": f"global: {{{key}: {value!r}}}\nbenchmarks: [{{name: simple_add, size: 8}}]\n",
        "benchmarks[0]..": f"benchmarks: [{{name: simple_add, size: 8, {key}: {value!r}}}]\n",
    }
    messages = set()
    for where, text in places.items():
        (tmp_path / "c.yaml").write_text(text)
        code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
        assert code == 2 and err.count("\n") == 1, (text, err)
        located = f"c.yaml: {where.replace('..', '.')}{key}: "
        assert located in err, (located, err)
        messages.add(err.split(located, 1)[1])
    assert len(messages) == 1, messages


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--run", "all_reduce"],
        ["jax-bench", "--run", "all_reduce"],
        ["tpums", "benchmark", "run", "all_reduce"],
    ],
)
@pytest.mark.parametrize("mesh", ["0x0", "4x0", "0x4", "-1x2"])
def test_a_mesh_axis_of_no_devices_is_one_line_naming_mesh_shape(command, mesh, run_cli):
    code, _, err = run_cli(*command, f"--mesh_shape={mesh}")
    assert code == 2 and len(err.splitlines()) == 1 and "mesh_shape" in err, err
