"""Issue 47's classes, each through its command line: nothing lost on resume, one stop/resume contract
for every command line, alarms owned by their case, a suite report of this run only, and names and
texts from files that stay where they belong. Each test failed before the fix it names."""

from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelbench.cli import main

FAULT = "backend: numpy\nnum_runs: 2\nwarmup: 0\nbenchmarks:\n"
SIMPLE_ADD = (
    "global: {num_runs: 2, warmup_tries: 0}\nbenchmarks:\n"
    "- {name: simple_add, size: 256}\n- {name: simple_add, size: 512}\n"
)


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "JAX_PLATFORMS": "cpu"}


def test_resume_gives_the_pair_back_a_case_a_kill_left_in_the_rows_only(tmp_path, capsys):
    """A kill between the rows and the pair leaves a finished case out of summary.csv and
    detailed.json; --resume (now taken by jax-bench, into the same pair) hands it its stored row."""
    config = tmp_path / "c.yaml"
    config.write_text(SIMPLE_ADD)
    out = tmp_path / "out"
    assert main(["jax-bench", "--config", str(config), "--output", str(out)]) == 0
    detailed = json.loads((out / "detailed.json").read_text())
    assert len(detailed) == 2
    (out / "detailed.json").write_text(json.dumps(detailed[:1]))
    lines = (out / "summary.csv").read_text().splitlines()
    (out / "summary.csv").write_text("\n".join(lines[:2]) + "\n")
    capsys.readouterr()

    assert main(["jax-bench", "--config", str(config), "--output", str(out), "--resume"]) == 0
    assert "2 of 2 cases already done" in capsys.readouterr().err
    again = json.loads((out / "detailed.json").read_text())
    assert [e["microbench"]["case_id"] for e in again] == [
        e["microbench"]["case_id"] for e in detailed
    ]
    assert len(rows(out / "summary.csv")) == 2 and not (out / "summary.2.csv").exists()
    assert (
        again[1]["raw_times_ms"] == detailed[1]["raw_times_ms"]
    )  # the stored samples, not new ones


