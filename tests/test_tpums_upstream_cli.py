"""Upstream TPUMS's tests/test_cli.py (at 286dfeb9), one test per case and named after it: the `tpums`
command line as a user types it, the run itself replaced by a recorder of what it was handed (the
planned cases, each with its fields in TPUMS's names, and the run's options)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from accelbench.benchmarks.base import ENUMS, TPUMS, listed

GEMM_FILE = "benchmark:\n  name: gemm\n  params:\n    warmup_tries: 1\n    num_runs: 1\n"


@dataclass
class Handed:
    """What one `tpums` command handed the run, and what it printed."""

    code: int = 0
    cases: list[Any] = field(default_factory=list)
    options: Any = None
    out: str = ""
    err: str = ""

    @property
    def tasks(self) -> list[tuple[str, dict[str, Any]]]:
        """(benchmark, fields) per case, in run order: upstream's `tasks`."""
        from accelbench.dialects.tpums.outputs import given_fields

        return [given_fields(c) for c in self.cases]

    @property
    def traced(self) -> bool:
        return all(c.outputs.trace_dir is not None for c in self.cases)


@pytest.fixture
def tpums(monkeypatch, capsys, tmp_path):
    """Run `tpums ARGS` in-process in tmp_path (where gemm.yaml is); what it handed the run."""
    from accelbench.dialects.tpums.cli import main
    from accelbench.run import session

    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemm.yaml").write_text(GEMM_FILE)
    handed = Handed()

    def recorded(loaded, cases, options):
        handed.cases, handed.options = list(cases), options
        return 0

    monkeypatch.setattr(session, "run_planned", recorded)

    def run(*argv: str) -> Handed:
        try:
            handed.code = main(list(argv))
        except SystemExit as exit_:  # argparse's own help and refusals
            handed.code = int(exit_.code or 0)
        handed.out, handed.err = capsys.readouterr()
        return handed

    return run


def _fields(handed: Handed) -> dict[str, Any]:
    ((_, fields),) = handed.tasks
    return fields


def test_help_menu(tpums):
    seen = tpums("--help")
    assert seen.code == 0 and "usage: tpums" in seen.out
    assert "platform" in seen.out and "benchmark" in seen.out


def test_platform_describe(tpums):
    seen = tpums("platform", "describe")
    data = json.loads(seen.out)
    upstream = {
        "tpu_type",
        "topology",
        "total_devices",
        "local_devices",
        "process_count",
        "process_index",
        "python_version",
        "jax_version",
        "jaxlib_version",
        "libtpu_version",
    }
    assert upstream <= set(data)  # and the device kind and platform, off a TPU too
    assert isinstance(data["total_devices"], int) and isinstance(data["python_version"], str)
    assert data["tpu_type"] is None and data["platform"] == "cpu"  # not a TPU: not guessed


def test_platform_describe_runtime_error_exits(tpums, monkeypatch):
    from accelbench.dialects.tpums import cli

    def broken():
        raise RuntimeError("TPU runtime environment is not properly initialized")

    monkeypatch.setattr(cli, "describe", broken)
    seen = tpums("platform", "describe")
    assert seen.code == 1
    assert "Error: TPU runtime environment is not properly initialized" in seen.err


def test_benchmark_list(tpums):
    tasks = [item["task"] for item in json.loads(tpums("benchmark", "list").out)]
    assert {"gemm", "hbm", "all_reduce", "device_to_device"} <= set(tasks)


def test_benchmark_run_hbm(tpums):
    seen = tpums("benchmark", "run", "hbm", "--num_elements", "134217728", "--dtype", "bfloat16")
    ((name, fields),) = seen.tasks
    assert name == "hbm" and fields["num_elements"] == 134217728 and fields["dtype"] == "bfloat16"


def test_benchmark_run_gemm(tpums):
    fields = _fields(tpums("benchmark", "run", "gemm", "-m", "1024", "-n", "512", "-k", "256"))
    assert (fields["m"], fields["n"], fields["k"]) == (1024, 512, 256)


