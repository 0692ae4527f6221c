"""The jax-bench (v2) dialect: detection, sweep forms, precedence, csv_shapes, model and system presets,
unknown keys, several names per file, the one-off command line and --max-dim."""

import json
import os
import textwrap

import pytest
from conftest import run_options

from accelbench.benchmarks.hardware import parse_hardware
from accelbench.config.expand import MAX_COMBINATIONS, upstream_sweep, upstream_values, values_of
from accelbench.config.loader import parse_config
from accelbench.core.options import RunOptions
from accelbench.errors import UserError
from accelbench.run.planning import plan_from_file
from accelbench.specs import presets

IRONWOOD = presets()["ironwood"]


def plan(write_yaml, text, **options):
    return plan_from_file(str(write_yaml(text)), run_options(**options))


def fields(case):
    return case.origin.fields.as_dict()


@pytest.mark.parametrize(
    "data, dialect",
    [
        ({"global": {}, "benchmarks": [{"name": "rope"}]}, "jax_bench"),
        ({"benchmarks": [{"name": "rope"}]}, "jax_bench"),
        ({"hardware": {"tflops": 1}, "benchmarks": [{"name": "rope"}]}, "jax_bench"),
        ({"benchmarks": [{"benchmark_name": "add"}]}, "ironwood"),
        (
            {"model_params": [{"matrix_shapes": [{"name": "custom", "shapes": [[8, 8, 8]]}]}]},
            "torchao",
        ),
    ],
)
def test_the_dialect_is_recognised_from_the_file_shape(data, dialect):
    assert parse_config(data, "c.yaml").dialect == dialect


@pytest.mark.parametrize(
    "value, expected",
    [
        ([1, 2, 3], [1, 2, 3]),
        ({"start": 2, "end": 16, "multiplier": 2}, [2, 4, 8, 16]),
        ({"start": 1, "end": 4}, [1, 2, 3, 4]),  # no multiplier: step 1
        (
            {"start": 1, "end": 7, "multiplier": 1, "increase_by": 3},
            [1, 4, 7],
        ),  # exactly 1: arithmetic
        ({"start": 0.5, "end": 1.5, "increase_by": 0.5}, [0.5, 1.0, 1.5]),
        ({"tflops": 5}, [{"tflops": 5}]),  # a mapping without start/end is one value
        ("4x2", ["4x2"]),
    ],
)
def test_sweep_value_forms_expand_as_upstream_reads_them(value, expected):
    assert upstream_values(value, "sweep.m", []) == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ({"start": 1, "end": 8, "multiplier": 0.5}, "range never ends"),
        ({"start": 1, "end": 8, "multiplier": 0}, "range never ends"),
        ({"start": 1, "end": 8, "multiplier": -2}, "range never ends"),
        ({"start": 1, "end": 8, "increase_by": 0}, "range never ends"),
        ({"start": 1, "end": 8, "increase_by": -1}, "range never ends"),
        ({"start": 9, "end": 8}, "range is empty"),
        ([], "empty list"),
    ],
)
def test_sweep_forms_that_hang_or_run_nothing_upstream_are_one_line_errors(value, message):
    with pytest.raises(UserError, match=message):
        upstream_values(value, "sweep.m", [])


