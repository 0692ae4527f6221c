"""Command-line conventions: --version, JSON listings, a config's cases, --only/--skip."""

import csv
import json
import re
import subprocess

from conftest import ROOT

from accelbench import __version__
from accelbench.catalogue import all_specs


def test_version(run_cli, capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        run_cli("--version")
    said = capsys.readouterr().out.strip()  # the version and the commit it was built from
    assert info.value.code == 0 and re.fullmatch(rf"microbench {__version__} \(commit \w+\)", said)


def test_list_json_names_every_op_with_its_parameters(run_cli):
    code, out, _ = run_cli("list", "--json")
    records = json.loads(out)
    offered = {name for name, spec in all_specs().items() if not spec.traits.internal}
    assert code == 0 and {r["op"] for r in records} == offered and "fault" not in offered
    quant = next(r for r in records if r["op"] == "quantization")
    qdtype = next(p for p in quant["params"] if p["name"] == "qdtype")
    assert qdtype["aliases"] == ["quant_dtype"] and "float4_e2m1fn" in qdtype["choices"]


def test_validate_lists_the_expanded_cases(write_yaml, run_cli):
    path = write_yaml(
        "benchmarks:\n- benchmark_name: add\n  benchmark_sweep_params: [{m: [8, 16], n: 8}]\n"
    )
    code, out, _ = run_cli("validate", "--config", str(path), "--json")
    cases = json.loads(out)
    assert code == 0 and [c["params"]["m"] for c in cases] == [8, 16]
    assert all(c["op"] == "add" and c["backend"] == "jax" for c in cases)
    code, out, _ = run_cli("validate", "--config", str(path), "--list")
    assert code == 0 and "2 cases" in out


def test_only_and_skip_select_cases_by_op_or_label(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"""
        num_runs: 2
        benchmarks:
        - benchmark_name: add
          csv_path: {tmp_path}/o.csv
          benchmark_sweep_params: [{{m: [8, 16], n: 8}}]
        - benchmark_name: quantization
          csv_path: {tmp_path}/o.csv
          benchmark_params: [{{m: 8, n: 8}}]
        """
    )
    code, _, _ = run_cli(
        "run", "--config", str(path), "--no-progress", "--only", "add*", "--skip", "*-16x8-*"
    )
    rows = list(csv.DictReader(open(tmp_path / "o.csv")))
    assert code == 0 and [(r["op"], r["m"]) for r in rows] == [("add", "8")]
    code, _, err = run_cli("run", "--config", str(path), "--no-progress", "--only", "nothing*")
    assert code == 2 and err.count("\n") == 1 and "leave none of 3 cases" in err


def test_rows_record_packages_flags_and_whether_the_tree_was_dirty(
    tmp_path, write_yaml, run_cli, monkeypatch
):
    from accelbench.platform import environment

    environment.installed.cache_clear()
    monkeypatch.setenv("LIBTPU_INIT_ARGS", "--xla_tpu_example=true")
    path = write_yaml(
        f"num_runs: 2\nbenchmarks:\n- benchmark_name: add\n  csv_path: {tmp_path}/o.csv\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, _, _ = run_cli("run", "--config", str(path), "--no-progress")
    (row,) = list(csv.DictReader(open(tmp_path / "o.csv")))
    assert code == 0
    assert "jax=" in row["packages"] and "numpy=" in row["packages"]
    assert "LIBTPU_INIT_ARGS=--xla_tpu_example=true" in row["env_flags"]
    # a checkout without .git (a tarball, an sdist) has no tree to call dirty: the cell is empty
    in_git = subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode == 0
    assert row["git_dirty"] in (("true", "false", "True", "False") if in_git else ("",))
    assert int(row["host_cpu_count"]) >= 1


def test_output_dir_overridden_by_the_config_says_so(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"num_runs: 2\nbenchmarks:\n- benchmark_name: add\n  csv_path: {tmp_path}/mine.csv\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, _, err = run_cli(
        "run", "--config", str(path), "--no-progress", "--output-dir", str(tmp_path / "elsewhere")
    )
    assert code == 0 and "does not apply where the config names csv_path" in err
    assert (tmp_path / "mine.csv").exists() and not (tmp_path / "elsewhere").exists()


def test_output_puts_every_row_in_one_file_and_says_what_it_replaces(
    tmp_path, write_yaml, run_cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    path = write_yaml(
        f"num_runs: 2\nbenchmarks:\n- benchmark_name: add\n  csv_path: {tmp_path}/mine.csv\n"
        "  benchmark_params: [{m: 8, n: 8}]\n- benchmark_name: add\n  benchmark_params: [{m: 16, n: 8}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress", "-o", "all.csv")
    assert code == 0 and f"the config's result files ({tmp_path}/mine.csv) are not written" in err
    rows = list(csv.DictReader(open(tmp_path / "all.csv")))
    assert [r["m"] for r in rows] == ["8", "16"] and (tmp_path / "all.jsonl").exists()
    assert not (tmp_path / "mine.csv").exists() and not (tmp_path / "results").exists()
    code, _, err = run_cli("run", "--config", str(path), "-o", "b.csv", "--output-dir", "d")
    assert code == 2 and err.strip().endswith(
        "--output and --output-dir both place the rows; give one"
    )
    (tmp_path / "folder").mkdir()
    for no_file in ("d/", "", "folder"):  # a folder's name or none: refused, not a file named d
        code, _, err = run_cli("run", "--config", str(path), "-o", no_file)
        assert code == 2 and err.strip().endswith(
            "names no file: -o takes a results CSV (--output-dir a folder)"
        )
        assert not (tmp_path / "d").exists() and not (tmp_path / "results").exists()


def test_the_default_job_ships_inside_the_package():
    """A wheel install has no configs/ folder: the default config is package data, which
    configs/quickstart.yaml links to (scripts/wheel_check.sh runs it from a built wheel)."""
    from pathlib import Path

    import accelbench
    from accelbench.run.store_commands import QUICKSTART

    package = Path(accelbench.__file__).resolve().parent
    assert Path(QUICKSTART).resolve().is_relative_to(package) and Path(QUICKSTART).is_file()
    repo_copy = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
    assert repo_copy.resolve() == Path(QUICKSTART).resolve()


def test_quiet_prints_only_the_count_and_verbose_a_line_per_case(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"num_runs: 2\nbenchmarks:\n- benchmark_name: add\n  csv_path: {tmp_path}/o.csv\n"
        "  benchmark_sweep_params: [{m: [8, 16], n: 8}]\n"
    )
    code, out, err = run_cli("run", "--config", str(path), "-q")
    assert code == 0 and out == "" and err.strip() == "2 ok, 0 failed, 0 unsupported"
    code, out, err = run_cli("run", "--config", str(path), "-v", "--overwrite", "--no-progress")
    lines = [line for line in (out + err).splitlines() if line.startswith("ok ")]
    # a time in whatever unit it reads (a loaded machine stretches a µs add to ms), then its timer
    assert code == 0 and len(lines) == 2
    assert all(re.search(r"\d (ns|µs|ms|s) wall_clock", line) for line in lines)
    import pytest

    with pytest.raises(SystemExit) as info:  # the parser's one-line error, exit 2
        run_cli("run", "--config", str(path), "-q", "-v")
    assert info.value.code == 2


def test_the_summary_table_names_what_tells_rows_apart():
    """The params column: what is away from its declared default (in any row of its op, backend and
    shape), never a path, never a default the user did not give (trial findings 2 and 10)."""
    from accelbench.catalogue import get_spec
    from accelbench.results.console import distinguishing
    from accelbench.results.records import Identity, Row

    def row(op, backend, implementation="", **params):
        identity = Identity(op=op, backend=backend, implementation=implementation)
        return Row(identity=identity, params=get_spec(op).typed(**params))

    gemm = {"m": 8, "k": 8, "n": 8}
    torchao = {"m": 8, "k": 8, "n": 8, "output_dir": "results/x/torchao"}
    rows = [
        row("gemm_simple", "torch", "eager", layout="kn", **gemm),
        row("gemm_simple", "torch", "compile", layout="kn", **gemm),
        row("gemm_simple", "torch", "eager", layout="nk", **gemm),
        row("gemm_simple", "jax", "jit", layout="kn", seed=0, **gemm),
        row("gemm_simple", "jax", "jit", layout="kn", seed=3, **{**gemm, "m": 16}),
        row("torchao_inference", "torch", "eager", recipe="int8wo", **torchao),
        row("callable", "jax", "jit", name="my_kernel"),  # bench(): no flops, bytes or dtype given
        row("callable", "jax", "jit", name="other", flops=2e9, dtype="float32"),
    ]
    assert distinguishing(rows) == [
        "layout=kn",  # the implementation is in the backend column (torch:eager)
        "layout=kn",  # a default beside a row away from it says what it is
        "layout=nk",
        "",  # alone in its (op, backend, shape) group, at every default: nothing to say
        "seed=3",
        "recipe=int8wo",  # device=cuda, compile_mode=off: defaults; output_dir: a path
        "",  # flops=0.0 bytes=0.0 dtype=bfloat16 were never given
        "flops=2000000000.0 dtype=float32",
    ]


def test_gpu_clocks_at_start_are_read_per_gpu_where_nvml_answers(monkeypatch):
    import sys
    import types

    from accelbench.platform.environment import gpu_clocks

    fake = types.SimpleNamespace(
        NVML_CLOCK_SM=0,
        NVML_CLOCK_MEM=1,
        nvmlInit=lambda: None,
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetClockInfo=lambda h, kind: (1980 - 100 * h) if kind == 0 else 3201,
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert gpu_clocks() == "0:sm=1980,mem=3201 1:sm=1880,mem=3201"
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: blank, never a failure
    assert gpu_clocks() == ""


def test_every_numeric_column_ends_in_its_unit():
    """Core groups and every op's declared extras: a number's column names its unit (issue 17)."""
    import dataclasses
    import typing

    from accelbench.results import records
    from accelbench.results.columns import UNIT_SUFFIXES

    classes = {*records.HEAD_GROUPS, *records.BODY_GROUPS, *records.TAIL_GROUPS}
    classes |= {s.row_extras for s in all_specs().values() if s.row_extras is not None}
    unitless = []
    for cls in classes:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            kinds = set(typing.get_args(hints[f.name])) or {hints[f.name]}
            if kinds & {int, float} and not f.name.endswith(tuple(UNIT_SUFFIXES)):
                unitless.append(f"{cls.__name__}.{f.name}")
    assert unitless == []


def test_files_of_the_earlier_naming_are_read_in_todays_names_and_units(tmp_path):
    """compare, report and bench/ read old result files: renamed columns, values converted."""
    from accelbench.results.columns import upgrade
    from accelbench.results.reading import read_rows

    old = {
        "case_id": "c1",
        "samples": "10",
        "gbps": "250.5",
        "baseline_eager_ms": "1.5",
        "quantized_peak_memory_mb": "2",
        "dominant_kernel_share": "0.25",
        "time_ms": "0.9",
        "m": "64",
    }
    assert upgrade(old) == {
        "case_id": "c1",
        "sample_count": "10",
        "gb_per_s": "250.5",
        "baseline_eager_s": "0.0015",
        "quantized_peak_memory_bytes": str(2 * 2**20),
        "dominant_kernel_pct": "25",
        "m": "64",
    }  # time_ms was a duplicate of time_median_s: dropped
    # compute rows had devices_used, collective rows devices
    mixed = [
        {"samples": "3", "devices_used": "", "devices": "8"},
        {"samples": "3", "devices_used": "2", "devices": ""},
    ]
    assert [upgrade(r)["used_device_count"] for r in mixed] == ["8", "2"]
    new = {"case_id": "c1", "sample_count": "10", "gb_per_s": "250.5"}
    assert upgrade(new) == new
    # a whole file of the earlier naming reads back typed, in today's names and units
    path = tmp_path / "old.csv"
    path.write_text(
        "case_id,run_id,timestamp,status,error,suite,benchmark,op,backend,implementation,label,m,n,"
        "time_median_s,samples,gbps,threads\nc1,r,t,ok,,compute,add,add,jax,jit,l,64,64,1e-06,10,250.5,2\n"
    )
    (row,) = read_rows(str(path))
    assert (row.params.m, row.params.n) == (64, 64) and row.stats.sample_count == 10
    assert row.derived.gb_per_s == 250.5 and row.conditions.thread_count == 2


def test_every_command_and_option_says_what_it_does_with_an_example():
    import argparse

    from accelbench.cli import COMMANDS, build_parser

    parser = build_parser()
    top = parser.format_help()
    assert all(name in top for name in COMMANDS)  # the top-level help names every command
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        assert "Example: microbench" in command.description, name
        undocumented = [
            a.option_strings or a.dest
            for a in command._actions
            if a.help in (None, "") and not isinstance(a, argparse._HelpAction)
        ]
        assert undocumented == [], (name, undocumented)