ENUM_CASES = [
    *(("all_reduce", "reduce_op", v) for v in ENUMS["reduce_op"]),
    *(("hbm", "op_type", v) for v in ENUMS["op_type"]),
    *(("device_to_device", "direction", v) for v in TPUMS["device_to_device"].enums["direction"]),
]


@pytest.mark.parametrize(("task", "name", "value"), ENUM_CASES)
def test_benchmark_run_existing_enum_types(tpums, task, name, value):
    seen = tpums("benchmark", "run", task, f"--{name}", value)
    assert {(resolved, fields[name]) for resolved, fields in seen.tasks} == {(task, value)}


@pytest.mark.parametrize(
    ("task", "flag", "value"),
    [
        ("all_reduce", "--reduce_op", "invalid_op"),
        ("all_reduce", "--reduce_op", "SUM"),
        ("hbm", "--op_type", "invalid_kernel"),
        ("hbm", "--op_type", "SCALE"),
        ("device_to_device", "--direction", "invalid_dir"),
        ("device_to_device", "--direction", "BI"),
    ],
)
def test_benchmark_run_invalid_enum_raises(tpums, task, flag, value):
    seen = tpums("benchmark", "run", task, flag, value)
    assert seen.code == 2 and f"Invalid {flag[2:]} '{value}'" in seen.err and not seen.cases


def test_benchmark_run_gemm_help_excludes_dtype(tpums):
    seen = tpums("benchmark", "run", "gemm", "--help")
    assert seen.code == 0 and "--in_dtype" in seen.out and "--out_dtype" in seen.out
    assert "--dtype " not in seen.out


def test_benchmark_run_config(tpums):
    seen = tpums("benchmark", "run-config", "gemm.yaml", "--output_dir", "test_out")
    assert seen.code == 0 and seen.options.output_dir == "test_out" and seen.cases


def test_benchmark_run_config_with_unknown_flags(tpums):
    seen = tpums(
        "benchmark", "run-config", "gemm.yaml", "--output_dir", "o", "--deepsea_wrap=1",
        "--unknown_flag=foo",
    )  # fmt: skip
    assert seen.code == 0 and seen.cases
    assert "ignored" in seen.err and "--deepsea_wrap=1 --unknown_flag=foo" in seen.err


def test_benchmark_run_config_with_xla_flags_file_path(tpums, tmp_path):
    (tmp_path / "op_flags.yaml").write_text("gemm: [--xla_tpu_custom=1]\n")
    seen = tpums("benchmark", "run-config", "gemm.yaml", "--xla_flags_file_path", "op_flags.yaml")
    assert "--xla_tpu_custom=1" in dict(seen.cases[0].process_env)["LIBTPU_INIT_ARGS"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("{name: gemm, params: {warmup_tries: -1}}", "warmup_tries must be >= 0"),
        ("{name: all_reduce, params: {matrix_dim: 0}}", "matrix_dim must be >= 1"),
    ],
    ids=["negative_warmup_tries", "zero_matrix_dim"],
)
def test_benchmark_run_config_out_of_bounds_validation_raises(tpums, tmp_path, params, message):
    (tmp_path / "c.yaml").write_text(f"benchmark: {params}\n")
    seen = tpums("benchmark", "run-config", "c.yaml")
    assert seen.code == 2 and message in seen.err and not seen.cases


@pytest.mark.parametrize(
    ("task", "name", "value"),
    [
        ("all_reduce", "reduce_op", "invalid_op"),
        ("all_reduce", "reduce_op", "SUM"),
        ("hbm", "op_type", "invalid_kernel"),
        ("hbm", "op_type", "SCALE"),
        ("device_to_device", "direction", "invalid_direction"),
        ("device_to_device", "direction", "BI"),
        ("attention_flashed", "mode", "invalid_mode"),
        ("attention_flashed", "mode", "FWD"),
    ],
)
def test_benchmark_run_config_invalid_enum_raises(tpums, tmp_path, task, name, value):
    (tmp_path / "c.yaml").write_text(f"benchmark: {{name: {task}, params: {{{name}: {value}}}}}\n")
    seen = tpums("benchmark", "run-config", "c.yaml")
    assert seen.code == 2 and f"Invalid {name} '{value}'" in seen.err


