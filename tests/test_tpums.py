"""The TPUMS dialect and command line: upstream's schema rules, expansion and precedence, the renamed
benchmarks and fields, refusals in one line naming the key, and upstream's shipped files run on CPU."""

import csv
import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import run_options

from accelbench.config.loader import load_config
from accelbench.config.planner import plan
from accelbench.core.options import RunOptions

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "configs" / "tpums").rglob("*.yaml") if "suite" not in p.name)


def cases(write_yaml, text, **options):
    path = write_yaml(textwrap.dedent(text))
    loaded = load_config(str(path))
    return plan(loaded, run_options(**options), lambda: 4)


def fields(case):
    return case.origin.fields.as_dict()


def refused(write_yaml, run_cli, text):
    path = write_yaml(textwrap.dedent(text))
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 2 and err.count("\n") == 1, err
    return err


def test_cases_overlay_params_and_the_sweep_multiplies_each_case(write_yaml):
    planned = cases(
        write_yaml,
        """
        benchmark:
          name: gemm
          xprof_timing: true
          params: {num_runs: 3, out_dtype: bfloat16, m: 64}
          cases:
            - {k: 32, n: 32}
            - {k: 64, n: 16, m: 128}
          sweep:
            transpose_b: [false, true]
        """,
    )
    got = [(f["m"], f["k"], f["n"], f["transpose_b"]) for f in map(fields, planned)]
    assert got == [
        (64, 32, 32, False),
        (64, 32, 32, True),
        (128, 64, 16, False),  # the case beats params
        (128, 64, 16, True),
    ]
    assert {c.op for c in planned} == {"gemm_generalized"} and all(
        f["xprof_timing"] is True and f["num_runs"] == 3 for f in map(fields, planned)
    )


def test_tpums_defaults_and_names_where_they_moved(write_yaml):
    (gemm,) = cases(write_yaml, "benchmark: {name: gemm, params: {m: 8, k: 8, n: 8}}")
    assert fields(gemm)["in_dtype"] == "bfloat16"  # TPUMS's default (jax-bench's is fp8)
    by_new, by_old = (
        cases(write_yaml, f"benchmark: {{name: hbm, params: {{{key}: 4096}}}}")
        for key in ("num_elements", "size")
    )
    assert fields(by_new[0])["size"] == fields(by_old[0])["size"] == 4096


def test_the_files_xprof_timing_applies_to_every_case(write_yaml):
    planned = cases(
        write_yaml,
        """
        benchmark:
          name: all_gather
          xprof_timing: true
          params: {mesh_shape: 2x2, sharding_strategy: 2x2}
          sweep: {matrix_dim: [8, 16]}
        """,
    )
    assert len(planned) == 2 and all(fields(c)["xprof_timing"] is True for c in planned)


def test_a_preset_lays_under_params(write_yaml):
    (case,) = cases(
        write_yaml,
        "benchmark: {name: transformer_layer_moe, model_preset: LLM-36B, params: {mslen: 64}}",
    )
    assert fields(case)["model_dim"] == 7168 and fields(case)["mslen"] == 64


def test_a_sweep_of_more_than_1000_keeps_the_first_1000_per_case_and_says_so(write_yaml):
    text = """
        benchmark:
          name: gemm
          cases: [{k: 8}, {k: 16}]
          sweep: {m: {start: 1, end: 40}, n: {start: 1, end: 40}}
        """
    planned = cases(write_yaml, text, max_cases=5000)
    assert len(planned) == 2000  # 1600 combinations a case, the first 1000 of each
    first = [(f["k"], f["m"], f["n"]) for f in map(fields, planned)]
    assert first[:2] == [(8, 1, 1), (8, 1, 2)] and first[999] == (8, 25, 40)
    assert first[1000] == (16, 1, 1)