def test_a_sweep_over_1000_combinations_keeps_the_first_1000_in_product_order_and_says_so(
    write_yaml, capsys
):
    sweep = upstream_sweep({"m": list(range(1, 41)), "n": list(range(1, 41))}, "s", "", [])
    combos = [values_of(p) for p in sweep.points()]
    assert sweep.total == 1600 and len(combos) == MAX_COMBINATIONS
    assert combos[0] == {"m": 1, "n": 1} and combos[40] == {"m": 2, "n": 1}  # first key slowest
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - name: simple_add
          sweep: {size: {start: 1, end: 1100}}
        """,
    )
    assert len(cases) == 1000 and cases[-1].params.size == 1000
    assert "1,100 combinations; the first 1000 are run" in capsys.readouterr().err


def test_precedence_is_sweep_then_csv_then_entry_then_preset_then_global_then_default(
    write_yaml, tmp_path
):
    (tmp_path / "rows.csv").write_text("seq_len,head_dim\n64,\n")  # an empty cell leaves head_dim
    cases = plan(
        write_yaml,
        f"""
        global:
          num_runs: 3
          num_q_heads: 2
          num_kv_heads: 2
          batch: 4
          causal: false
        benchmarks:
        - name: attention_flashed
          model: LLM-36B
          csv_shapes: {tmp_path / "rows.csv"}
          head_dim: 32
          seq_len: 999
          num_kv_heads: 1
          batch: 3
          sweep:
            batch: [2]
        """,
    )
    (case,) = [c for c in cases if c.implementation == "jit:xla"]
    f = fields(case)
    assert f["batch"] == 2  # sweep over entry and global
    assert f["seq_len"] == 64  # CSV over entry and preset
    assert f["head_dim"] == 32  # entry over preset (the CSV cell is empty)
    assert f["num_kv_heads"] == 1  # entry over preset and global
    assert f["num_q_heads"] == 56  # preset (LLM-36B) over global
    assert f["causal"] is False and f["num_runs"] == 3  # global over the defaults
    assert f["warmup_tries"] == 10 and f["mode"] == "fwd"  # upstream's defaults
    assert case.run.num_runs == 3 and case.run.warmup == 10
    assert case.params.q_heads == 56 and case.params.kv_heads == 1


def test_an_entry_sweep_replaces_a_global_one_whole(write_yaml):
    text = """
    global:
      sweep: {size: [4096, 8192]}
    benchmarks:
    - name: simple_add
    - name: hbm_bandwidth
      sweep: {op_type: [copy, add]}
    """
    cases = plan(write_yaml, text)
    adds = [c.params.size for c in cases if c.op == "simple_add"]
    hbm = [(c.params.op_type, c.params.size) for c in cases if c.op == "hbm_bandwidth"]
    assert adds == [4096, 8192]
    assert hbm == [("copy", 134217728), ("add", 134217728)]


def test_csv_shapes_are_read_from_the_working_directory_then_beside_the_config(
    write_yaml, tmp_path, monkeypatch
):
    (tmp_path / "shapes.csv").write_text("m,k,n\n64,32,16\n128,64,32\n")
    text = "benchmarks:\n- name: gemm_generalized\n  in_dtype: bfloat16\n  csv_shapes: shapes.csv\n"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not in the working directory: found beside the config
    cases = plan(write_yaml, text)
    assert [(c.params.m, c.params.k, c.params.n) for c in cases] == [
        (64, 32, 16),
        (128, 64, 32),
    ]
    (elsewhere / "shapes.csv").write_text("m,k,n\n8,8,8\n")  # the working directory comes first
    assert [c.params.m for c in plan(write_yaml, text)] == [8]


def test_a_csv_url_that_cannot_be_fetched_is_one_line(write_yaml, run_cli):
    path = write_yaml(
        "benchmarks:\n- name: gemm_generalized\n  csv_shapes: http://127.0.0.1:9/shapes.csv\n"
    )
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(
        f"error: {path}: benchmarks[0].csv_shapes: cannot fetch http://127.0.0.1:9"
    )


def test_model_presets_copy_only_the_fields_a_benchmark_has_and_say_so(write_yaml, capsys):
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - name: transformer_layer_moe
          model: LLM-200B
          mslen: 64
        """,
    )
    assert fields(cases[0])["model_dim"] == 16384 and "layers" not in fields(cases[0])
    assert "LLM-200B sets model_dim=16384" in capsys.readouterr().err


def test_an_unknown_preset_or_key_is_one_line_naming_it_with_a_suggestion(write_yaml, run_cli):
    cases = {
        "benchmarks:\n- name: rope\n  seqlen: 8\n": (
            "benchmarks[0].seqlen: unknown key 'seqlen' for rope",
            "did you mean 'seq_len'?",
        ),
        "global:\n  num_run: 3\nbenchmarks:\n- name: rope\n": (
            "global.num_run: unknown key 'num_run' for rope",
            "did you mean 'num_runs'?",
        ),
        "benchmarks:\n- name: rope\n  sweep: {batchh: [1]}\n": (
            "benchmarks[0].sweep.batchh: unknown key 'batchh'",
            "did you mean 'batch'?",
        ),
        "benchmarks:\n- name: gemm_generalised\n": (
            "benchmarks[0].name: unknown benchmark 'gemm_generalised'",
            "did you mean 'gemm_generalized'?",
        ),
        "benchmarks:\n- name: all_reduce\n  reduce_op: prod\n": (
            "benchmarks[0].reduce_op: 'prod' is not one of sum, mean, max, min",
            "",
        ),
        "benchmarks:\n- name: hbm_bandwidth\n  size: lots\n": (
            "benchmarks[0].size: must be a positive integer, got 'lots'",
            "",
        ),
    }
    for text, (where, hint) in cases.items():
        path = write_yaml(text)
        code, out, err = run_cli("validate", "--config", str(path))
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert f"{path}: {where}" in err and hint in err, err


