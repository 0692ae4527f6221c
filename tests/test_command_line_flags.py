"""Every flag of every command line, through that command line: each spelling of each option of
`microbench run` (the flags the dialects and output formats own included), its `dashboard` shorthand,
`jax-bench` and `tpums`, given a value, reaches what runs (the planned cases and the run's options,
caught where the session would start). A flag added to a parser without a row here fails the
completeness tests."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from accelbench.benchmarks.flags import CONDITIONS, HW, STRICT_LAYOUT, XPROF_DIR
from accelbench.dialects.torchao.runner import DASHBOARD, TORCHAO_CSV
from accelbench.results.sinks.seed_json import SEED_JSON

ADD = "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}, {m: 16, n: 16}]\n"
JAX_BENCH = (
    "benchmarks: [{name: simple_add, size: 64, xprof_timing: true, system: ''}]\n"
    "global: {num_runs: 2}\n"
)
TORCHAO = (
    "quantization_config_recipe_names: [baseline]\n"
    "model_params: [{matrix_shapes: [{name: custom, shapes: [[16, 16, 16]]}], device: cpu}]\n"
)
TPUMS = "benchmark:\n  name: gemm\n  params: {m: 16, k: 16, n: 16, in_dtype: float32}\n"
FLAGS_FILE = "gemm: [--xla_tpu_example=1]\n"


@dataclass
class Seen:
    """What a command line handed the session (or the launcher, or the job's join)."""

    cases: list[Any]
    options: Any
    loaded: Any = None
    launched: Any = None
    joined: Any = None
    code: int = 0
    out: str = ""
    err: str = ""


@pytest.fixture
def caught(tmp_path, monkeypatch, capsys):
    """Run a command line in-process in tmp_path with the config files above; what it planned."""
    from accelbench.run import session

    monkeypatch.chdir(tmp_path)
    for name, text in (
        ("add.yaml", ADD),
        ("jb.yaml", JAX_BENCH),
        ("ao.yaml", TORCHAO),
        ("tp.yaml", TPUMS),
        ("flags.yaml", FLAGS_FILE),
        ("suite.yaml", "suite_name: s\ndescription: d\nconfigs: [tp.yaml]\n"),
    ):
        (tmp_path / name).write_text(text)
    seen: list[Seen] = []

    def planned(loaded, cases, options):
        seen.append(Seen(list(cases), options, loaded))
        return session.RunOutcome(0)

    monkeypatch.setattr(session, "run_and_tell", planned)
    import accelbench.jax_backend.distributed as distributed
    import accelbench.run.launch as launch

    monkeypatch.setattr(
        launch, "launch_local", lambda argv, n, plan: seen.append(Seen([], None, launched=n)) or 0
    )
    monkeypatch.setattr(
        distributed, "initialize", lambda *given: seen.append(Seen([], None, joined=given))
    )

    def run(main: Callable[[list[str]], int], *argv: str) -> Seen:
        seen.clear()
        code = main(list(argv))
        out = capsys.readouterr()
        assert code == 0, out.err
        found = seen[-1] if seen else Seen([], None)
        found.code, found.out, found.err = code, out.out, out.err
        found.joined = next((s.joined for s in seen if s.joined is not None), None)
        found.launched = next((s.launched for s in seen if s.launched is not None), None)
        return found

    return run


def _microbench(argv: list[str]) -> int:
    from accelbench.cli import main

    return main(argv)


def _jax_bench(argv: list[str]) -> int:
    from accelbench.dialects.jax_bench.cli import run

    return run(argv)


def _tpums(argv: list[str]) -> int:
    from accelbench.dialects.tpums.cli import run

    return run(argv)


@dataclass(frozen=True)
class Row:
    """One option of a command line: the arguments around it (`{}` is where its spelling goes, with
    `value` after it unless it is a switch), and what must then hold of what was planned."""

    args: tuple[str, ...]
    value: str | None
    holds: Callable[[Seen], bool]


def _csv(seen: Seen) -> set[str]:
    return {os.path.basename(c.outputs.csv_path) for c in seen.cases}


# options of `run` and its `dashboard` shorthand alike: what holds does not depend on the config
SHARED: dict[str, tuple[str | None, Callable[[Seen], bool]]] = {
    "columns": ("median,min", lambda s: s.options.columns == ("median", "min")),
    "sort": ("median", lambda s: s.options.sort == "median"),
    "output_format": ("csv", lambda s: s.options.output_format == "csv"),
    "output_dir": ("d", lambda s: s.cases[0].outputs.csv_path.startswith("d" + os.sep)),
    "resume": (None, lambda s: s.options.resume),
    "overwrite": (None, lambda s: s.options.overwrite),
    "audit": ("strict", lambda s: {c.run.audit for c in s.cases} == {"strict"}),
    "max_cases": ("5", lambda s: s.options.max_cases == 5),
    "num_runs": ("3", lambda s: {c.run.num_runs for c in s.cases} == {3}),
    "isolate": (None, lambda s: s.options.isolate),
    "timeout": ("5", lambda s: s.options.timeout_s == 5),
    "no_progress": (None, lambda s: not s.options.progress),
    "quiet": (None, lambda s: s.options.verbosity == -1),
    "verbose": (None, lambda s: s.options.verbosity == 1),
    "multihost": (None, lambda s: s.joined == (None, None, None)),
    "coordinator": ("localhost:1", lambda s: s.joined[0] == "localhost:1"),
    "num_processes": ("2", lambda s: s.joined[1] == 2),
    "process_id": ("0", lambda s: s.joined[2] == 0),
    "processes": ("2", lambda s: s.launched == 2),
    TORCHAO_CSV.dest: (None, lambda s: s.options.flag(TORCHAO_CSV)),
}


# what every command line that runs takes: --resume, --overwrite and the run settings declared options
RUN_FILES = {dest: SHARED[dest] for dest in ("resume", "overwrite", "audit")}


def _shared(*before: str) -> dict[str, Row]:
    return {dest: Row((*before, "{}"), value, holds) for dest, (value, holds) in SHARED.items()}


RUN: dict[str, Row] = {
    **_shared("run", "--config", "add.yaml"),
    "config": Row(("run", "{}"), "add.yaml", lambda s: s.loaded.path == "add.yaml"),
    "run": Row(("run", "{}", "--m", "8", "--n", "8"), "add", lambda s: s.cases[0].op == "add"),
    "backend": Row(
        ("run", "--config", "add.yaml", "{}"), "torch", lambda s: s.cases[0].backend == "torch"
    ),
    "name": Row(("run", "--config", "add.yaml", "{}"), "base", lambda s: s.options.name == "base"),
    "output": Row(("run", "--config", "add.yaml", "{}"), "x.csv", lambda s: _csv(s) == {"x.csv"}),
    "max_dim": Row(
        ("run", "--config", "add.yaml", "{}"),
        "4",
        lambda s: len(s.cases) == 1 and s.cases[0].params.m == 4,
    ),
    "only": Row(
        ("run", "--config", "add.yaml", "{}"),
        "*16x16*",
        lambda s: [c.params.m for c in s.cases] == [16],
    ),
    "skip": Row(
        ("run", "--config", "add.yaml", "{}"),
        "*16x16*",
        lambda s: [c.params.m for c in s.cases] == [8],
    ),
    XPROF_DIR.dest: Row(
        ("run", "--config", "jb.yaml", "{}"), "tr", lambda s: s.cases[0].outputs.trace_dir == "tr"
    ),
    HW.dest: Row(
        ("run", "--config", "jb.yaml", "{}"), "ironwood", lambda s: s.options.flag(HW) == "ironwood"
    ),
    CONDITIONS.dest: Row(
        ("run", "--config", "jb.yaml", "{}"),
        "strict",
        lambda s: s.cases[0].origin.conditions == "strict",
    ),
    "output_path": Row(
        ("run", "--config", "add.yaml", "{}"),
        "p",
        lambda s: s.cases[0].outputs.trace_dir == os.path.join("p", "add", "trace"),
    ),
    SEED_JSON.dest: Row(
        ("run", "--config", "add.yaml", "{}"),
        "s.json",
        lambda s: s.options.flag(SEED_JSON) == "s.json",
    ),
    TORCHAO_CSV.dest: Row(
        ("run", "--config", "ao.yaml", "{}"), None, lambda s: s.options.flag(TORCHAO_CSV)
    ),
    DASHBOARD.dest: Row(
        ("run", "--config", "ao.yaml", "{}"),
        "r.json",
        lambda s: s.options.flag(DASHBOARD) == "r.json",
    ),
    STRICT_LAYOUT.dest: Row(
        ("run", "--config", "tp.yaml", "{}"), None, lambda s: s.options.flag(STRICT_LAYOUT)
    ),
}
# `dashboard` is `run` of a torchao config with its records' file required (spelt --output)
DASHBOARD_ROWS: dict[str, Row] = {
    **_shared("dashboard", "--output", "r.json", "--config", "ao.yaml"),
    "config": Row(
        ("dashboard", "--output", "r.json", "{}"), "ao.yaml", lambda s: s.loaded.path == "ao.yaml"
    ),
    DASHBOARD.dest: Row(
        ("dashboard", "--config", "ao.yaml", "{}"),
        "r.json",
        lambda s: s.options.flag(DASHBOARD) == "r.json",
    ),
    "max_dim": Row(
        ("dashboard", "--output", "r.json", "--config", "ao.yaml", "{}"),
        "8",
        lambda s: s.options.max_dim == 8,
    ),
    "only": Row(
        ("dashboard", "--output", "r.json", "--config", "ao.yaml", "{}"),
        "torchao*",
        lambda s: len(s.cases) >= 1,
    ),
    "skip": Row(
        ("dashboard", "--output", "r.json", "--config", "ao.yaml", "{}"),
        "nothing*",
        lambda s: len(s.cases) >= 1,
    ),
}
JAX_BENCH_ROWS: dict[str, Row] = {
    "config": Row(
        ("{}",), "jb.yaml", lambda s: s.loaded.path == "jb.yaml" and s.options.flag(HW) is None
    ),
    "run": Row(
        ("{}", "simple_add", "--size", "64"), None, lambda s: s.cases[0].benchmark == "simple_add"
    ),
    "output": Row(("--config", "jb.yaml", "{}"), "out", lambda s: s.options.output_dir == "out"),
    HW.dest: Row(
        ("--config", "jb.yaml", "{}"), "ironwood", lambda s: s.options.flag(HW) == "ironwood"
    ),
    XPROF_DIR.dest: Row(
        ("--run", "simple_add", "--size", "64", "{}"),
        "tr",
        lambda s: s.cases[0].outputs.trace_dir == "tr",
    ),
    CONDITIONS.dest: Row(
        ("--config", "jb.yaml", "{}"), "strict", lambda s: s.cases[0].origin.conditions == "strict"
    ),
    **{
        dest: Row(("--config", "jb.yaml", "{}"), value, holds)
        for dest, (value, holds) in RUN_FILES.items()
    },
}
TPUMS_ROWS: dict[tuple[str, ...], Row] = {
    ("benchmark", "run", "xprof_timing"): Row(
        ("benchmark", "run", "gemm", "--m", "16", "{}"),
        None,
        lambda s: s.cases[0].outputs.trace_dir is not None,
    ),
    ("benchmark", "run", "output_dir"): Row(
        ("benchmark", "run", "gemm", "--m", "16", "{}"), "o", lambda s: s.options.output_dir == "o"
    ),
    ("benchmark", "run", "xprof_dir"): Row(
        ("benchmark", "run", "gemm", "--m", "16", "--xprof_timing", "{}"),
        "tr",
        lambda s: s.cases[0].outputs.trace_dir == "tr",
    ),
    ("benchmark", "run", "xla_flags_file_path"): Row(
        ("benchmark", "run", "gemm", "--m", "16", "{}"),
        "flags.yaml",
        lambda s: "--xla_tpu_example=1" in str(s.cases[0].process_env),
    ),
    ("benchmark", "run", "xprof_device_mode"): Row(
        ("benchmark", "run", "gemm", "--m", "16", "{}"),
        "max_device",
        lambda s: s.cases[0].run.xprof_device_mode == "max_device",
    ),
    ("benchmark", "run", "help"): Row(
        ("benchmark", "run", "gemm", "{}"), None, lambda s: "--in_dtype" in s.out
    ),
    ("benchmark", "run", "name"): Row(
        ("benchmark", "run", "{}", "--m", "16"),
        "gemm",
        lambda s: s.cases[0].origin.name == "gemm",
    ),
    ("benchmark", "run-config", "file"): Row(
        ("benchmark", "run-config", "{}"), "tp.yaml", lambda s: s.loaded.path == "tp.yaml"
    ),
    ("benchmark", "run-config", "output_dir"): Row(
        ("benchmark", "run-config", "tp.yaml", "{}"), "o", lambda s: s.options.output_dir == "o"
    ),
    ("benchmark", "run-config", "xprof_dir"): Row(
        ("benchmark", "run-config", "tp.yaml", "{}"),
        "tr",
        lambda s: s.options.flag(XPROF_DIR) == "tr",
    ),
    ("benchmark", "run-config", "xprof_timing"): Row(  # TPUMS ignores it: the file decides
        ("benchmark", "run-config", "tp.yaml", "{}"),
        None,
        lambda s: s.cases[0].outputs.trace_dir is None and "ignored" in s.err,
    ),
    ("benchmark", "run-config", "xla_flags_file_path"): Row(
        ("benchmark", "run-config", "tp.yaml", "{}"),
        "flags.yaml",
        lambda s: "--xla_tpu_example=1" in str(s.cases[0].process_env),
    ),
    ("benchmark", "list", "experimental"): Row(
        ("benchmark", "list", "{}"), None, lambda s: "gemm_throttling" in s.out
    ),
    ("benchmark", "list", "aliases"): Row(
        ("benchmark", "list", "{}"), None, lambda s: '"task": "gemm_generalized"' in s.out
    ),
    ("suite", "run", "file"): Row(
        ("suite", "run", "{}"), "suite.yaml", lambda s: s.loaded.path == "tp.yaml"
    ),
    ("suite", "run", "output_dir"): Row(
        ("suite", "run", "suite.yaml", "{}"), "n", lambda s: s.options.output_dir.startswith("n")
    ),
    ("suite", "run", "xprof_dir"): Row(
        ("suite", "run", "suite.yaml", "{}"), "tr", lambda s: s.options.flag(XPROF_DIR) == "tr"
    ),
    ("suite", "run", STRICT_LAYOUT.dest): Row(
        ("suite", "run", "suite.yaml", "{}"), None, lambda s: s.options.flag(STRICT_LAYOUT)
    ),
    ("benchmark", "run-config", STRICT_LAYOUT.dest): Row(
        ("benchmark", "run-config", "tp.yaml", "{}"), None, lambda s: s.options.flag(STRICT_LAYOUT)
    ),
    # one stop/resume contract: each command that runs takes --resume and --overwrite (and --audit)
    **{
        (*command[:2], dest): Row((*command, "{}"), value, holds)
        for command in (
            ("benchmark", "run", "gemm", "--m", "16"),
            ("benchmark", "run-config", "tp.yaml"),
            ("suite", "run", "suite.yaml"),
        )
        for dest, (value, holds) in RUN_FILES.items()
    },
}


def _options(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each option's dest and its spellings (positionals by dest, spelt as their value)."""
    out: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(
            action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
        ):
            continue
        out.setdefault(action.dest, []).extend(action.option_strings or [""])
    return out


def _subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def _argv(row: Row, spelling: str) -> list[str]:
    out: list[str] = []
    for arg in row.args:
        if arg != "{}":
            out.append(arg)
        elif spelling:
            out += [spelling] if row.value is None else [spelling, row.value]
        elif row.value is not None:
            out.append(row.value)  # a positional: its value alone
    return out


def _spellings(parser: argparse.ArgumentParser, rows: dict[str, Row]) -> list[tuple[str, str]]:
    return [(dest, s) for dest, spelt in _options(parser).items() if dest in rows for s in spelt]


def _run_parser():
    from accelbench.cli import build_parser

    return _subparser(build_parser(), "run")


def _dashboard_parser():
    from accelbench.cli import build_parser

    return _subparser(build_parser(), "dashboard")


def test_every_option_of_run_and_dashboard_has_a_row():
    assert set(_options(_run_parser())) <= set(RUN), set(_options(_run_parser())) - set(RUN)
    assert set(_options(_dashboard_parser())) <= set(DASHBOARD_ROWS)


def _tpums_options(path: tuple[str, ...]) -> dict[str, list[str]]:
    """A tpums command's options; `benchmark run`'s own (past the fields) come from the parser each
    benchmark gets."""
    from accelbench.dialects.tpums.cli import benchmark_parser, build_parser

    options = _options(_subparser(build_parser(), *path))
    if path == ("benchmark", "run"):
        own = _options(benchmark_parser("gemm"))
        options.update({k: v for k, v in own.items() if not k.startswith("field_")})
    return options


def test_every_option_of_jax_bench_and_tpums_has_a_row():
    from accelbench.dialects.jax_bench.cli import build_parser as jax_bench_parser

    assert set(_options(jax_bench_parser())) <= set(JAX_BENCH_ROWS)
    for path in (
        ("benchmark", "run"),
        ("benchmark", "run-config"),
        ("benchmark", "list"),
        ("suite", "run"),
    ):
        missing = set(_tpums_options(path)) - {k[-1] for k in TPUMS_ROWS if k[:2] == path}
        assert not missing, (path, missing)


@pytest.mark.parametrize(("dest", "spelling"), _spellings(_run_parser(), RUN))
def test_each_run_option_reaches_the_run(dest, spelling, caught):
    seen = caught(_microbench, *_argv(RUN[dest], spelling))
    assert RUN[dest].holds(seen), (dest, spelling, seen)


@pytest.mark.parametrize(("dest", "spelling"), _spellings(_dashboard_parser(), DASHBOARD_ROWS))
def test_each_dashboard_option_reaches_the_run(dest, spelling, caught):
    seen = caught(_microbench, *_argv(DASHBOARD_ROWS[dest], spelling))
    assert DASHBOARD_ROWS[dest].holds(seen), (dest, spelling)


def _jax_bench_spellings() -> list[tuple[str, str]]:
    from accelbench.dialects.jax_bench.cli import build_parser

    return _spellings(build_parser(), JAX_BENCH_ROWS)


@pytest.mark.parametrize(("dest", "spelling"), _jax_bench_spellings())
@pytest.mark.parametrize("through", ["jax-bench", "microbench jax-bench"])
def test_each_jax_bench_option_reaches_the_run(dest, spelling, through, caught):
    argv = _argv(JAX_BENCH_ROWS[dest], spelling)
    if through == "jax-bench":
        seen = caught(_jax_bench, *argv)
    else:
        seen = caught(_microbench, "jax-bench", *argv)
    assert JAX_BENCH_ROWS[dest].holds(seen), (dest, spelling)


def _tpums_spellings() -> list[tuple[tuple[str, ...], str]]:
    out = []
    for key in TPUMS_ROWS:
        spelt = _tpums_options(key[:2]).get(key[-1], [])
        out += [(key, s) for s in spelt]
    return out


@pytest.mark.parametrize(("key", "spelling"), _tpums_spellings())
def test_each_tpums_option_reaches_the_run(key, spelling, caught):
    argv = _argv(TPUMS_ROWS[key], spelling)
    seen = caught(_tpums, *argv)
    assert TPUMS_ROWS[key].holds(seen), (key, spelling, seen.out[:200])
