"""Issue 35's classes of fault, each with the test that failed before its fix: concurrent runs of one
jax-bench config, a results folder deleted mid-run, the launcher's workers after Ctrl-C, a timeout that
lands in a garbage-collection callback, links planted where outputs go, control bytes from files and
arguments, text that is not UTF-8, a terminal without UTF-8, and what was silently ignored."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}/src:{ROOT}"}
CLI = [sys.executable, "-m", "accelbench.cli"]
ESC = "\x1b]8;;https://example.invalid\x07link\x1b]8;;\x07\x1b[2J"


def pids_running(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (read from /proc: no dependency)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline and entry.name != str(os.getpid()):
                found.append(int(entry.name))
    return found


@pytest.mark.slow  # three processes at once
def test_concurrent_runs_of_one_jax_bench_config_keep_each_run_s_summary(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "global: {num_runs: 3, warmup_tries: 0}\nbenchmarks:\n- name: simple_add\n"
        "  sweep: {size: [256, 512]}\n"
    )
    runs = [
        subprocess.Popen([*CLI, "run", "--config", "c.yaml", "-q"], cwd=tmp_path, env=ENV)
        for _ in range(3)
    ]
    commands = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "accelbench",
                "jax-bench",
                "--config",
                "c.yaml",
                "--output",
                "jb",
            ],
            cwd=tmp_path,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(3)
    ]
    assert [p.wait(timeout=300) for p in runs + commands] == [0] * 6
    results = tmp_path / "results"
    pairs = sorted(p.name for p in results.glob("*.summary.csv"))
    assert pairs == ["c.2.summary.csv", "c.3.summary.csv", "c.summary.csv"]
    for summary in results.glob("*.summary.csv"):
        with open(summary) as f:
            assert len(list(csv.DictReader(f))) == 2  # each run's own two cases
    named = sorted(p.name for p in (tmp_path / "jb").glob("summary*.csv"))
    assert named == ["summary.2.csv", "summary.3.csv", "summary.csv"]
    for n in ("", ".2", ".3"):
        assert len(json.loads((tmp_path / "jb" / f"detailed{n}.json").read_text())) == 2


@pytest.mark.slow
def test_a_results_folder_deleted_mid_run_is_made_again_with_every_row(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: add\n  num_runs: 3000\n  cache: warm\n"
        "  benchmark_sweep_params:\n  - {m_range: {start: 64, end: 384, increase_by: 64}, n: 64}\n"
    )
    proc = subprocess.Popen(
        [*CLI, "run", "--config", "c.yaml", "--output-dir", "out", "--no-progress"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = tmp_path / "out" / "c.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (rows.exists() and rows.read_text().count("\n") >= 2):
        time.sleep(0.05)
    subprocess.run(["rm", "-rf", str(tmp_path / "out")], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "c.csv was removed while this run wrote it: made again" in err
    with open(rows) as f:
        assert len(list(csv.DictReader(f))) == 6  # the rows written before the removal too


@pytest.mark.slow
def test_ctrl_c_to_the_launcher_stops_its_workers_and_names_the_user_s_command(tmp_path):
    (tmp_path / "slow_config.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  benchmark_params: [{mode: hang, seconds: 600}]\n"
    )
    proc = subprocess.Popen(
        [*CLI, "run", "--config", "slow_config.yaml", "--processes", "2", "--no-progress"],
        cwd=tmp_path,
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(pids_running("slow_config.yaml")) < 3:
        time.sleep(0.1)
    time.sleep(2)  # the workers are past their imports
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and pids_running("slow_config.yaml"):
        time.sleep(0.2)
    assert pids_running("slow_config.yaml") == []
    assert (
        "--coordinator" not in err and "--process-id" not in err
    )  # the user's command, not a worker's
    assert "saved in" not in err or (tmp_path / "results" / "slow_config.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("config", ["hang", "iterating"])
def test_workers_end_with_a_launcher_killed_outright(config, tmp_path):
    """SIGKILL to `run --processes 2`: no finally runs there, yet both workers end (a pipe they
    watch), a hung one too; an iterating run prints the command that resumes it, as given, runnable."""
    body = {
        "hang": "  benchmark_params: [{mode: hang, seconds: 600}]\n",
        "iterating": "  cache: warm\n  benchmark_params: [{mode: ok}, {mode: ok, n: 8, num_runs: 10000000}]\n",
    }[config]
    (tmp_path / "killed_config.yaml").write_text("benchmarks:\n- benchmark_name: fault\n" + body)
    command = [*CLI, "run", "--config", "killed_config.yaml", "--processes", "2", "--no-progress"]
    proc = subprocess.Popen(
        [*command, "--overwrite"], cwd=tmp_path, env=ENV, stderr=subprocess.PIPE, text=True
    )
    rows = tmp_path / "results" / "killed_config.csv"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and (
        len(pids_running("killed_config.yaml")) < 3
        or (config == "iterating" and not (rows.exists() and rows.read_text().count("\n") >= 2))
    ):
        time.sleep(0.1)
    time.sleep(5)  # the workers are past their imports, timing (the hang), or in their second case
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and pids_running("killed_config.yaml"):
        time.sleep(0.2)
    assert pids_running("killed_config.yaml") == []
    err = proc.stderr.read() if proc.stderr else ""
    assert err.count("the launcher of this job ended") == 1, err
    if config == "iterating":
        assert f"{' '.join(command[3:])} --resume" in err and "--overwrite" not in err, err
        assert "1 finished case kept in" in err


@pytest.mark.slow  # the watchdog's grace (10 s) passes
def test_a_timeout_swallowed_by_a_gc_callback_still_ends_the_case(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n  timeout_s: 0.5\n"
        "  cache: warm\n  benchmark_params: [{mode: ok}, {mode: gc_hang, seconds: 600}]\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "run", "--config", "c.yaml", "--no-progress"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert time.monotonic() - started < 240  # the hang (600 s) did not run its course
    assert done.returncode == 1
    assert "did not stop within 10 s of its 0.5 s timeout" in done.stderr
    assert "Traceback" not in done.stderr
    with open(tmp_path / "out.csv") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok"]  # the case before it is saved


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("one")
    done = subprocess.run(
        [
            *CLI,
            "run",
            "--run",
            "add",
            "--m",
            "64",
            "--n",
            "64",
            "--num_runs",
            "3",
            "-o",
            "r.csv",
            "-q",
        ],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize("name", ["report.html", "summary.md", "roofline.png"])
def test_report_never_writes_through_a_planted_link(name, one_run, tmp_path, run_cli):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "R"
    out.mkdir()
    (out / name).symlink_to(victim)
    code, _, err = run_cli("report", str(one_run / "r.csv"), "--output-dir", str(out))
    assert code == 2 and "is a symbolic link: refused" in err and len(err.splitlines()) == 1
    assert victim.read_text() == "precious"
    assert [p.name for p in out.iterdir()] == [name]  # refused before the first chart
    (out / name).unlink()
    (out / name).mkdir()  # a folder at its name: the same, not charts written then exit 1
    code, _, err = run_cli("report", str(one_run / "r.csv"), "--output-dir", str(out))
    assert code == 2 and f"{name} is no file: refused" in err and len(err.splitlines()) == 1
    assert [p.name for p in out.iterdir()] == [name]


def test_an_xlml_record_is_never_appended_through_a_link(tmp_path):
    from accelbench.dialects.ironwood.xlml import REPORT, append_record
    from accelbench.results.writer import OutputFailed

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / REPORT).symlink_to(victim)
    with pytest.raises(OutputFailed):
        append_record(str(tmp_path), {"a": 1})
    assert victim.read_text() == "precious"


def test_control_bytes_from_files_and_arguments_are_shown_as_text(
    one_run, tmp_path, run_cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    text = (one_run / "r.csv").read_text()
    header, row = text.splitlines()[:2]
    cells = next(csv.reader([row]))
    cells[header.split(",").index("dtype")] = "bfloat16" + ESC  # shown in the case column
    for name in ("a", "b"):  # the same case on both sides, so compare shows it
        with open(tmp_path / f"{name}.csv", "w", newline="") as f:
            csv.writer(f).writerows([header.split(","), cells])
        (tmp_path / f"{name}.jsonl").write_text((one_run / "r.jsonl").read_text())
    (tmp_path / "c.yaml").write_text('benchmarks:\n- benchmark_name: "add\\e[2J\\a"\n')
    (tmp_path / "t.yaml").write_text(
        'backend: jax\nnum_runs: 2\nbenchmarks:\n- benchmark_name: add\n  trace_dir: "tr\\e[2J"\n'
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )  # the run says where its traces went, and how to open them
    shown = []
    for args in (
        ("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")),
        ("run", "--run", "add" + ESC),
        ("validate", "--config", str(tmp_path / "c.yaml")),
        ("run", "--config", str(tmp_path / "t.yaml"), "-o", str(tmp_path / "t.csv")),
        ("traces", "gone" + ESC),
    ):
        _, out, err = run_cli(*args)
        assert "\x1b" not in out + err and "\x07" not in out + err, args
        shown.append(out + err)
    assert all("\\x1b" in text for text in shown), shown  # made visible, not dropped


def test_control_characters_in_names_reach_a_csv_spelt_out(tmp_path):
    import numpy as np

    import accelbench

    r = accelbench.bench(np.sum, np.ones(8), name="n" + ESC, variant="v\u202e\x07", num_runs=3)
    text = Path(accelbench.save([r], str(tmp_path / "b.csv"))).read_text()
    assert not set("\x1b\x07\u202e") & set(text)  # trial 3: they reached the CSV raw
    assert "n\\x1b" in text and "v\\u202e\\x07" in text


def test_a_csv_shapes_table_that_is_not_utf8_is_one_line(tmp_path, run_cli):
    (tmp_path / "shapes.csv").write_bytes(b"m,k,n\n64,64,\xe9\n")
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- {name: gemm_generalized, in_dtype: bfloat16, csv_shapes: shapes.csv}\n"
    )
    code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 2 and "is not UTF-8 text" in err and len(err.splitlines()) == 1
    (tmp_path / "shapes.csv").write_text("m,k,m\n64,64,64\n")
    code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 2 and "column 'm' appears twice in the header" in err


@pytest.mark.slow  # three processes under the C locale
def test_a_terminal_without_utf8_gets_ascii_not_a_traceback(tmp_path, one_run):
    env = {**ENV, "LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    for args in (
        ["run", "--run", "add", "--m", "64", "--n", "64", "--num_runs", "3", "-o", "c.csv"],
        ["compare", str(one_run / "r.csv"), "c.csv"],
        ["report", "c.csv", "--output-dir", "rep"],
    ):
        done = subprocess.run(
            [*CLI, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr


def test_what_was_silent_is_said(tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        "hardware: {tflops: {bf16: 100}}\nbenchmarks:\n- name: simple_add\n"
        "  sweep: {size: {start: 256, end: 1024, multiplier: 2, increase_by: 256}}\n"
    )
    code, out, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
    assert code == 0, err
    assert "multiplier and increase_by given: increase_by is ignored" in err
    assert "hardware.tflops.bf16: not a jax.numpy dtype name (did you mean 'bfloat16'?)" in err
    code, _, err = run_cli("run", "--run", "")
    assert code == 2 and "--run: names no benchmark" in err
    code, _, err = run_cli("run", "--run", "add", "--m", "\u0661\u0660\u0662\u0664")
    assert code == 2 and "--m: must be a number" in err
    (tmp_path / "t.yaml").write_text(
        "benchmarks:\n- benchmark_name: add\n  target_precision: 0.01\n  max_time_s: 7200\n"
        "  benchmark_params: [{m: 8, n: 8}]\n"
    )
    assert run_cli("validate", "--config", str(tmp_path / "t.yaml"))[0] == 0  # up to a week