def test_a_file_with_several_benchmark_names_loads(write_yaml):
    cases = plan(
        write_yaml,
        """
        global: {num_runs: 2, warmup_tries: 0}
        benchmarks:
        - {name: host_to_device, data_size_mib: 1}
        - {name: device_to_host, data_size_mib: 1}
        - {name: sigmoid, mode: bwd, batch: 8, dim: 8}
        - {name: swiglu, mode: bwd, batch: 8, dim: 8}
        """,
    )
    assert [(c.op, c.params.value("direction")) for c in cases] == [
        ("host_device", "h2d"),
        ("host_device", "d2h"),
        ("sigmoid_bwd", None),
        ("swiglu_bwd", None),
    ]
    assert cases[2].params.n == 8 and cases[3].params.n == 16  # swiglu's X is (batch, 2 dim)
    # each benchmark's TPU flag set travels with its cases (host transfers: libtpu's env too)
    env = dict(cases[0].process_env)
    assert env["TPU_PREMAPPED_BUFFER_SIZE"] == str(64 << 30) and cases[2].process_env == ()


def test_hardware_blocks_and_system_presets(write_yaml, capsys):
    warnings: list[str] = []
    stats = parse_hardware({"peak_tflops": 459, "hbm_bw": {"1048576": 1200}}, "hardware", warnings)
    assert stats.peak_tflops("float8_e4m3fn") == 459 and "read as tflops" in warnings[0]
    assert IRONWOOD.bandwidth_at(16 * 1024) == pytest.approx(127.9, abs=0.05)  # upstream's figure
    assert IRONWOOD.bandwidth_at(10) == 100 and IRONWOOD.bandwidth_at(1 << 40) == 7380
    assert IRONWOOD.peak_tflops("float16") == 2307  # falls back to bfloat16, as upstream
    cases = plan(
        write_yaml,
        """
        global: {system: IRONWOOD}
        hardware: {tflops: {bfloat16: 10}, hbm_bw: 100}
        benchmarks:
        - {name: simple_add, size: 64}
        - {name: simple_add, size: 128, system: gfc, hardware_stats: {tflops: 7}}
        - {name: rope, system: ghostlite}
        """,
    )
    assert cases[0].origin.hardware.peak_tflops("bfloat16") == 10  # hardware: wins over system
    assert cases[1].origin.hardware.peak_tflops("bfloat16") == 7
    cases = plan(write_yaml, "global: {system: IronWood}\nbenchmarks:\n- {name: rope}\n")
    assert cases[0].origin.hardware is IRONWOOD  # names are case-insensitive
    plan(write_yaml, "benchmarks:\n- {name: rope, system: ghostlite}\n")
    assert "unknown system 'ghostlite': no roofline fields" in capsys.readouterr().err


def test_max_dim_clamps_every_v2_size_parameter(write_yaml):
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - {name: hbm_bandwidth, size: 536870912}
        - {name: host_to_device, data_size_mib: 1024}
        - {name: rope, seq_len: 32768}
        - {name: all_gather, mesh_shape: 2x2, matrix_dim: 2048}
        - {name: gemm_generalized, m: 8192, k: 8192, n: 8192, in_dtype: bfloat16}
        """,
        max_dim=64,
    )
    by_op = {c.op: c.params for c in cases}
    assert by_op["hbm_bandwidth"].size == 64 * 64
    assert by_op["host_device"].data_size_mib == 1
    assert by_op["rope"].seq_len == 64
    assert by_op["all_gather"].matrix_dim == 64
    assert (by_op["gemm_generalized"].m, by_op["gemm_generalized"].k) == (64, 64)
    assert fields(cases[0])["size"] == 64 * 64  # the summary shows what ran


def test_device_to_device_expands_to_every_ordered_pair_or_one_given_pair(write_yaml):
    every = plan(write_yaml, "benchmarks:\n- {name: device_to_device, data_size_mib: 1}\n")
    pairs = [(c.params.source_id, c.params.target_id) for c in every]
    assert len(pairs) == 4 * 3 and len(set(pairs)) == 12 and all(s != d for s, d in pairs)
    one = plan(
        write_yaml,
        "benchmarks:\n- {name: device_to_device, src_device_index: 3, dst_device_index: 1}\n",
    )
    assert [(c.params.source_id, c.params.target_id) for c in one] == [(3, 1)]


def test_collectives_translate_to_our_meshes_and_blocks(write_yaml):
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - {name: all_reduce, matrix_dim: 8, reduce_op: MEAN}
        - {name: reduce_scatter, mesh_shape: 2x2, sharding_strategy: 2x1, matrix_dim: 8}
        """,
    )
    ar, rs = cases
    assert (ar.op, ar.params.ici_size, ar.params.reduce_op) == ("all_reduce", 4, "mean")
    # upstream's (N, D, 256) input as N blocks of D*256 elements
    assert (rs.op, rs.params.num_elements, rs.params.ici_size) == ("psum_scatter", 2048, 4)