@pytest.mark.parametrize(
    ("task", "name", "value"),
    [*ENUM_CASES, *(("attention_flashed", "mode", v) for v in ENUMS["mode"])],
)
def test_benchmark_run_config_existing_enum_types(tpums, tmp_path, task, name, value):
    (tmp_path / "c.yaml").write_text(f"benchmark: {{name: {task}, params: {{{name}: {value}}}}}\n")
    seen = tpums("benchmark", "run-config", "c.yaml")
    assert seen.code == 0, seen.err
    resolved, fields = seen.tasks[0]
    assert resolved == task and fields[name] == value


def test_benchmark_run_with_common_flags(tpums):
    seen = tpums(
        "benchmark", "run", "gemm", "--output_dir", "/tmp/custom_results", "--xprof_dir",
        "/tmp/custom_profile", "--xprof_timing", "-m", "128", "-n", "128", "-k", "128",
    )  # fmt: skip
    assert seen.options.output_dir == "/tmp/custom_results" and seen.traced
    assert seen.cases[0].outputs.trace_dir == "/tmp/custom_profile"


def test_benchmark_run_without_xprof_timing(tpums):
    seen = tpums("benchmark", "run", "gemm", "-m", "128", "-n", "128", "-k", "128")
    assert not any(c.outputs.trace_dir for c in seen.cases)
    assert seen.cases[0].origin.fields.as_dict()["xprof_dir"] == "/tmp/tensorboard"


@pytest.mark.parametrize(
    ("root", "extra", "traced"),
    [
        ("  xprof_timing: true\n", [], True),
        ("  xprof_timing: false\n", [], False),
        ("", [], False),
        ("", ["--xprof_timing"], False),
    ],
    ids=["yaml_xprof_true", "yaml_xprof_false", "yaml_xprof_omitted", "cli_flag_ignored"],
)
def test_benchmark_run_config_xprof_timing(tpums, tmp_path, root, extra, traced):
    (tmp_path / "c.yaml").write_text(GEMM_FILE.replace("  params:", root + "  params:"))
    seen = tpums("benchmark", "run-config", "c.yaml", *extra)
    assert seen.code == 0 and seen.traced is traced


def test_benchmark_run_xprof_timing_enabled(tpums):
    assert tpums("benchmark", "run", "gemm", "--xprof_timing").traced


def test_benchmark_run_xprof_timing_default(tpums):
    assert not tpums("benchmark", "run", "gemm").cases[0].outputs.trace_dir


def test_google_flags_parser(tpums):
    """A launcher's own flags before, between and after the command are passed over (said)."""
    seen = tpums("--alsologtostderr", "benchmark", "run-config", "gemm.yaml", "--hw=gfl_2x2x1")
    assert seen.code == 0 and seen.cases and "--hw=gfl_2x2x1" in seen.err


