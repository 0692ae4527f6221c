"""The Ironwood reference dialect as its users' configs are written: sweep rules, block keys, the
reference's parameter spellings, --max-dim, --output_path, metrics_report.jsonl and URL outputs."""

import csv
import json
import statistics
from dataclasses import replace

import fsspec
import pytest
from conftest import ROOT, run_options

from accelbench import catalogue, registrations
from accelbench.catalogue import get_spec
from accelbench.core.options import RunOptions
from accelbench.run.planning import plan_from_file, run_config

CONFIGS = sorted((ROOT / "Ironwood" / "configs").rglob("*.yaml"))


def plan(write_yaml, text, **options):
    return plan_from_file(str(write_yaml(text)), run_options(**options))


def test_value_types_decide_and_block_num_runs_fills_params_that_lack_it(write_yaml):
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - benchmark_name: add
          num_runs: 7
          benchmark_sweep_params:
          - {m: {start: 256, end: 768, increase_by: 256}, n: [64, 128]}
          - {m: 8, n: 8, num_runs: 3}
        """,
    )
    shapes = [(c.params.m, c.params.n, c.run.num_runs) for c in cases]
    assert shapes == [
        (256, 64, 7),
        (256, 128, 7),
        (512, 64, 7),
        (512, 128, 7),
        (768, 64, 7),
        (768, 128, 7),
        (8, 8, 3),  # a param set's own num_runs wins
    ]


def test_warmup_tries_is_the_warmup_count(write_yaml):
    text = "benchmarks:\n- benchmark_name: add\n  warmup_tries: 5\n  benchmark_params: [{m: 8, n: 8}]\n"
    assert plan(write_yaml, text)[0].run.warmup == 5


def test_warmup_and_warmup_tries_together_are_one_error(write_yaml, run_cli):
    path = write_yaml(
        "benchmarks:\n- benchmark_name: add\n  warmup: 1\n  warmup_tries: 5\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, out, err = run_cli("validate", "--config", str(path))
    assert code == 2
    assert err.strip().endswith("benchmarks[0].warmup_tries: give warmup or warmup_tries, not both")


def test_block_topology_goes_into_params_that_lack_it(write_yaml):
    from dataclasses import dataclass

    from accelbench.catalogue import param
    from accelbench.ops.pointwise import MatrixParams

    @dataclass(frozen=True)
    class WithTopology(MatrixParams):
        topology: str = param("str", "1x1")

    probe = replace(get_spec("add"), name="probe", typed=WithTopology)
    with registrations.scoped():
        catalogue.register(probe)
        for impl in catalogue.implementations("add", "jax").values():
            catalogue.add_implementation(replace(impl, op="probe"))
        cases = plan(
            write_yaml,
            """
        benchmarks:
        - benchmark_name: probe
          topology: 4x4x4
          benchmark_sweep_params:
          - {m: 8, n: 8}
          - {m: 8, n: 16, topology: 2x2x1}
        """,
        )
    assert [c.params.topology for c in cases] == ["4x4x4", "2x2x1"]


def test_topology_on_an_op_without_it_is_a_one_line_error(write_yaml, run_cli):
    path = write_yaml(
        "benchmarks:\n- benchmark_name: add\n  topology: 2x2\n  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 2 and err.count("\n") == 1
    assert "benchmarks[0].topology: op 'add' takes no topology" in err


def test_the_reference_parameter_spellings_are_accepted(write_yaml):
    cases = plan(
        write_yaml,
        """
        benchmarks:
        - benchmark_name: gemm_simple_with_dtype
          benchmark_sweep_params:
          - {m: 8, k: 16, n: 32, in_dtype_str: [bf16, FP8], out_dtype_str: bf16}
        - benchmark_name: quantization
          benchmark_sweep_params:
          - {m_range: {start: 8, end: 16, multiplier: 2}, n: 32, quant_dtype: float4_e2m1fn}
        """,
    )
    gemms = [c.params for c in cases if c.op == "gemm_simple_with_dtype"]
    assert [(p.in_dtype, p.out_dtype) for p in gemms] == [
        ("bfloat16", "bfloat16"),
        ("float8_e4m3fn", "bfloat16"),
    ]
    assert {c.params.qdtype for c in cases if c.op == "quantization"} == {"float4_e2m1fn"}


def test_max_dim_clamps_every_dimension_and_merges_equal_cases(write_yaml):
    text = """
        benchmarks:
        - benchmark_name: gemm_simple
          benchmark_sweep_params:
          - {m: [1, 64, 128, 4096], k: 18432, n: 16384}
        """
    assert len(plan(write_yaml, text)) == 4
    cases = plan(write_yaml, text, max_dim=64)
    assert [(c.params.m, c.params.k, c.params.n) for c in cases] == [
        (1, 64, 64),
        (64, 64, 64),
    ]


def test_output_path_moves_traces_and_hlo_dumps_as_the_reference_does(write_yaml):
    text = (
        "benchmarks:\n- benchmark_name: add\n  trace_dir: t\n  benchmark_params: [{m: 8, n: 8}]\n"
    )
    (case,) = plan(write_yaml, text, output_path="/runs/7")
    assert case.outputs.trace_dir == "/runs/7/add/trace"
    assert case.outputs.xla_dump_dir == "/runs/7/add/hlo_graphs"


def test_xlml_metrics_dir_gets_one_reference_record_per_case(tmp_path, write_yaml, run_cli):
    path = write_yaml(
        f"""
        benchmarks:
        - benchmark_name: add
          num_runs: 4
          csv_path: {tmp_path}/out.csv
          xlml_metrics_dir: {tmp_path}/xlml
          benchmark_params: [{{m: 16, n: 32}}, {{m: 32, n: 32}}]
        """
    )
    code, _, _ = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0
    lines = (tmp_path / "xlml" / "metrics_report.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 2 and all(set(r) == {"metrics", "dimensions"} for r in records)
    first = records[0]
    dims, metrics = first["dimensions"], first["metrics"]
    assert all(isinstance(v, str) for v in dims.values())
    assert dims["test_name"] == "add" and dims["testsuite"] == "microbenchmark"
    assert (dims["m"], dims["n"], dims["dtype"]) == ("16", "32", "bfloat16")
    assert dims["test_start_timestamp"] <= dims["test_end_timestamp"]
    assert metrics["step_time_ms_num_runs"] == 4
    for family in ("step_time_ms", "Gbytes_per_sec", "tflops_per_sec_pre_device"):
        for stat in ("p10", "p50", "p90", "p95", "p99", "avg", "min", "max"):
            assert f"{family}_{stat}" in metrics
    with open(tmp_path / "out.csv") as f:
        row = next(csv.DictReader(f))
    samples = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])["samples_s"]
    # per-iteration numbers: the median bandwidth is the median of each iteration's bytes over its
    # time (not the bytes over a sum of times), whatever the machine's load did to the samples
    gbps = statistics.median(float(row["model_bytes"]) / t / 1e9 for t in samples)
    assert metrics["Gbytes_per_sec_p50"] == pytest.approx(gbps, rel=1e-6)
    assert float(dims["StepTime(median,ms)"]) == pytest.approx(metrics["step_time_ms_p50"])


def test_url_outputs_are_staged_and_copied_and_never_silently_replaced(write_yaml, run_cli):
    fs = fsspec.filesystem("memory")
    path = write_yaml(
        """
        benchmarks:
        - benchmark_name: add
          csv_path: memory://bucket/run/add.csv
          trace_dir: memory://bucket/run/traces
          xlml_metrics_dir: memory://bucket/run/xlml
          benchmark_params: [{m: 8, n: 8}]
        """
    )
    try:
        code, _, _ = run_cli("run", "--config", str(path), "--no-progress", "--num-runs", "2")
        assert code == 0
        assert fs.exists("memory://bucket/run/add.csv")
        assert fs.exists("memory://bucket/run/add.jsonl")
        assert fs.exists("memory://bucket/run/xlml/metrics_report.jsonl")
        assert fs.find("memory://bucket/run/traces")  # the xprof run was copied too
        with fs.open("memory://bucket/run/add.csv", "r") as f:
            assert len(list(csv.DictReader(f))) == 1
        code, _, err = run_cli("run", "--config", str(path), "--no-progress", "--num-runs", "2")
        assert code == 2 and "the results file exists" in err
        code, _, err = run_cli(
            "run", "--config", str(path), "--no-progress", "--num-runs", "2", "--resume"
        )
        assert code == 0 and "1 of 1 case already done" in err
        with fs.open("memory://bucket/run/add.csv", "r") as f:
            assert len(list(csv.DictReader(f))) == 1
    finally:
        fs.rm("memory://bucket", recursive=True)


def test_an_unknown_url_protocol_is_a_one_line_error(write_yaml, run_cli, tmp_path):
    path = write_yaml(
        "benchmarks:\n- benchmark_name: add\n  csv_path: nosuch://b/x.csv\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 2 and err.count("\n") == 1 and "nosuch://" in err


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_shipped_ironwood_config_runs_at_max_dim_64_on_cpu(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = run_config(str(config), RunOptions(max_dim=64, num_runs=2, progress=False))
    rows = [
        row
        for path in tmp_path.rglob("*.csv")
        for row in csv.DictReader(open(path))  # noqa: SIM115
    ]
    assert rows and {r["status"] for r in rows} <= {"ok", "unsupported"}
    measured = any(r["status"] == "ok" for r in rows)
    assert code == (0 if measured else 3)  # a slice's collectives need more devices than 4
    assert all(r["check"] == "passed" for r in rows if r["status"] == "ok")


def test_an_unwritable_metrics_dir_is_refused_before_anything_runs(tmp_path, write_yaml, run_cli):
    (tmp_path / "afile").write_text("x")
    path = write_yaml(
        f"""
        benchmarks:
        - benchmark_name: add
          csv_path: {tmp_path}/out.csv
          xlml_metrics_dir: {tmp_path}/afile/xlml
          benchmark_params: [{{m: 8, n: 8}}]
        """
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 2 and err.count("\n") == 1 and "xlml_metrics_dir" in err
    assert not (tmp_path / "out.csv").exists()


def test_run_on_local_node_of_the_reference_pull_request_130_loads_and_changes_nothing(
    write_yaml, run_cli
):
    """Every case here runs on one device of this process, which is what run_on_local_node asks."""
    entry = "{m: 64, k: 64, n: 64, dtype: bfloat16, gap_strategy: data_gen_once_noblock%s}"
    text = "benchmarks:\n- benchmark_name: gemm_throttling\n  benchmark_params: [" + entry + "]\n"
    (plain,) = plan(write_yaml, text % "")
    (local,) = plan(write_yaml, text % ", run_on_local_node: true")
    assert local.id == plain.id
    code, _, err = run_cli("validate", "--config", str(write_yaml(text % ", run_on_local_node: 1")))
    assert code == 2 and "run_on_local_node must be true or false" in err