def test_the_one_off_command_line_is_typed_and_refuses_unknown_fields(
    tmp_path, run_cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        "run",
        "--run",
        "gemm_generalized",
        "--m",
        "64",
        "--k=32",
        "--n",
        "16",
        "--in_dtype",
        "bfloat16",
        "--transpose_b",  # a bare boolean flag is true
        "--alpha",
        "-0.5",
        "--num_runs",
        "2",
        "--warmup_tries",
        "0",
        "--no-progress",
    )
    assert code == 0, err
    detailed = json.loads((tmp_path / "results" / "gemm_generalized.detailed.json").read_text())
    params = detailed[0]["metadata"]["params"]
    assert (params["m"], params["k"], params["transpose_b"], params["alpha"]) == (
        64,
        32,
        True,
        -0.5,
    )
    assert detailed[0]["metrics"]["actual_runs"] == 2
    code, _, err = run_cli("run", "--run", "gemm_generalized", "--mm", "64")
    assert (code, err) == (
        2,
        "error: --mm: unknown field 'mm' for gemm_generalized (did you mean 'm'?)\n",
    )
    code, _, err = run_cli("run", "--run", "gemm_generalized", "--in_dtype", "fp8")
    assert code == 2 and "dtype 'fp8' is not a jax.numpy name" in err  # upstream's names only
    code, _, err = run_cli("run", "--run", "rope", "--seq_len", "many")
    assert code == 2 and "--seq_len: must be a number, got 'many'" in err
    code, _, err = run_cli("run", "--run", "add", "--m", "8", "--n", "8", "--num_runs", "2")
    assert code == 0, err  # one of this project's ops, by its own parameters
    code, _, err = run_cli("run", "--run", "gemm_generalizd")
    assert code == 2 and "did you mean 'gemm_generalized'?" in err
    with pytest.raises(SystemExit) as stop:  # fields belong to --run only
        run_cli("run", "--config", "x.yaml", "--m", "8")
    assert stop.value.code == 2


def test_upstream_configs_that_upstream_itself_refuses_load_here():
    root = os.path.join(os.path.dirname(__file__), "..", "configs", "jax_bench")
    for name in ("7x/host_device.yaml", "sample_configs/cop.yaml", "sample_configs/sample.yaml"):
        cases = plan_from_file(os.path.join(root, name), RunOptions(max_dim=64))
        assert len({c.origin.benchmark for c in cases}) >= 2


def test_warnings_for_peak_tflops_are_printed_once(write_yaml, capsys):
    plan(
        write_yaml,
        textwrap.dedent(
            """
            hardware: {peak_tflops: 459}
            benchmarks:
            - {name: simple_add, size: 64}
            - {name: simple_add, size: 128}
            """
        ),
    )
    assert capsys.readouterr().err.count("read as tflops") == 1


def test_what_upstream_ignores_is_ignored_with_a_warning(write_yaml, capsys):
    cases = plan(
        write_yaml,
        """
        notes: a key upstream never reads
        hardware: {tflops: 100, hbm_bw: 1000, vendor: acme}
        benchmarks:
        - {name: rope, model: LLM-20B, batch: 1, heads: 1, seq_len: 8}
        - {name: all_gather, matrix_dim: 8, reduce_op: max, mesh_shape: 'a,b'}
        - {name: device_to_device, data_size_mib: 1, direction: sideways, src_device_index: 0, dst_device_index: 1}
        """,
    )
    err = capsys.readouterr().err
    assert "notes: not a jax-bench key" in err
    assert "hardware.vendor: not read" in err
    assert "unknown model preset 'LLM-20B' (did you mean 'LLM-200B'?)" in err
    assert "mesh_shape a,b does not fill the 4 devices: one axis of all of them" in err
    gather = next(c for c in cases if c.op == "all_gather")
    assert gather.params.mesh_shape == "" and gather.origin.fields.as_dict()["reduce_op"] == "max"
    d2d = next(c for c in cases if c.op == "device_to_device")
    assert d2d.params.direction == "uni"  # anything but bi is one way, as upstream reads it