@pytest.mark.parametrize(
    "text, key, message",
    [
        ("global: {}\nbenchmark: {name: gemm, params: {}}\n", "global", "not a TPUMS key"),
        ("benchmark: {params: {m: 8}}\n", "benchmark.name", "required key is missing"),
        ("benchmark: {name: gemm2}\n", "benchmark.name", "unknown benchmark 'gemm2'"),
        (
            "benchmark: {name: gemm, cases: [{m: 8}], cases_from_csv: x.csv}\n",
            "benchmark",
            "cannot specify both 'cases' and 'cases_from_csv'",
        ),
        (
            "benchmark: {name: gemm, params: {sweep: 1}}\n",
            "benchmark.params.sweep",
            "reserved key(s)",
        ),
        (
            "benchmark: {name: gemm, model_preset: LLM-7B}\n",
            "benchmark.model_preset",
            "Unknown model preset 'LLM-7B'",
        ),
        ("benchmark: {name: gemm, sweep: {}}\n", "benchmark.sweep", "to be a non-empty dict"),
        (
            "benchmark: {name: gemm, params: {m: 8}, sweep: {m: [8, 16]}}\n",
            "benchmark.sweep.m",
            "collide with keys in 'params'",
        ),
        (
            "benchmark: {name: gemm, cases: [{m: 8}], sweep: {m: [8, 16]}}\n",
            "benchmark.sweep.m",
            "collide with keys in 'cases'",
        ),
        ("benchmark: {name: gemm, params: {mm: 8}}\n", "benchmark.params.mm", "unknown key"),
        (
            "benchmark: {name: gemm, cases: [{m: 0}]}\n",
            "benchmark.cases[0].m",
            "m must be >= 1, got 0",
        ),
        (
            "benchmark: {name: gemm, sweep: {m: {start: 64, end: 8, multiplier: 2}}}\n",
            "benchmark.sweep.m",
            "",
        ),
        (
            "benchmark: {name: gemm, xprof_device_mode: all}\n",
            "benchmark.xprof_device_mode",
            "one of",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_the_key(write_yaml, run_cli, text, key, message):
    err = refused(write_yaml, run_cli, text)
    assert f": {key}" in err and message in err


def test_a_stage_a_file_is_a_jax_bench_entry_with_its_global_keys(write_yaml):
    planned = cases(
        write_yaml,
        """
        system: ironwood
        benchmark:
          name: hbm_bandwidth
          num_runs: 2
          dtype: bfloat16
          sweep: {size: [1024, 2048]}
        """,
    )
    assert [fields(c)["size"] for c in planned] == [1024, 2048]
    assert all(fields(c)["system"] == "ironwood" for c in planned)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_shipped_tpums_file_plans(path, monkeypatch):
    monkeypatch.chdir(ROOT)  # upstream's relative paths (configs/shapes/...) are the repository's
    assert plan(load_config(str(path)), RunOptions(), lambda: 4)


SMALL = ["tpu7x/2x2x1/gemm.yaml", "tpu7x/2x2x1/hbm.yaml", "v6e/2x2/all_reduce.yaml"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_upstream_files_run_on_cpu_with_only_ok_or_unsupported_rows(name, tmp_path, run_cli):
    code, _, err = run_cli(
        "run",
        "--config",
        str(ROOT / "configs" / "tpums" / name),
        "--max-dim",
        "64",
        "--num-runs",
        "2",
        "--output-dir",
        str(tmp_path),
        "--no-progress",
    )
    rows = [r for p in tmp_path.glob("*.csv") for r in csv.DictReader(open(p))]  # noqa: SIM115
    rows = [r for r in rows if "status" in r]
    assert code == 0, err
    assert rows and {r["status"] for r in rows} <= {"ok", "unsupported"}
    assert all(r["check"] == "passed" for r in rows if r["status"] == "ok")


def tpums(*args):
    from accelbench.dialects.tpums import cli as tpums_cli

    return tpums_cli.run(list(args))


def test_list_shows_production_names_and_the_rest_on_request(capsys):
    assert tpums("benchmark", "list") == 0
    names = [t["task"] for t in json.loads(capsys.readouterr().out)]
    assert names == [
        "gemm",
        "hbm",
        "host_to_device",
        "device_to_host",
        "device_to_device",
        "all_gather",
        "all_reduce",
        "all_to_all",
    ]
    tpums("benchmark", "list", "--experimental", "--aliases")
    more = [t["task"] for t in json.loads(capsys.readouterr().out)]
    assert {"reduce_scatter", "attention_flashed", "hbm_bandwidth"} <= set(more)


def test_run_sweeps_several_values_and_writes_upstreams_files(tmp_path, capsys):
    code = tpums(
        "benchmark",
        "run",
        "gemm",
        "-m",
        "32",
        "64",
        "--k",
        "32",
        "--n",
        "32",
        "--transpose_b",
        "true",
        "--num_runs",
        "2",
        "--output_dir",
        str(tmp_path),
    )
    assert code == 0
    summary = list(csv.DictReader(open(tmp_path / "summary.csv")))  # noqa: SIM115
    assert [(r["m"], r["transpose_b"]) for r in summary] == [("32", "True"), ("64", "True")]
    assert {"wall_clock_p50_ms", "wall_clock_tflops_per_device", "total_flops"} <= set(summary[0])
    assert not {"KET_ms", "throughput", "p50_ms", "xprof_timing", "dtype"} & set(summary[0])
    assert (tmp_path / "detailed.json").exists()


@pytest.mark.parametrize(
    "args, key",
    [
        (("gemm", "--transpose_a", "maybe"), "--transpose_a"),
        (("gemm", "--m"), "--m"),
        (("gemm", "--m", "0"), "--m"),
        (("gemm", "--m", *map(str, range(1, 33)), "--n", *map(str, range(1, 33))), "benchmark run"),
        (("hbm_bandwidth",), "hbm_bandwidth"),
    ],
)
def test_a_bad_command_line_is_one_line_naming_the_flag(args, key, tmp_path, capsys):
    from accelbench.dialects.tpums.cli import main

    try:
        code = main(["benchmark", "run", *args, "--output_dir", str(tmp_path)])
    except SystemExit as exit_:  # argparse's own refusal
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and key in err, err
    assert not list(tmp_path.iterdir())


def test_tpums_metric_names_scopes_and_spec_rooflines_by_hand():
    """gemm 1024^3 bf16 at 1 ms (wall) and 0.5 ms (xprof) on a tpu7x device: 2.147 TFLOP per call,
    so 2.147 / 4.295 TFLOP/s per device and twice that per chip (two devices a chip); its intensity
    (2.147e9 FLOP over 6 MiB) puts the limit at the bf16 peak, 1153.5; no peaks on a GPU."""
    from accelbench.benchmarks.base import TPUMS, V2, Figures, Upstream
    from accelbench.dialects.tpums.metrics import tpums_metrics

    bench = V2["gemm_generalized"]
    f = bench.typed(m=1024, k=1024, n=1024, in_dtype="bfloat16")
    flops, nbytes = 2 * 1024**3, 3 * 1024 * 1024 * 2
    figures = {d: Figures(f, flops, nbytes, s) for d, s in (("wall_clock", 1e-3), ("xprof", 5e-4))}
    domains = {"wall_clock": (1.0, 1.2, 1.0, 0.1), "xprof": (0.5, 0.6, 0.5, 0.01)}
    origin = Upstream(bench, f, tpums=TPUMS["gemm"])
    m = tpums_metrics(origin, f, domains, figures, "TPU7x")
    assert m["wall_clock_p50_ms"] == 1.0 and m["xprof_std_ms"] == 0.01
    assert m["wall_clock_tflops_per_device"] == pytest.approx(flops / 1e-3 / 1e12)
    assert m["xprof_tflops_per_chip"] == pytest.approx(2 * flops / 5e-4 / 1e12)
    assert m["roofline_tflops_limit_per_device"] == 1153.5
    assert m["peak_hbm_bw_per_device_gb_s"] == 3690.0
    assert m["xprof_compute_roofline_efficiency_pct"] == pytest.approx(
        100 * flops / 5e-4 / 1e12 / 1153.5
    )
    assert "throughput" not in m and "KET_ms" not in m
    gpu = tpums_metrics(origin, f, domains, figures, "NVIDIA H100 80GB HBM3")
    assert gpu["wall_clock_tflops_per_chip"] == gpu["wall_clock_tflops_per_device"]
    assert not any("roofline" in k or k.startswith("peak_") for k in gpu)


def test_hbm_rows_take_bandwidth_per_device_and_the_memory_roofline():
    from accelbench.benchmarks.base import TPUMS, V2, Figures, Upstream
    from accelbench.dialects.tpums.metrics import tpums_metrics

    bench = V2["hbm_bandwidth"]
    f = bench.typed(op_type="copy", size=2**20)
    nbytes = 2 * 2**20 * 2  # read and write, bf16
    figures = {"wall_clock": Figures(f, 2**20, nbytes, 1e-6)}
    origin = Upstream(bench, f, tpums=TPUMS["hbm"])
    m = tpums_metrics(origin, f, {"wall_clock": (1e-3,) * 4}, figures, "TPU v6e")
    assert m["wall_clock_bandwidth_per_device_gb_s"] == pytest.approx(nbytes / 1e-6 / 1e9)
    assert m["wall_clock_memory_roofline_efficiency_pct"] == pytest.approx(
        100 * nbytes / 1e-6 / 1e9 / 1638.4
    )
    assert m["total_bytes_mib"] == pytest.approx(nbytes / 2**20)


@pytest.mark.parametrize("op_type", ["read", "write"])
def test_hbms_read_and_write_kernels_move_each_element_once_and_are_checked(op_type, tmp_path):
    code = tpums(
        "benchmark",
        "run",
        "hbm",
        "--op_type",
        op_type,
        "--num_elements",
        "4096",
        "--num_runs",
        "2",
        "--output_dir",
        str(tmp_path),
    )
    (row,) = csv.DictReader(open(tmp_path / "summary.csv"))  # noqa: SIM115
    assert code == 0 and row["check"] == "passed"
    assert float(row["total_bytes_mib"]) == pytest.approx(4096 * 2 / 2**20)  # one bf16 array
    assert float(row["model_bytes"]) == 4096 * 2  # ours agrees: read once, or written once


@pytest.mark.parametrize("op_type", ["read_only", "write_only"])
def test_the_pytorch_twin_runs_them_too(op_type, tmp_path, run_cli):
    out = tmp_path / "o.csv"
    args = ("--run", "hbm_bandwidth", "--op_type", op_type, "--size", "4096")
    code, _, err = run_cli("run", *args, "--backend", "torch", "-o", str(out), "--no-progress")
    rows = list(csv.DictReader(open(out)))  # noqa: SIM115  (eager and compiled)
    assert code == 0 and {r["implementation"] for r in rows} == {"eager", "compile"}, err
    assert all(r["status"] == "ok" and r["check"] == "passed" for r in rows)


def test_a_suite_runs_its_configs_in_turn_and_writes_one_report(
    tmp_path, write_yaml, monkeypatch, capsys
):
    """Each config into its own folder, then consolidated_report.md/.html with a table per config;
    a bad config anywhere in the list stops the suite before anything runs."""
    for name, body in (
        ("gemm", "benchmark: {name: gemm, params: {m: 32, k: 32, n: 32, num_runs: 2}}\n"),
        ("hbm", "benchmark: {name: hbm, params: {num_elements: 4096, num_runs: 2}}\n"),
    ):
        (tmp_path / f"{name}.yaml").write_text(body)
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite_name: tiny\ndescription: two configs\nconfigs: [gemm.yaml, hbm.yaml]\n")
    out = tmp_path / "out"
    assert tpums("suite", "run", str(suite), "--output_dir", str(out)) == 0
    said = capsys.readouterr().err  # the run says where the report went
    assert f"consolidated report: {out / 'consolidated_report.md'}" in said
    assert (out / "gemm" / "summary.csv").exists() and (out / "hbm" / "summary.csv").exists()
    report = (out / "consolidated_report.md").read_text()
    assert report.startswith("# tiny") and "wall\\_clock\\_p50\\_ms" in report and "## " in report
    assert "<table" in (out / "consolidated_report.html").read_text()

    from accelbench.errors import UserError

    suite.write_text("suite_name: bad\nconfigs: [gemm.yaml, nosuch.yaml]\n")
    with pytest.raises(UserError, match="config file not found"):
        tpums("suite", "run", str(suite), "--output_dir", str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()


def test_the_shipped_suite_plans_every_config(monkeypatch):
    from accelbench.dialects.tpums.suite import read_suite

    monkeypatch.chdir(ROOT)
    suite = read_suite("configs/tpums/canonical_suite.yaml")
    assert suite.name == "canonical_7x_default"
    for config in suite.configs:
        assert plan(load_config(config), RunOptions(), lambda: 4), config


def test_collective_bytes_per_chip_follow_tpums_replica_groups_by_hand():
    """all_reduce of 1024 tiles of bf16 (S = 2 MiB a device) on two devices a chip: a group of ids
    that are multiples of 2 is parallel (P = R-1, C = 2): 2 S (3/4) 2 = 3 S; one of consecutive ids
    non-parallel (P = R-2, C = 1): 2 S (2/4) = S. One device a chip: never parallel, P = R-1."""
    from accelbench.dialects.tpums.metrics import collective, replica_groups

    s = 1024 * 8 * 128 * 2
    assert replica_groups([0, 2, 4, 6], 2) == ("parallel", 3, 2)
    assert replica_groups([0, 1, 2, 3], 2) == ("non-parallel", 2, 1)
    assert replica_groups([0, 2, 4, 6], 1) == ("non-parallel", 3, 1)
    parallel = collective("all_reduce", s, [0, 2, 4, 6], {"xprof": 1e-3}, 2)
    assert parallel["data_transferred_bytes"] == 3 * s
    assert parallel["xprof_bandwidth_per_chip_gb_s"] == pytest.approx(3 * s / 1e-3 / 1e9)
    assert collective("all_reduce", s, [0, 1, 2, 3], {}, 2)["data_transferred_bytes"] == s
    assert collective("all_gather", s, [0, 1, 2, 3], {}, 2)["data_transferred_bytes"] == 2 * s
    one = collective("all_gather", s, [0], {"xprof": 1e-3}, 2)
    assert one["xprof_bandwidth_per_chip_gb_s"] == 0


def test_a_collective_row_carries_its_replica_group(tmp_path):
    code = tpums(
        "benchmark",
        "run",
        "all_gather",
        "--mesh_shape",
        "2x2",
        "--sharding_strategy",
        "2x1",
        "--matrix_dim",
        "8",
        "--num_runs",
        "2",
        "--output_dir",
        str(tmp_path),
    )
    (row,) = csv.DictReader(open(tmp_path / "summary.csv"))  # noqa: SIM115
    assert code == 0 and row["replica_group_rank"] == "2"
    # the groups run down the mesh's first axis, {0, 2} and {1, 3}; a CPU device is a chip of one
    # core, so no group is parallel (P = R - 1 = 1, C = 1)
    assert row["replica_group_type"] == "non-parallel"
    assert float(row["data_transferred_bytes"]) == 8 * 1024 * 2 * 1 * 1  # S P C


def test_a_flags_file_replaces_the_packaged_tpu_flags(write_yaml, tmp_path):
    """Both forms upstream's op_flags.yaml used; a benchmark the file leaves out gets none."""
    from accelbench.benchmarks.tpu_flags import flag_sets, with_flags
    from accelbench.errors import UserError

    flags = tmp_path / "flags.yaml"
    flags.write_text(
        "gemm: ['--xla_tpu_dvfs_p_state=5', '--a=1']\n"
        "host_to_device: {flags: ['--b=2'], env: {TPU_PREMAPPED_BUFFER_SIZE: 64}}\n"
    )
    sets = flag_sets(str(flags))
    (gemm,) = with_flags(cases(write_yaml, "benchmark: {name: gemm}"), sets)
    assert dict(gemm.process_env) == {"LIBTPU_INIT_ARGS": "--xla_tpu_dvfs_p_state=5 --a=1"}
    (h2d,) = with_flags(cases(write_yaml, "benchmark: {name: host_to_device}"), sets)
    assert dict(h2d.process_env) == {
        "LIBTPU_INIT_ARGS": "--b=2",
        "TPU_PREMAPPED_BUFFER_SIZE": "64",
    }
    (hbm,) = with_flags(cases(write_yaml, "benchmark: {name: hbm}"), sets)
    assert hbm.process_env == ()
    flags.write_text("gemm: {flags: ['--a'], extra: 1}\n")
    with pytest.raises(UserError, match="extra: an entry holds flags and env only"):
        flag_sets(str(flags))


def test_run_help_lists_the_benchmarks_fields(capsys):
    assert tpums("benchmark", "run", "hbm", "--help") == 0
    out = capsys.readouterr().out
    assert "HBMBandwidthParams parameters:" in out and "--op_type {copy,scale,add,triad," in out
    assert "--num_elements NUM_ELEMENTS [NUM_ELEMENTS ...]" in out and "(default: 134217728)" in out


def test_a_soak_runs_in_tpums_phases_on_a_fake_clock(monkeypatch):
    """Warm-up, one traced window, untraced chunks until min_duration_s, one traced worst window:
    the timer (a trace) is called twice whatever the duration, the chunks never traced."""
    from accelbench.core.case import RunSettings
    from accelbench.core.types import Prepared, Timing
    from accelbench.measure import procedure, timers

    clock = [0.0]
    monkeypatch.setattr(procedure.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(timers.time, "perf_counter", lambda: clock[0])
    calls = []

    def call():
        clock[0] += 1e-3 * (1 + len(calls) / 100)  # each call a little slower: the chip heats
        calls.append("call")
        return object()

    traced = []

    def timer(prepared, warmup, n):
        traced.append(n)
        samples = [prepared.call() and 1e-3 * (1 + len(calls) / 100) for _ in range(n)]
        return Timing(samples_s=samples, source="synthetic")

    run = RunSettings(num_runs=3, warmup=2, min_duration_s=0.05, soak_chunk=5)
    timing = procedure.soak_phases(timer, Prepared(call=call, sync=lambda out: None), run)
    assert traced == [5, 5] and timing.count == 5 and timing.stop_reason == "min_duration"
    chunks = timing.soak.chunks_s
    assert len(chunks) >= 5 and chunks[-1] > chunks[0]  # the soak lasted 50 ms, and slowed
    assert timing.soak.baseline_s[0] < timing.samples_s[0]  # the worst window came last


def test_soak_columns_by_hand():
    from accelbench.dialects.tpums.metrics import soaked

    got = soaked({"wall_clock": (2.0, 2.5), "xprof": (0.0, 1.0)})
    assert got == {
        "wall_clock_initial_p50_ms": 2.0,
        "wall_clock_sustained_p50_ms": 2.5,
        "wall_clock_slowdown_ratio": 1.25,
        "xprof_initial_p50_ms": 0.0,
        "xprof_sustained_p50_ms": 1.0,
        "xprof_slowdown_ratio": 1.0,  # TPUMS: 1.0 where the initial is not above 0
    }


@pytest.mark.parametrize(
    "params, key",
    [("{min_duration_s: 1.0, m: 64, k: 64, n: 64}", "benchmark"), ("{m: 64}", "params")],
)
def test_a_soak_needs_its_traced_windows_and_a_duration(write_yaml, run_cli, params, key):
    xprof = "false" if key == "benchmark" else "true"
    err = refused(
        write_yaml,
        run_cli,
        f"benchmark: {{name: gemm_throttling, xprof_timing: {xprof}, params: {params}}}\n",
    )
    assert "soak" in err


def test_the_sample_soak_runs_shortened_with_tpums_columns(tmp_path):
    config = tmp_path / "soak.yaml"
    config.write_text(
        "benchmark:\n  name: gemm_throttling\n  xprof_timing: true\n  xprof_device_mode: max_device\n"
        "  params: {warmup_tries: 2, min_duration_s: 0.2, m: 64, k: 64, n: 64, samples_per_run: 5}\n"
    )
    assert tpums("benchmark", "run-config", str(config), "--output_dir", str(tmp_path / "o")) == 0
    (row,) = csv.DictReader(open(tmp_path / "o" / "summary.csv"))  # noqa: SIM115
    assert row["samples_per_run"] == "5" and float(row["wall_clock_slowdown_ratio"]) > 0
    assert {"wall_clock_initial_p50_ms", "wall_clock_sustained_p50_ms"} <= set(row)


def test_xprof_device_mode_reaches_the_cases_run_settings(write_yaml):
    (case,) = cases(
        write_yaml,
        "benchmark: {name: gemm, xprof_device_mode: max_device, params: {m: 8, k: 8, n: 8}}",
    )
    assert case.run.xprof_device_mode == "max_device"
    (default,) = cases(write_yaml, "benchmark: {name: gemm, params: {m: 8, k: 8, n: 8}}")
    assert default.run.xprof_device_mode == "first_device"


def test_a_dcn_mesh_groups_along_its_dcn_axis_and_never_falls_back():
    from dataclasses import replace

    from accelbench.benchmarks.collective import CollectiveFields, block_elements, resolve_group

    f = CollectiveFields(mesh_shape="2x8", mesh_axes="dcn,ici")
    group = resolve_group(f, devices=8)  # a mesh the devices cannot fill: kept, not one axis
    assert (group.mesh_shape, group.strategy, group.size) == ("2x8", "2x1", 2)
    assert block_elements(replace(f, matrix_dim=8192, input_layout="dcn_1d")) == 8192**2 // 2


def test_dcn_columns_by_hand():
    """all_reduce over 2 slices of 8: shard = 8192^2 bf16 / 2 = 64 MiB; ring 2(2-1)/2 = 1; at 10 ms
    a device moves 64 MiB * 8 / 10 ms = 53.7 Gb/s, a host 8x that, 53.7% of 800 Gb/s at ring 1."""
    from dataclasses import replace

    from accelbench.benchmarks.collective import CollectiveFields, PermuteFields
    from accelbench.dialects.tpums.metrics import dcn

    f = CollectiveFields(
        mesh_shape="2x8", mesh_axes="dcn,ici", input_layout="dcn_1d", matrix_dim=8192
    )
    shard = 8192**2 * 2 / 2
    got = dcn("all_reduce", f, {"xprof": 0.01})
    assert got["ring_factor"] == 1.0 and got["participants_per_slice"] == 8
    assert got["algorithm_bytes"] == shard * 8
    assert got["xprof_per_device_algo_gbps"] == pytest.approx(shard * 8 / 0.01 / 1e9)
    assert got["xprof_duplex_utilization_pct"] == pytest.approx(shard * 8 * 8 / 0.01 / 1e9 / 8)
    permute = PermuteFields(**{k: getattr(f, k) for k in f.names()})
    assert dcn("ppermute", replace(permute, direction="bidi"), {})["ring_factor"] == 2.0
    assert dcn("ppermute", replace(permute, ring_factor=3), {})["ring_factor"] == 3.0


@pytest.mark.slow
def test_dcn_permutes_and_all_reduce_on_two_processes_of_four_devices(tmp_path, write_yaml):
    """Upstream's DCN files, the mesh made 2x4 (two processes of four forced CPU devices): the dcn
    axis spans the processes; every row checked, TPUMS's DCN columns written."""
    import subprocess
    import sys

    for name in ("ppermute_uni", "ppermute_bidi", "all_reduce"):
        text = (ROOT / "configs" / "tpums" / "dcn" / f"7x_2x2x1_{name}.yaml").read_text()
        text = text.replace('mesh_shape: "2x8"', 'mesh_shape: "2x4"')
        text = text.replace("[8192, 16384, 24576, 32768]", "[64]")
        (tmp_path / f"{name}.yaml").write_text(text)
        done = subprocess.run(
            [sys.executable, "-m", "accelbench.cli", "run", "--config", f"{name}.yaml"]
            + ["--output-dir", "out", "-q", "--processes", "2"],
            cwd=tmp_path,
            env={**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        (row,) = csv.DictReader(open(tmp_path / "out" / f"{name}.summary.csv"))  # noqa: SIM115
        assert row["check"] == "passed" and row["participants_per_slice"] == "4"
        assert float(row["wall_clock_host_bus_gbps"]) > 0


def test_a_bad_run_setting_in_params_names_its_key(write_yaml, run_cli):
    """Issue 57: the TPUMS key that gave the value, not only the block it sits in."""
    err = refused(write_yaml, run_cli, "benchmark: {name: gemm, params: {cache: tepid}}")
    assert "benchmark.params.cache: must be one of cold, warm, got 'tepid'" in err
    err = refused(write_yaml, run_cli, "benchmark: {name: gemm, cases: [{m: 8, num_runs: -1}]}")
    assert "benchmark.cases[0].num_runs" in err


@pytest.mark.parametrize("op_type", ["read_only", "write_only"])
def test_hbms_long_op_type_names_are_accepted_in_files_and_on_the_command_line(
    op_type, write_yaml, capsys
):
    """Issue 57: upstream and docs/tpums.md accept read_only and write_only; both run the read or
    write kernel."""
    (case,) = cases(write_yaml, f"benchmark: {{name: hbm, params: {{op_type: {op_type}}}}}")
    assert case.params.op_type == op_type
    from accelbench.dialects.tpums.cli import field_values

    expansion, _ = field_values("hbm", ["--op_type", op_type])
    assert [g.value for g in expansion.cases[0].values()] == [op_type]


def test_a_field_given_twice_on_benchmark_run_is_swept_over_both_values():
    """Issue 57: `-m 16 ... -m 32` is never the last value silently: both values, a product."""
    from accelbench.config.expand import values_of
    from accelbench.dialects.tpums.cli import field_values

    expansion, _ = field_values("gemm", ["-m", "16", "--n", "8", "-m", "32"])
    assert [values_of(p) for p in expansion.points()] == [{"n": 8, "m": 16}, {"n": 8, "m": 32}]


def test_run_config_of_a_suite_file_says_to_run_it_as_a_suite(tmp_path, capsys):
    from accelbench.dialects.tpums.cli import main

    suite = tmp_path / "suite.yaml"
    suite.write_text("suite_name: s\ndescription: d\nconfigs: [a.yaml]\n")
    assert main(["benchmark", "run-config", str(suite), "--output_dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tpums suite run" in err


def test_a_flags_file_refuses_a_mapping_env_value_and_says_a_name_of_no_benchmark(tmp_path, capsys):
    from accelbench.benchmarks.tpu_flags import flag_sets
    from accelbench.errors import UserError

    flags = tmp_path / "flags.yaml"
    flags.write_text("gemm: {flags: ['--a'], env: {X: {nested: 1}}}\n")
    with pytest.raises(UserError, match="env X: must be a string or a number, got a dict"):
        flag_sets(str(flags))
    flags.write_text("gemmm: ['--a']\n")
    assert set(flag_sets(str(flags))) == {"gemmm"}
    assert "gemmm: names no benchmark: its flags are never used" in capsys.readouterr().err
