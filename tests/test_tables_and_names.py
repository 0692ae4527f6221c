"""Issue 60's small things: CSV and JSON tables under the results file's names, every identifying
parameter shown, a bench() row named by its function, the runs of a multi-run roofline told apart,
`runs` naming the code under test's commit, TPUMS's one name for a rate, the README's command table."""

import json
import subprocess
from pathlib import Path

from test_compare_report import row, write

from accelbench.results.display import REPORT, as_text, cells
from accelbench.results.reading import read_rows

ROOT = Path(__file__).parent.parent


def _rows(tmp_path):
    write(
        tmp_path / "r.csv",
        [row(1, 1e-3, dtype="float32", timing_source="cupti", implementation="jit")],
    )
    return read_rows(str(tmp_path / "r.csv"))


def test_csv_and_json_tables_use_the_results_file_names(tmp_path):
    rows = _rows(tmp_path)
    (record,) = json.loads(as_text(rows, REPORT, "json"))
    assert record["backend"] == "jax" and record["implementation"] == "jit"
    assert record["timing_source"] == "cupti" and "timing" not in record
    header = as_text(rows, REPORT, "csv").splitlines()[0].split(",")
    assert {"backend", "implementation", "timing_source", "time_median_s"} <= set(header)


def test_a_parameter_every_row_shares_is_still_shown(tmp_path):
    columns, grid = cells(_rows(tmp_path))
    params = grid[0][[c.key for c in columns].index("params")]
    assert "dtype=float32" in params


def test_validate_list_shows_every_identifying_parameter(tmp_path, run_cli):
    config = tmp_path / "c.yaml"
    config.write_text(
        "backend: jax\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, dtype: float32}, {m: 16, n: 8, dtype: float32}]\n"
    )
    code, out, err = run_cli("validate", "--config", str(config), "--list")
    assert code == 0, err
    assert out.count("dtype=float32") == 2


def test_bench_rows_are_named_by_their_function(tmp_path, run_cli):
    import numpy as np

    import accelbench

    def my_matmul(x):
        return x @ x

    result = accelbench.bench(my_matmul, np.ones((8, 8)), num_runs=3, warmup=0)
    path = accelbench.save([result], str(tmp_path / "b.csv"))
    code, _, _ = run_cli("report", path, "--output-dir", str(tmp_path / "rep"))
    table = (tmp_path / "rep" / "summary.md").read_text().split("| op")[1]
    line = table.splitlines()[2]
    assert code == 0 and "my\\_matmul" in line and "callable" not in table
    assert "name=" not in line  # the op's name already


def test_a_roofline_over_several_runs_gives_each_run_its_marker(tmp_path):
    from accelbench.results.report import plt, roofline

    rows = []
    for source in ("before", "after"):
        write(
            tmp_path / f"{source}.csv", [row(1, 1e-3, tflop_per_s=1.0, intensity_flop_per_byte=2.0)]
        )
        for r in read_rows(str(tmp_path / f"{source}.csv")):
            r.source = source
            rows.append(r)
    drawn = []
    real = plt.subplots

    def kept(*args, **kwargs):
        fig, ax = real(*args, **kwargs)
        drawn.append(ax)
        return fig, ax

    plt.subplots = kept
    try:
        assert roofline(rows, str(tmp_path / "roof.png")) == 2
    finally:
        plt.subplots = real
    labels = [t.get_text() for t in drawn[0].get_legend().get_texts()]
    assert "before" in labels and "after" in labels


def test_runs_names_the_code_under_tests_commit_beside_the_harness(tmp_path, run_cli, monkeypatch):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "c.yaml").write_text(
        "backend: numpy\nnum_runs: 2\nwarmup: 0\nbenchmarks:\n- benchmark_name: fault\n"
        "  csv_path: results/r.csv\n  benchmark_params: [{n: 8}]\n"
    )
    subprocess.run([*git, "add", "c.yaml"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "c"], check=True)
    mine = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    monkeypatch.chdir(tmp_path)
    assert run_cli("run", "--config", "c.yaml", "-q")[0] == 0
    code, out, _ = run_cli("runs", "--json")
    (stored,) = json.loads(out)
    assert stored["tested"] == mine.stdout.strip() and stored["date"]
    code, out, _ = run_cli("runs")
    assert "tested commit" in out and "harness commit" in out and mine.stdout.strip() in out


def test_tpums_names_a_rate_as_upstream_does():
    from accelbench.benchmarks.base import TPUMS

    rates = {
        n: [c for c, _ in TPUMS[n].report_columns if "_per_" in c]
        for n in ("gemm", "hbm", "all_reduce")
    }
    assert rates["gemm"] == ["wall_clock_tflops_per_device", "xprof_tflops_per_device"]
    assert rates["hbm"] == [
        "wall_clock_bandwidth_per_device_gb_s",
        "xprof_bandwidth_per_device_gb_s",
    ]
    assert rates["all_reduce"] == [
        "wall_clock_bandwidth_per_chip_gb_s",
        "xprof_bandwidth_per_chip_gb_s",
    ]


def test_the_readme_command_table_lists_every_command():
    readme = (ROOT / "README.md").read_text()
    for command in (
        "microbench traces",
        "list --torchao",
        "microbench history",
        "microbench publish",
    ):
        assert command in readme