@pytest.mark.parametrize(
    "command",
    [
        ["jax-bench", "--config", "c.yaml", "--resume"],
        ["tpums", "benchmark", "run-config", "t.yaml", "--resume"],
        ["tpums", "benchmark", "run", "gemm", "--m", "16", "--resume"],
        ["tpums", "suite", "run", "s.yaml", "--resume"],
    ],
)
def test_every_command_line_takes_resume_and_overwrite(command, tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(SIMPLE_ADD)
    Path("t.yaml").write_text(
        "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16, num_runs: 2}}\n"
    )
    Path("s.yaml").write_text("suite_name: s\nconfigs: [t.yaml]\n")
    code, _, err = run_cli(*command)
    assert code == 0 and "unexpected" not in err and "ignored" not in err, err
    code, _, err = run_cli(*command)  # the second time: all done
    assert code == 0 and "already done" in err, err
    code, _, err = run_cli(*command, "--overwrite")
    assert code == 2 and "give one" in err


def _wait_for_rows(path: Path, proc: subprocess.Popen[str], n: int = 1) -> None:
    deadline = time.monotonic() + 120
    while not path.exists() or len(rows(path)) < n:
        assert time.monotonic() < deadline and proc.poll() is None, (
            proc.stderr and proc.stderr.read()
        )
        time.sleep(0.1)


@pytest.mark.slow  # real processes and a signal
def test_sigterm_stops_the_suite_and_its_printed_command_finishes_it(tmp_path):
    """The first config's second case is running when SIGTERM comes: the suite stops there (exit
    143, the next config never starts); the command it prints, run as printed, finishes the suite."""
    (tmp_path / "f.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  csv_path: out/f/r.csv\n  benchmark_params:\n"
        "  - {n: 8}\n  - {n: 9, mode: hang, seconds: 1.5}\n"
    )
    (tmp_path / "g.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 7}]\n"
    )
    (tmp_path / "s.yaml").write_text("suite_name: s\nconfigs: [f.yaml, g.yaml]\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelbench", "tpums", "suite", "run", "s.yaml", "--output_dir", "out"],
        cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_for_rows(tmp_path / "out" / "f" / "r.csv", proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert not (tmp_path / "out" / "g").exists() and "Traceback" not in err
    printed = err.rsplit("to finish the sweep run: ", 1)[1].splitlines()[0]
    assert printed.startswith(f"{sys.executable} -m accelbench tpums suite run s.yaml")
    done = subprocess.run(
        shlex.split(printed), cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "1 of 2 cases already done" in done.stderr
    assert len(rows(tmp_path / "out" / "f" / "r.csv")) == 2
    assert (tmp_path / "out" / "consolidated_report.md").exists()


@pytest.mark.slow  # a real process: a stray SIGALRM would kill it
def test_a_tiny_timeout_never_outlives_its_case(tmp_path):
    """A timeout of a few microseconds on every case of a sweep: each case gets its own row (ok or
    timeout), the process survives to the end, and no later case carries another's alarm."""
    sizes = ", ".join(str(8 + i) for i in range(40))
    (tmp_path / "c.yaml").write_text(
        "backend: numpy\nnum_runs: 3\nwarmup: 0\ntimeout_s: 0.00002\nbenchmarks:\n"
        f"- benchmark_name: fault\n  benchmark_sweep_params: [{{n: [{sizes}]}}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "accelbench", "run", "--config", "c.yaml", "-o", "r.csv"],
        cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    found = rows(tmp_path / "r.csv")
    assert len(found) == 40
    assert {r["status"] for r in found} <= {"ok", "timeout"}


def test_a_suite_entry_named_dots_stays_inside_the_output_folder(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("...yaml").write_text(
        "benchmark: {name: gemm, params: {m: 16, k: 16, n: 16, num_runs: 2}}\n"
    )
    Path("s.yaml").write_text("suite_name: s\nconfigs: ['...yaml']\n")
    code, _, err = run_cli("tpums", "suite", "run", "s.yaml", "--output_dir", "deep/out")
    assert code == 0, err
    inside = {p.relative_to(tmp_path).parts[:2] for p in tmp_path.rglob("*.csv")}
    assert inside == {("deep", "out")}


def test_the_report_shows_this_runs_rows_only_and_escapes_every_cell(
    tmp_path, monkeypatch, run_cli
):
    """A rerun's report shows the rerun's rows (not the first run's too), the field that tells its
    rows apart, an Ironwood-layout config's rows, and file text as text (no new table row, no HTML)."""
    monkeypatch.chdir(tmp_path)
    Path("h.yaml").write_text(
        "benchmark: {name: hbm, params: {num_runs: 2}, sweep: {num_elements: [1024, 2048]}}\n"
    )
    Path("f.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n")
    Path("s.yaml").write_text(
        "suite_name: '<b>s</b>'\ndescription: 'a | b\\x1b[2J'\nconfigs: [h.yaml, f.yaml]\n"
    )
    for _ in range(2):
        assert run_cli("tpums", "suite", "run", "s.yaml", "--output_dir", "o")[0] == 0
    report = Path("o/consolidated_report.md").read_text()
    table = report.split("## h.yaml", 1)[1].split("##", 1)[0]
    assert len([line for line in table.splitlines() if line.startswith("|")]) == 2 + 2
    assert "num\\_elements" in table and "1024" in table and "2048" in table
    assert "No case" not in report.split("## f.yaml", 1)[1]  # the Ironwood layout's row is shown
    assert "a \\| b" in report and "\x1b" not in report
    html = Path("o/consolidated_report.html").read_text()
    assert "<b>" not in html and "&lt;b&gt;" in html and "\x1b" not in html


def test_an_unwritable_config_folder_is_said_in_the_report_and_the_suite_goes_on(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    Path("a.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n")
    Path("b.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 9}]\n")
    Path("s.yaml").write_text("suite_name: s\nconfigs: [a.yaml, b.yaml]\n")
    Path("o").mkdir()
    Path("o/a").write_text("a file where the folder goes")
    code, _, err = run_cli("tpums", "suite", "run", "s.yaml", "--output_dir", "o")
    assert code == 2 and "error:" in err
    report = Path("o/consolidated_report.md").read_text()
    assert "## a.yaml" in report and "## b.yaml" in report
    assert len(rows(next(Path("o/b").glob("*.csv")))) == 1


def test_terminal_escapes_from_a_file_never_reach_the_terminal(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n")
    for name in ("a", "b"):  # a file written elsewhere, its label carrying a terminal escape
        assert run_cli("run", "--config", "c.yaml", "-o", f"{name}.csv", "--no-progress")[0] == 0
        text = Path(f"{name}.csv").read_text()
        Path(f"{name}.csv").write_text(text.replace(",numpy,numpy,", ",numpy,num\x1b[2Jpy,"))
    for fmt in ("csv", "markdown"):
        code, out, err = run_cli("compare", "a.csv", "b.csv", "--format", fmt)
        assert "\x1b" not in out + err and "\\x1b" in out, (fmt, out)


def test_a_quoted_file_name_is_never_globbed_again(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    for n, name in ((8, "r1.csv"), (16, "r[1].csv")):
        Path("c.yaml").write_text(
            FAULT + f"- benchmark_name: fault\n  benchmark_params: [{{n: {n}}}]\n"
        )
        assert run_cli("run", "--config", "c.yaml", "-o", name, "--no-progress")[0] == 0
    code, out, err = run_cli("compare", "r[1].csv", "r[1].csv", "--format", "csv")
    assert code == 0 and "n=16" in out and "n=8" not in out, out + err  # r[1].csv, not r1.csv


@pytest.mark.parametrize(
    ("params", "key", "says"),
    [
        ("{mesh_shape: '2x1', mesh_axes: 'dcn,ici', ring_factor: -1}", "ring_factor", "above 0"),
        ("{mesh_shape: '2x1', mesh_axes: 'dcn,ici', ring_factor: .nan}", "ring_factor", "finite"),
        ("{mesh_shape: '2x1', mesh_axes: 'dcn,ici', input_layout: foo}", "input_layout", "dcn_1d"),
        ("{mesh_shape: '2x1', mesh_axes: 'dcn,dcn'}", "mesh_axes", "distinct"),
        ("{mesh_shape: '2x1', mesh_axes: 'dcn,ici,x'}", "params", "one name per axis"),
        ("{mesh_shape: '0x1', mesh_axes: 'dcn,ici'}", "params", "1 or more"),
    ],
)
def test_dcn_values_the_fields_cannot_take_are_refused(params, key, says, tmp_path, run_cli):
    path = tmp_path / "d.yaml"
    path.write_text(f"benchmark: {{name: all_reduce, params: {params}}}\n")
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 2 and f".{key}" in err and says in err and len(err.splitlines()) == 1, err


def test_a_null_case_is_refused_not_run_as_defaults(tmp_path, run_cli):
    path = tmp_path / "n.yaml"
    path.write_text("benchmark: {name: gemm, params: {num_runs: 2}, cases: [{m: 16}, null]}\n")
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 2 and "benchmark.cases[1]" in err


def _stored(tmp_path: Path, run_cli, n: int) -> None:
    Path("c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  csv_path: results/r.csv\n  benchmark_params: [{n: 8}]\n"
    )
    for _ in range(n):
        assert run_cli("run", "--config", "c.yaml", "--no-progress", "-q")[0] == 0


@pytest.mark.slow  # a real process: a FIFO must not hang it
def test_hostile_run_records_are_passed_over(tmp_path, monkeypatch, run_cli):
    """Wrong types, nesting past any limit, a link to /dev/zero, a FIFO: each record is read as no
    record (its run listed by its files, or not at all), never a traceback or a hang."""
    monkeypatch.chdir(tmp_path)
    _stored(tmp_path, run_cli, 6)
    Path("results/r.5.run.json").unlink()
    Path("results/r.5.run.json").mkdir()
    Path("results/r.6.run.json").write_bytes(bytes(range(256)) * 8)
    Path("results/r.run.json").write_text('{"name": 3, "files": "r.csv", "selection": []}')
    Path("results/r.2.run.json").write_text('{"selection": ' + "[" * 100_000 + "]" * 100_000 + "}")
    Path("results/r.3.run.json").unlink()
    Path("results/r.3.run.json").symlink_to("/dev/zero")
    Path("results/r.4.run.json").unlink()
    os.mkfifo("results/r.4.run.json")
    for args in (
        ["runs"],
        ["runs", "--config", "c.yaml"],
        ["compare", "--config", "c.yaml", "1", "4"],
        ["compare", "--config", "c.yaml"],  # the latest two: a folder and garbage for records
    ):
        done = subprocess.run(
            [sys.executable, "-m", "accelbench", *args],
            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        # 0 or 1: a verdict between two timings of a loaded host is theirs; never 2 or a traceback
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, (args, done.stderr)
        if args == ["compare", "--config", "c.yaml"]:
            for bad in ("r.5.run.json", "r.6.run.json"):  # each named once, passed over
                assert done.stderr.count(f"{bad}: not a run record") == 1, done.stderr


def test_another_program_s_json_at_a_record_s_name_is_named_not_dropped_silently(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    _stored(tmp_path, run_cli, 2)
    Path("results/r.2.run.json").write_text('{"v": 1}')  # JSON, but none of a record's fields
    for args in (["runs"], ["runs", "--config", "c.yaml"]):
        code, _, err = run_cli(*args)
        assert code == 0 and err.count("r.2.run.json: not a run record") == 1, err


def test_a_claimed_number_whose_process_cannot_exist_is_taken_over(tmp_path, monkeypatch, run_cli):
    import socket

    monkeypatch.chdir(tmp_path)
    _stored(tmp_path, run_cli, 1)
    Path("results/r.2.run.json").write_text(
        json.dumps({"pid": 2**40, "host": socket.gethostname()})
    )
    _stored(tmp_path, run_cli, 1)  # no traceback: run 2 is this one
    assert Path("results/r.2.csv").is_file() and not Path("results/r.3.csv").exists()


def test_the_run_store_lists_each_series_once(tmp_path, monkeypatch, run_cli):
    """Listing a config's runs reads each folder once, not once per run (2 000 runs took 40 s)."""
    from accelbench.results import run_store

    monkeypatch.chdir(tmp_path)
    _stored(tmp_path, run_cli, 5)
    listed: list[str] = []
    real = run_store.runs_of
    monkeypatch.setattr(run_store, "runs_of", lambda p: listed.append(p) or real(p))
    code, out, _ = run_cli("runs", "--config", "c.yaml")
    assert code == 0 and len(listed) == 1 and "5" in out


def test_report_takes_any_value_and_any_file_name(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    _stored(tmp_path, run_cli, 1)
    with open("results/r.csv", newline="") as f:
        good = list(csv.DictReader(f))[0]
    odd = {
        "nan": {"time_median_s": "nan"},
        "inf": {"time_median_s": "inf", "time_max_s": "inf"},
        "big": {"time_median_s": "1e308", "time_mean_s": "1e308", "time_p90_s": "1e308"},
        "outside": {"time_median_s": "0.5", "time_p10_s": "0.6", "time_p90_s": "0.7"},
    }
    Path("h").mkdir()
    for name, cells in odd.items():
        with open(f"h/{name}.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, list(good))
            writer.writeheader()
            writer.writerow({**good, **cells})
    os.link("results/r.csv", os.fsdecode(b"h/caf\xe9.csv"))
    code, _, err = run_cli("report", "h", "--output-dir", "rep")
    assert code == 0, err
    assert "\\udce9" in Path("rep/report.html").read_text()  # the name spelt out, not dropped


def test_charts_leave_out_what_they_cannot_draw_and_say_which(tmp_path, monkeypatch, run_cli):
    """One sweep whose rows hold NaN, infinity, 1e308, a negative time and a median outside its
    p10-p90: the tables keep them, the charts draw the rest and name them."""
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  csv_path: results/r.csv\n  cache: warm\n"
        "  benchmark_params: [{n: 8}, {n: 16}, {n: 32}, {n: 64}, {n: 128}, {n: 256}, {n: 512},"
        " {n: 1024}]\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress", "-q")[0] == 0
    with open("results/r.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    odd = [
        {"time_median_s": "nan"},
        {"time_median_s": "inf", "time_p90_s": "inf"},
        {"time_median_s": "1e308", "time_p90_s": "1e308"},
        {"time_median_s": "-1"},
        {"time_median_s": "0.5", "time_p10_s": "0.6", "time_p90_s": "0.7"},
    ]
    for row, cells in zip(rows, odd, strict=False):
        row.update(cells)
    with open("results/r.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, out, err = run_cli("report", "results/r.csv", "--output-dir", "rep", "--sample-charts")
    assert code == 0 and "Traceback" not in err, err
    assert f"{len(odd)} rows are in the tables but not the charts" in err
    assert "sweep_fault.png: 3 points" in out  # the rows left to draw


@pytest.mark.parametrize("label", ["12", "a/b", "best.csv", "x\x1by", " "])
def test_a_label_that_could_not_be_named_afterwards_is_refused(label, tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n"
    )
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--name", label)
    assert code == 2 and "--name" in err and not list(tmp_path.glob("results/*"))


def test_a_label_for_an_output_file_that_is_no_stored_run_is_refused(
    tmp_path, monkeypatch, run_cli
):
    """Trial finding 12: an -o file keeps no record, so `compare LABEL` could never find the label."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n"
    )
    code, _, err = run_cli("run", "--config", "c.yaml", "--name", "first", "-o", "a.csv")
    assert code == 2 and err.count("\n") == 1 and "error: --name: " in err and "-o" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


@pytest.mark.slow  # shell scripts and several runs
def test_the_ironwood_scripts_go_past_a_failed_config_and_name_files_with_spaces(tmp_path):
    root = Path(__file__).resolve().parents[1]
    for part in ("Ironwood/scripts/run_configs.sh", "Ironwood/src/run_benchmark.py"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).write_text((root / part).read_text())
    (tmp_path / ".venv/bin").mkdir(parents=True)
    (tmp_path / ".venv/bin/python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (tmp_path / ".venv/bin/python").chmod(0o755)
    group = tmp_path / "Ironwood/configs/g"
    group.mkdir(parents=True)
    csv_at = "results/ironwood/g/{} rows.csv"
    (group / "bad.yaml").write_text(
        FAULT + f"- benchmark_name: fault\n  csv_path: '{csv_at.format('bad')}'\n"
        "  benchmark_params: [{mode: raise}]\n"
    )
    (group / "good.yaml").write_text(
        FAULT + f"- benchmark_name: fault\n  csv_path: '{csv_at.format('good')}'\n"
        "  benchmark_params: [{n: 8}]\n"
    )
    done = subprocess.run(
        ["sh", "Ironwood/scripts/run_configs.sh", "g", "bad good", "--no-progress"],
        cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(rows(tmp_path / csv_at.format("good"))) == 1  # the group went on
    assert (tmp_path / "results/ironwood/g/overview/summary.md").is_file(), done.stderr


def test_resume_under_other_run_settings_is_refused_and_writes_nothing(
    tmp_path, monkeypatch, run_cli
):
    """Trial finding 3: another --num-runs makes other cases; resuming would measure each again
    beside the first and leave a file compare cannot pair. Refused in one line naming the setting."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  backend: numpy\n  warmup: 0\n"
        "  benchmark_params: [{n: 8}, {n: 16}]\n"
    )
    asked = ("run", "--config", "w.yaml", "-o", "a.csv", "--no-progress", "--num-runs")
    assert run_cli(*asked, "5")[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.glob("a.*")}
    code, _, err = run_cli(*asked, "3", "--resume")
    assert code == 2 and err.count("error") == 1
    assert "rows of 'fault' were taken with num_runs 5, this run asks 3" in err
    assert {p.name: p.read_bytes() for p in tmp_path.glob("a.*")} == before
    code, _, err = run_cli(*asked, "5", "--resume")
    assert code == 0 and "2 of 2 cases already done" in err