def test_system_and_hardware_precedence_is_upstream_s(write_yaml, run_cli, tmp_path):
    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan as plan_loaded

    def stats(text, hw=None):
        path = write_yaml(text)
        (case,) = plan_loaded(load_config(path), run_options(hw=hw))
        return case.origin.hardware

    entry = "benchmarks: [{name: simple_add, size: 128}]\n"
    assert stats(entry, hw="ironwood").name == "ironwood"  # --hw where nothing names a system
    assert stats("global: {system: ''}\n" + entry, hw="ironwood") is None  # an empty system wins
    block = "hardware: {tflops: 1, hbm_bw: 2}\n"
    assert stats(block + "global: {system: ironwood}\n" + entry).shown == {"tflops": 1, "hbm_bw": 2}
    own = "benchmarks: [{name: simple_add, size: 128, hardware_stats: {tflops: 5}}]\n"
    assert stats(block + own).shown == {"tflops": 5}  # an entry's own beats the block


def test_list_shows_every_jax_bench_name_with_the_ops_that_run_it(run_cli):
    from accelbench.catalogue import all_specs

    code, out, _ = run_cli("list", "--jax-bench", "--json")
    assert code == 0
    records = json.loads(out)
    by_name = {r["name"]: r for r in records}
    assert len(by_name) == 17 and "sigmoid" in by_name  # upstream's sixteen and cop.yaml's sigmoid
    assert by_name["swiglu"]["ops"] == ["swiglu_fwd", "swiglu_bwd"]
    assert by_name["reduce_scatter"]["ops"] == ["psum_scatter"]
    assert all(op in all_specs() for r in records for op in r["ops"])
    assert all(r["notes"] for r in records)  # every departure is said where users look


def test_hbm_curve_keys_may_mix_ints_and_strings_and_cns_traces_go_to_tmp(write_yaml, capsys):
    cases = plan(
        write_yaml,
        """
        global: {xprof_timing: true, xprof_dir: /cns/xx-d/home/me/traces}
        hardware: {tflops: 100, hbm_bw: {"1048576": 1000, 1073741824: 2000}}
        benchmarks: [{name: simple_add, size: 1024}]
        """,
    )
    assert cases[0].origin.hardware.bandwidth_at(1 << 20) == 1000.0
    assert cases[0].outputs.trace_dir == "/tmp/microbenchmarks_tmptrace/cns/xx-d/home/me/traces"
    assert "as jax-bench redirects it" in capsys.readouterr().err


def test_the_jax_bench_command_reads_upstream_s_flags(tmp_path, monkeypatch, capsys):
    from accelbench.dialects.jax_bench.cli import run

    monkeypatch.chdir(tmp_path)

    def answer(*argv):
        code = run(list(argv))
        return code, capsys.readouterr()

    from accelbench.cli import serve

    code = serve(lambda: run([]))
    assert code == 2 and "give --config <yaml> or --run <benchmark_name>" in capsys.readouterr().err
    code = serve(lambda: run(["--config", "x.yaml", "--run", "simple_add"]))
    assert code == 2 and "mutually exclusive" in capsys.readouterr().err
    code, _ = answer("--run", "simple_add", "--size", "256", "--num_runs", "2", "--output", "out")
    assert code == 0
    # --output is a folder holding upstream's two files under upstream's names, ours beside them
    assert (tmp_path / "out" / "summary.csv").is_file() and (
        tmp_path / "out" / "detailed.json"
    ).is_file()
    assert (tmp_path / "out" / "simple_add.csv").is_file()
    code, printed = answer(
        "--run", "simple_add", "--size", "256", "--num_runs", "2", "--output", "out"
    )
    assert code == 0 and (tmp_path / "out" / "summary.2.csv").is_file()  # never replaced
    assert "summary.2.csv" in printed.err


def test_jax_bench_run_with_xprof_dir_leaves_a_trace_xprof_opens(tmp_path, monkeypatch, capsys):
    """`--xprof_dir` under `--run` traces into that folder (upstream ignores it there); xprof's own
    converter reads the session the row names."""
    import csv

    from xprof.convert import raw_to_tool_data

    from accelbench.dialects.jax_bench.cli import run

    monkeypatch.chdir(tmp_path)
    argv = ["--run", "simple_add", "--size", "1024", "--num_runs", "2", "--xprof_dir", "tr"]
    assert run([*argv, "--output", "o1"]) == 0
    sessions = sorted((tmp_path / "tr").rglob("*.xplane.pb"))
    assert sessions, capsys.readouterr().err
    data, content_type = raw_to_tool_data.xspace_to_tool_data(
        [str(sessions[0])], "trace_viewer", {}
    )
    assert content_type == "application/json" and "traceEvents" in str(data)
    (row,) = csv.DictReader(open(tmp_path / "o1" / "simple_add.csv"))
    assert row["trace_path"] and str(tmp_path / "tr") in os.path.abspath(row["trace_path"])
