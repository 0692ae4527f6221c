"""The everyday workflow (issue 36): runs named and listed, compared by number or name, a filtered run
compared on its own cases, --backend over a config, a config-wide implementation."""

import csv
import json

import pytest
from conftest import ROOT

CONFIG = (
    "backend: [jax, torch]\nnum_runs: 3\nbenchmarks:\n- benchmark_name: add\n"
    "  benchmark_params: [{m: 8, n: 8}, {m: 16, n: 8}]\n"
)


@pytest.fixture
def three_runs(tmp_path, monkeypatch, run_cli):
    """Run 1 named 'base', run 2 unnamed, run 3 of a selection named 'jaxonly'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG)
    assert run_cli("run", "--config", "c.yaml", "--name", "base", "-q")[0] == 0
    assert run_cli("run", "--config", "c.yaml", "-q")[0] == 0
    assert (
        run_cli("run", "--config", "c.yaml", "--skip", "*torch*", "--name", "jaxonly", "-q")[0] == 0
    )
    return tmp_path


@pytest.mark.slow  # over a second: the full suite runs it
def test_runs_are_listed_with_their_names_and_selections(three_runs, run_cli):
    code, out, _ = run_cli("runs", "--config", "c.yaml", "--json")
    runs = json.loads(out)
    assert code == 0 and [(r["number"], r["name"]) for r in runs] == [
        (1, "base"),
        (2, None),
        (3, "jaxonly"),
    ]
    assert (
        runs[2]["selection"] == {"only": [], "skip": ["*torch*"]} and runs[0]["selection"] is None
    )
    assert [r["rows"] for r in runs] == [6, 6, 2]  # jax, torch eager and compiled, two shapes
    code, out, _ = run_cli("runs", "--config", "c.yaml")
    assert code == 0 and "jaxonly" in out


@pytest.mark.slow  # over a second: the full suite runs it
def test_compare_takes_run_numbers_and_names(three_runs, run_cli):
    code, out, _ = run_cli("compare", "base", "2", "--config", "c.yaml", "--json")
    assert code in (0, 1) and len(json.loads(out)["pairs"]) == 6
    code, _, err = run_cli("compare", "base", "nightly", "--config", "c.yaml")
    assert code == 2 and "its runs: 1 'base', 2, 3 'jaxonly'" in err


@pytest.mark.slow  # over a second: the full suite runs it
def test_a_filtered_run_is_compared_on_its_own_cases(three_runs, run_cli):
    # with no files: the latest run (a selection) against the one before, on its two cases only
    code, out, _ = run_cli("compare", "--config", "c.yaml", "--json")
    record = json.loads(out)
    assert len(record["pairs"]) == 2 and record["failed_in_candidate"] == []
    assert all("missing" not in p["verdict"] for p in record["pairs"])
    code, out, _ = run_cli("compare", "base", "jaxonly", "--config", "c.yaml", "--json")
    assert len(json.loads(out)["pairs"]) == 2


def test_backend_on_the_command_line_runs_a_config_on_it(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(CONFIG)
    out = tmp_path / "o.csv"
    assert (
        run_cli(
            "run", "--config", str(tmp_path / "c.yaml"), "--backend", "jax", "-o", str(out), "-q"
        )[0]
        == 0
    )
    with open(out) as f:
        assert {r["backend"] for r in csv.DictReader(f)} == {"jax"}


def test_a_top_level_implementation_applies_to_every_benchmark(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "implementation: eager\nbackend: torch\nbenchmarks:\n- benchmark_name: add\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, out, _ = run_cli("validate", "--config", str(tmp_path / "c.yaml"), "--json")
    assert code == 0 and [c["implementation"] for c in json.loads(out)] == ["eager"]


def test_run_shows_chosen_columns_sorted_in_a_chosen_format(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(CONFIG)
    out = tmp_path / "o.csv"
    code, text, _ = run_cli(
        "run",
        "--config",
        str(tmp_path / "c.yaml"),
        "-o",
        str(out),
        "--columns",
        "median,min,mean,std",
        "--sort=-median",
        "--format",
        "csv",
    )
    assert code == 0
    lines = list(csv.reader(text.splitlines()))
    # what tells rows apart comes first, the shape included, then the columns asked for, named with
    # their unit and holding numbers (seconds), as the results files do (issue 45)
    asked = ["time_median_s", "time_min_s", "time_mean_s", "time_std_s"]
    assert lines[0] in (  # the backend's column is the file's backend and implementation (issue 60)
        ["op", "backend", "implementation", "shape", "status", *asked],
        ["op", "backend", "implementation", "shape", "params", "status", *asked],
    )
    medians = [float(line[lines[0].index("time_median_s")]) for line in lines[1:]]
    assert medians == sorted(medians, reverse=True) and all(0 < m < 10 for m in medians)
    code, text, _ = run_cli(
        "run",
        "--config",
        str(tmp_path / "c.yaml"),
        "-o",
        str(tmp_path / "p.csv"),
        "--columns",
        "median,samples",
        "--sort",
        "median",
        "--format",
        "json",
    )
    records = json.loads(text)
    medians = [r["time_median_s"] for r in records]
    assert medians == sorted(medians) and all(r["sample_count"] == 3 for r in records)
    code, text, _ = run_cli(
        "run",
        "--config",
        str(tmp_path / "c.yaml"),
        "-o",
        str(tmp_path / "m.csv"),
        "--format",
        "markdown",
    )
    assert text.splitlines()[0].startswith("| op | backend |")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--columns", "medain")
    assert code == 2 and "unknown column 'medain'" in err and "(did you mean 'median'?)" in err


@pytest.mark.slow  # over a second: the full suite runs it
def test_compare_and_report_take_folders_and_patterns(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(CONFIG)
    for side in ("before", "after"):
        assert (
            run_cli(
                "run",
                "--config",
                str(tmp_path / "c.yaml"),
                "--output-dir",
                str(tmp_path / side),
                "-q",
            )[0]
            == 0
        )
    code, text, _ = run_cli("compare", str(tmp_path / "before"), str(tmp_path / "after"), "--json")
    assert len(json.loads(text)["pairs"]) == 6  # every results file of each folder
    code, text, _ = run_cli(
        "compare",
        str(tmp_path / "before" / "*.csv"),
        str(tmp_path / "after"),
        "--format",
        "csv",
        "--sort",
        "ratio",
    )
    assert code in (0, 1) and text.splitlines()[0].startswith("case,")
    code, _, err = run_cli(
        "report",
        str(tmp_path / "*" / "c.csv"),
        "--output-dir",
        str(tmp_path / "R"),
        "--columns",
        "median,samples",
    )
    assert code == 0, err
    page = (tmp_path / "R" / "summary.md").read_text()
    assert "2 results files" in page and "samples" in page
    code, _, err = run_cli("report", str(tmp_path / "R"), "--output-dir", str(tmp_path / "R2"))
    assert code == 2 and "holds no results file of this harness" in err


@pytest.mark.slow  # several runs
def test_runs_are_found_as_users_name_them_across_configs(tmp_path, monkeypatch, run_cli):
    """Issue 45: a label given with one config resolves without repeating it; `runs` lists every
    stored run under the results folder with its commit; a one-off `--run` is its own series, never
    mistaken for a config of the same name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  backend: numpy\n  num_runs: 6\n  warmup: 0\n"
        "  benchmark_params: [{n: 8}]\n"
    )
    (tmp_path / "fault.yaml").write_text((tmp_path / "w.yaml").read_text())
    assert run_cli("run", "--config", "w.yaml", "--name", "base", "-q")[0] == 0
    assert run_cli("run", "--config", "w.yaml", "--name", "new", "-q")[0] == 0
    code, out, err = run_cli("compare", "base", "new", "--json")
    assert code in (0, 1) and len(json.loads(out)["pairs"]) == 1, err
    code, out, _ = run_cli("compare")  # the last two runs of what ran last
    assert code in (0, 1) and "fault" in out
    # a one-off of the op named like the second config: its own run, not one of fault.yaml's
    assert run_cli("run", "--config", "fault.yaml", "-q")[0] == 0
    assert run_cli("run", "--run", "fault", "--n", "8", "--backend", "numpy", "-q")[0] == 0
    code, out, _ = run_cli("runs", "--config", "fault.yaml", "--json")
    assert [r["one_off"] for r in json.loads(out)] == [None]
    code, out, _ = run_cli("runs", "--json")
    listed = json.loads(out)
    assert [r["name"] for r in listed][:2] == ["base", "new"] and len(listed) == 4
    assert any(r["one_off"] and r["one_off"].startswith("fault") for r in listed)
    assert all(r["commit"] for r in listed) or not (ROOT / ".git").exists()
    code, out, _ = run_cli("runs")
    assert code == 0 and "base" in out and "--run fault" in out