def test_main_invokes_app_run():
    """The `tpums` console script runs the dialect's command line by its name, as `microbench tpums`
    does: one entry point, the script's name picking the command."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "tpums"]
    assert script.value == "accelbench.entry:dialect_command"


def test_benchmark_run_help_lists_tasks(tpums):
    seen = tpums("benchmark", "run", "--help")
    assert seen.code == 0 and "Supported Tasks" in seen.out
    assert all(task in seen.out for task in ("gemm", "all_reduce", "hbm"))


@pytest.mark.parametrize("task", listed())
def test_benchmark_run_help_all_registered_tasks(tpums, task):
    seen = tpums("benchmark", "run", task, "--help")
    assert seen.code == 0 and f"usage: tpums benchmark run {task}" in seen.out
    assert f"{TPUMS[task].config_name} parameters:" in seen.out
    for p in TPUMS[task].fields:
        assert f"--{p.name}" in seen.out and p.doc
        assert " ".join(p.doc.split()[:2]) in " ".join(seen.out.split())


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("false", False), ("True", True), ("=true", True)],
    ids=["true", "false", "mixed_case", "equals_form"],
)
def test_benchmark_run_boolean_flag(tpums, value, expected):
    argv = ["--transpose_a" + value] if value.startswith("=") else ["--transpose_a", value]
    assert _fields(tpums("benchmark", "run", "gemm", *argv))["transpose_a"] is expected


@pytest.mark.parametrize(
    "extra",
    [["--transpose_a", "maybe"], ["--transpose_a", "yes"], ["--transpose_a"]],
    ids=["invalid_token", "legacy_yes_token", "bare_flag"],
)
def test_benchmark_run_boolean_flag_rejected_values(tpums, extra):
    seen = tpums("benchmark", "run", "gemm", *extra)
    assert seen.code == 2 and "--transpose_a" in seen.err and not seen.cases


def test_benchmark_run_boolean_flag_defaults(tpums):
    fields = _fields(tpums("benchmark", "run", "gemm"))
    assert fields["transpose_a"] is False and fields["transpose_b"] is False


def test_boolean_flag_accepts_multiple_values():
    from accelbench.dialects.tpums.cli import benchmark_parser

    options = benchmark_parser("gemm").parse_args(["--transpose_a", "true", "false"])
    assert options.field_transpose_a == [True, False]


def test_benchmark_run_boolean_flag_help(tpums):
    out = tpums("benchmark", "run", "gemm", "--help").out
    assert "--transpose_a {true,false}" in out and "(default: False)" in out
    assert "--no-transpose_a" not in out


def test_invalid_command_exits(tpums):
    assert tpums("invalid_command").code == 2


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["gemm", "-m", "512"], [{"m": 512}]),
        (
            ["gemm", "-m", "1024", "2048", "-n", "512", "1024", "--transpose_a", "true", "false"],
            [
                {"m": m, "n": n, "transpose_a": t}
                for m in (1024, 2048)
                for n in (512, 1024)
                for t in (True, False)
            ],
        ),
        (
            ["all_reduce", "--reduce_op", "sum", "max", "--matrix_dim", "1024", "2048"],
            [{"matrix_dim": d, "reduce_op": o} for d in (1024, 2048) for o in ("sum", "max")],
        ),
        (
            ["device_to_device", "--direction", "uni", "bi", "--data_size_mib", "512", "1024"],
            [{"data_size_mib": s, "direction": d} for s in (512, 1024) for d in ("uni", "bi")],
        ),
        (
            ["hbm", "--num_elements", "1024", "2048", "--dtype", "bfloat16", "float32"],
            [
                {"dtype": d, "num_elements": n}
                for d in ("bfloat16", "float32")
                for n in (1024, 2048)
            ],
        ),
    ],
    ids=[
        "single_combination",
        "gemm_int_and_bool_sweep",
        "all_reduce_int_and_enum_sweep",
        "device_to_device_int_and_enum_sweep",
        "hbm_int_and_str_sweep",
    ],
)
def test_benchmark_run_parameter_sweep(tpums, argv, expected):
    """The product runs in the benchmark's field order, whatever order the flags came in. A
    device_to_device point runs every ordered pair of devices, as TPUMS expands it."""
    seen = tpums("benchmark", "run", *argv)
    assert seen.code == 0, seen.err
    points = [tuple((k, fields[k]) for k in expected[0]) for _, fields in seen.tasks]
    assert [dict(p) for p in dict.fromkeys(points)] == expected


def test_benchmark_run_sweep_validates_bounds_on_all_combinations(tpums):
    seen = tpums("benchmark", "run", "gemm", "-m", "1024", "0")
    assert seen.code == 2 and "m must be >= 1" in seen.err and not seen.cases


def test_benchmark_run_config_with_xprof_device_mode(tpums, tmp_path):
    (tmp_path / "c.yaml").write_text(
        "benchmark:\n  name: gemm_throttling\n  xprof_timing: true\n"
        "  xprof_device_mode: max_device\n  params:\n    warmup_tries: 1\n    min_duration_s: 1.0\n"
    )
    seen = tpums("benchmark", "run-config", "c.yaml")
    assert seen.code == 0, seen.err
    assert seen.cases[0].run.xprof_device_mode == "max_device"


def test_benchmark_run_xprof_device_mode(tpums):
    seen = tpums("benchmark", "run", "gemm", "--xprof_device_mode=max_device")
    assert seen.cases[0].run.xprof_device_mode == "max_device"
