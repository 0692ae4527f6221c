"""What a new user meets on a first run: runs that never collide, compare that pairs what it should,
labels that survive any table, a run that measured nothing failing, one thread on a CPU."""

import csv
import json
import os

import pytest

from accelbench.results.columns import header

CONFIG = """
num_runs: 3
warmup: 1
benchmarks:
- benchmark_name: add
  csv_path: out/r.csv
  benchmark_sweep_params: [{m: [8, 16], n: 8}]
"""


def test_the_same_command_twice_keeps_both_runs_and_compare_takes_the_last_two(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG)
    for _ in range(3):
        code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
        assert code == 0, err
    out = tmp_path / "out"
    assert sorted(p.name for p in out.glob("*.csv")) == ["r.2.csv", "r.3.csv", "r.csv"]
    assert "run 3 of this config" in err
    record = json.loads((out / "r.3.run.json").read_text())
    assert record["files"] == ["out/r.3.csv"] and record["environment"]["python"]
    assert isinstance(record["environment"]["packages"], dict)
    code, text, _ = run_cli("compare", "--config", "c.yaml", "--json")
    assert code in (0, 1)
    assert len(json.loads(text)["pairs"]) == 2  # run 2 against run 3, case by case
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress", "--resume")
    assert code == 0 and "2 of 2 cases already done" in err  # the latest run, continued
    assert not (out / "r.4.csv").exists()


def test_a_refused_run_leaves_no_record(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG.replace("out/r.csv", "blocker/r.csv"))
    (tmp_path / "blocker").write_text("a file")
    code, _, _ = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "c.yaml"]


COLUMNS = header(["m", "n"], [])


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})


def twin(name, median, case_id):
    return {
        "case_id": case_id,
        "status": "ok",
        "op": "add",
        "backend": "torch",
        "implementation": name,
        "m": 256,
        "n": 256,
        "time_median_s": median,
        "time_p10_s": median * 0.99,
        "time_p90_s": median * 1.01,
    }


def test_compare_pairs_eager_with_eager_and_compiled_with_compiled(tmp_path, run_cli):
    """A's eager and compiled rows differ by 10x; each is compared with B's row of the same twin."""
    write(tmp_path / "a.csv", [twin("eager", 1e-3, "a1"), twin("compile", 1e-4, "a2")])
    write(tmp_path / "b.csv", [twin("compile", 1e-4, "b2"), twin("eager", 1.01e-3, "b1")])
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--json")
    ratios = {p["case"]: p["ratio"] for p in json.loads(out)["pairs"]}
    assert ratios == {
        "add torch:compile m=256 n=256": pytest.approx(1.0),
        "add torch:eager m=256 n=256": pytest.approx(1.01),
    }
    assert code == 0


def test_compare_refuses_a_side_with_two_rows_of_one_case(tmp_path, run_cli):
    write(tmp_path / "a.csv", [twin("eager", 1e-3, "a1")])
    write(tmp_path / "b.csv", [twin("eager", 1e-3, "b1"), twin("eager", 1e-2, "b2")])
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert code == 1 and "ambiguous" in out


def test_labels_from_files_are_text_not_markup(tmp_path, run_cli):
    rows = [twin("[bold]eager[/bold]", 1e-3, "a1"), twin("[/x]", 2e-3, "a2")]
    write(tmp_path / "a.csv", rows)
    write(tmp_path / "b.csv", rows)
    code, out, _ = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert code == 0 and "[bold]eager[/bold]" in out and "[/x]" in out


def test_a_run_that_measured_nothing_is_not_green(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8, device: 99}]\n"
    )
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 3
    assert "nothing was measured: 1 case, all unsupported here" in err


def test_pytorch_runs_on_one_cpu_thread_unless_the_config_asks(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "backend: torch\nnum_runs: 2\nbenchmarks:\n- benchmark_name: add\n  implementation: eager\n"
        "  benchmark_sweep_params: [{m: 8, n: 8, threads: [null, 2]}]\n".replace("null, ", "")
    )
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 0, err
    (row,) = list(csv.DictReader(open(tmp_path / "results" / "c.csv")))
    assert row["thread_count"] == "2"  # asked for
    (tmp_path / "d.yaml").write_text(
        "backend: torch\nnum_runs: 2\nbenchmarks:\n- benchmark_name: add\n  implementation: eager\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    code, _, err = run_cli("run", "--config", "d.yaml", "--no-progress")
    (row,) = list(csv.DictReader(open(tmp_path / "results" / "d.csv")))
    assert row["thread_count"] == "1" and "host threads: torch 1 (one by default" in err


def test_a_narrow_terminal_keeps_what_tells_rows_apart():
    from rich.console import Console

    from accelbench.errors import Status
    from accelbench.results.records import Derived, Identity, Row, TimeStats
    from accelbench.results.sinks.summary import summary_table

    rows = [
        Row(
            identity=Identity(
                op="torchao_inference", backend="torch", status=Status.OK, implementation="eager"
            ),
            params={"m": 16384, "k": 8192, "n": 1280, "recipe": recipe, "sparsity": "none"},
            stats=TimeStats(time_median_s=1e-3, iqr_over_median_ratio=0.02),
            derived=Derived(tflop_per_s=300.0, gb_per_s=900.0),
        )
        for recipe in ("int8wo", "int8dq")
    ]
    table, dropped = summary_table(rows, 110)
    console = Console(width=110, record=True)
    console.print(table)
    text = console.export_text()
    assert "recipe=int8wo" in text and "recipe=int8dq" in text  # never cut
    # the names fold before a figure is left out (trial finding 2)
    assert max(len(line) for line in text.splitlines()) <= 110 and not dropped
    assert "TFLOP/s" in text and "GB/s" in text and "16384x8192x1280" in text


def test_a_config_and_a_link_to_it_are_one_series(tmp_path, monkeypatch, run_cli):
    """Trial finding 1: `run` with no config takes the packaged quickstart that configs/quickstart.yaml
    links to; the two runs are runs 1 and 2 of one series for numbering, compare, runs and history."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "c.yaml").write_text(CONFIG.replace("  csv_path: out/r.csv\n", ""))
    (tmp_path / "c.yaml").symlink_to(os.path.join("pkg", "c.yaml"))
    for config in ("c.yaml", "pkg/c.yaml"):
        assert run_cli("run", "--config", config, "--no-progress")[0] == 0
    for args in ((), ("1", "2"), ("--config", "c.yaml"), ("--config", "pkg/c.yaml")):
        code, out, err = run_cli("compare", *args, "--json")
        assert code in (0, 1) and len(json.loads(out)["pairs"]) == 2, (args, err)
    for config in ("c.yaml", "pkg/c.yaml"):
        code, out, _ = run_cli("runs", "--config", config, "--json")
        assert [r["number"] for r in json.loads(out)] == [1, 2]
