"""Issue 28's scenarios that are runs, not single bad values: nothing lost under any spelling, signal or
fault. Each test failed (lost rows, a traceback, a hang) before the fix it names."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelbench.platform import interrupt
from accelbench.run import launch
from accelbench.run.session import resume_command

FAULT = "backend: numpy\nnum_runs: 2\nwarmup: 0\nbenchmarks:\n"


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_case_two_benchmarks_ask_for_is_in_both_files(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(
        FAULT
        + "- benchmark_name: fault\n  csv_path: one.csv\n  benchmark_params: [{n: 8}]\n"
        + "- benchmark_name: fault\n  csv_path: two.csv\n  benchmark_params: [{n: 8}, {n: 16}]\n"
        + "- benchmark_name: fault\n  csv_path: ./two.csv\n  benchmark_params: [{n: 16}]\n"
    )
    code, _, _ = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 0
    assert [r["n"] for r in rows(Path("one.csv"))] == ["8"]
    assert sorted(r["n"] for r in rows(Path("two.csv"))) == ["16", "8"]  # ./two.csv is two.csv
    Path("one.csv").unlink(), Path("one.jsonl").unlink()
    code, out, err = run_cli("run", "--config", "c.yaml", "--no-progress", "--resume")
    assert code == 0 and "2 of 3 cases already done" in out + err  # done in two.csv, not in one.csv
    assert [r["n"] for r in rows(Path("one.csv"))] == ["8"]


def test_an_upper_case_csv_suffix_names_a_file(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  csv_path: R.CSV\n  benchmark_params: [{n: 8}]\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    assert Path("R.CSV").is_file() and len(rows(Path("R.CSV"))) == 1


def test_resume_without_the_json_lines_twin_is_refused(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n")
    assert run_cli("run", "--config", "c.yaml", "-o", "r.csv", "--no-progress")[0] == 0
    Path("r.jsonl").unlink()
    code, _, err = run_cli("run", "--config", "c.yaml", "-o", "r.csv", "--resume")
    assert code == 2 and "r.jsonl, the raw samples of the rows in r.csv, is missing" in err
    assert not Path("r.jsonl").exists() and len(rows(Path("r.csv"))) == 1


def test_dashboard_of_a_config_without_torchao_cases_runs_nothing(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}]\n")
    code, _, err = run_cli("dashboard", "--config", "c.yaml", "--output", "d.json")
    assert code == 2 and "this config has none" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_the_resume_command_after_python_m_runs_as_printed():
    cli = os.path.join(os.path.dirname(sys.modules["accelbench.cli"].__file__ or ""), "cli.py")
    command = resume_command([cli, "run", "--config", "c.yaml"])
    assert command == f"{sys.executable} -m accelbench.cli run --config c.yaml --resume"


@pytest.mark.slow  # over a second: the full suite runs it
def test_sigterm_is_ctrl_c_rows_kept_and_the_resume_command_printed(tmp_path):
    """A sweep whose second case runs for ever, stopped with SIGTERM: the first row is on disk, the
    exit code is 143, and the resume command is printed; no traceback."""
    (tmp_path / "c.yaml").write_text(
        FAULT
        + "- benchmark_name: fault\n  benchmark_params: [{n: 8}, {n: 9, num_runs: 10000000}]\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "-o", "r.csv"]
        + ["--no-progress"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "r.csv").exists() or len(rows(tmp_path / "r.csv")) < 1:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 143
    assert "SIGTERM: stopping" in err and "--resume" in err and "Traceback" not in err
    assert len(rows(tmp_path / "r.csv")) == 1


def test_the_exit_code_names_the_signal():
    interrupt._received[:] = [signal.SIGTERM]
    try:
        assert interrupt.exit_code() == 143
    finally:
        interrupt._received.clear()
    assert interrupt.exit_code() == 130


@pytest.mark.slow  # over a second: the full suite runs it
def test_the_local_launcher_stops_its_workers(monkeypatch):
    """Ctrl-C or SIGTERM in `run --processes N`: every worker is asked to stop, and killed past the
    grace period (one that ignores the request, as a worker stuck in a collective would)."""
    monkeypatch.setattr(launch, "STOP_GRACE_S", 0.5)
    stubborn = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    polite = "import time; time.sleep(60)"
    children = [subprocess.Popen([sys.executable, "-c", code]) for code in (stubborn, polite)]
    time.sleep(0.5)
    launch.stop_all(children)
    assert all(child.poll() is not None for child in children)
    assert children[0].returncode == -signal.SIGKILL


@pytest.mark.slow  # over a second: the full suite runs it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_dies_with_the_process_that_started_it(tmp_path):
    """The runner killed outright (SIGKILL, no finally runs): its worker goes too."""
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'from accelbench.platform import processes; "
        "processes.die_with_parent(); import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True); time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(1.0)  # the child has set its death signal
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail("the worker outlived its parent")


def test_a_trace_that_cannot_be_written_fails_its_case_only(monkeypatch):
    """The trace's export fails once (a full disk): that case is an error row, and the next traced case
    starts a profiler session again instead of 'Profile has already been started'."""
    import jax

    from accelbench.errors import CaseFailure
    from accelbench.jax_backend import timers

    real_stop = jax.profiler.stop_trace
    calls = {"n": 0}

    def failing_once() -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(28, "No space left on device")
        real_stop()

    monkeypatch.setattr(jax.profiler, "stop_trace", failing_once)
    work = lambda: [float(jax.numpy.ones(4).sum())]  # noqa: E731
    with pytest.raises(CaseFailure, match="could not write the trace"):
        timers._profile_to_disk(work, firmware=False)
    _, wall = timers._profile_to_disk(work, firmware=False)
    assert wall == [4.0]


URL_CONFIG = (
    FAULT
    + "- benchmark_name: fault\n  csv_path: memory://bkt/r.csv\n  benchmark_params: [{n: 8}, {n: 16}]\n"
)


def test_url_outputs_keep_their_rows_when_the_copy_fails_and_resume_from_them(
    tmp_path, monkeypatch, run_cli
):
    import fsspec

    fs = fsspec.filesystem("memory")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the staging folder, under the test's
    (tmp_path / "c.yaml").write_text(URL_CONFIG)
    real_put = type(fs).put_file

    def broken(*args, **kwargs):
        raise ConnectionError("network unreachable")

    try:
        monkeypatch.setattr(type(fs), "put_file", broken)
        code, out, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--no-progress")
        assert code == 1 and err.count("error:") == 1
        err = err.strip().splitlines()[-1]
        assert "could not copy the results to memory://bkt/r.csv" in err and "kept in" in err
        staged = err.split("kept in ")[1].strip()
        assert len(rows(Path(staged))) == 2 and staged in out  # said on screen before the run
        assert not fs.exists("memory://bkt/r.csv")
        monkeypatch.setattr(type(fs), "put_file", real_put)
        code, out, err = run_cli(
            "run", "--config", str(tmp_path / "c.yaml"), "--no-progress", "--resume"
        )
        assert code == 0 and "continuing from the rows a stopped run left" in out
        assert "2 of 2 cases already done" in out + err
        with fs.open("memory://bkt/r.csv", "r") as f:
            assert len(list(csv.DictReader(f))) == 2
        assert not Path(staged).exists()  # copied, so the staged file is gone
    finally:
        if fs.exists("memory://bkt"):
            fs.rm("memory://bkt", recursive=True)


@pytest.mark.parametrize("url", ["http://example.com/r.csv", "ftp://example.com/r.csv"])
def test_read_only_url_protocols_are_refused(url, tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text(
        FAULT + f"- benchmark_name: fault\n  csv_path: {url}\n  benchmark_params: [{{n: 8}}]\n"
    )
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--no-progress")
    assert code == 2 and err.count("\n") == 1 and "cannot be written to" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("first", ["accelbench.entry", "accelbench.cli", "accelbench.__main__"])
def test_a_signal_while_the_program_imports_is_a_quiet_exit(signum, first):
    # the signal lands once the first module an entry point imports has loaded (`python -m
    # accelbench.cli` and the jax-bench command start elsewhere than the console script)
    code = (
        "import os, sys; sys.modules.pop('accelbench.cli', None)\n"
        f"import {first}\n"
        f"os.kill(os.getpid(), {int(signum)})\n"
        "import time; time.sleep(5)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 128 + signum
    assert done.stderr == "interrupted\n"


@pytest.mark.parametrize("stop, code", [(SystemExit(143), 143), (KeyboardInterrupt(), 130)])
def test_a_stop_that_an_import_turned_into_its_own_error_is_a_quiet_exit(stop, code, capsys):
    """A Ctrl-C (SIGTERM) landing while a C extension imports comes back as that import's error
    (`PyCapsule_Import could not import module "datetime"`), raised while handling the stop."""
    from accelbench.run.command_line import serve

    def importing() -> int:
        try:
            raise stop
        finally:
            raise ImportError('PyCapsule_Import could not import module "datetime"')

    assert serve(importing) == code
    assert "Traceback" not in capsys.readouterr().err


def test_python_m_microbench_is_the_command():
    done = subprocess.run(
        [sys.executable, "-m", "accelbench", "list", "--json"], capture_output=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.startswith(b"[")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_standard_output_on_a_full_disk_is_one_line_and_the_rows_are_whole(tmp_path):
    (tmp_path / "c.yaml").write_text(
        FAULT + "- benchmark_name: fault\n  benchmark_params: [{n: 8}, {n: 9}]\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "accelbench", "run", "--config", "c.yaml", "-o", "r.csv"],
            cwd=tmp_path,
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "error: cannot write to standard output: No space left on device"
    )
    assert len(rows(tmp_path / "r.csv")) == 2
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 2


def _file_size_limit(limit: int):
    """A child whose writes past `limit` bytes fail as on a full disk (EFBIG, not a signal)."""

    def apply() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow  # over a second: the full suite runs it
def test_a_disk_that_fills_mid_sweep_stops_it_in_one_line_and_resume_finishes(tmp_path):
    params = ", ".join(f"{{n: {n}}}" for n in range(8, 20))
    (tmp_path / "c.yaml").write_text(
        FAULT + f"- benchmark_name: fault\n  benchmark_params: [{params}]\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "accelbench", "run", "--config", "c.yaml", "-o", "r.csv"]
    done = subprocess.run(
        [*command, "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_file_size_limit(12_000),
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "cannot write results" in done.stderr
        and "the rows before this case are saved" in done.stderr
    )
    saved = rows(tmp_path / "r.csv")
    assert 0 < len(saved) < 12
    resumed = subprocess.run(
        [*command, "--no-progress", "--resume"], cwd=tmp_path, env=env, capture_output=True
    )
    assert resumed.returncode == 0
    ids = [r["case_id"] for r in rows(tmp_path / "r.csv")]
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(ids) == len(set(ids)) == 12
    assert sorted(json.loads(line)["case_id"] for line in lines) == sorted(ids)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("where", ["/proc/r.csv", "/proc/self/x/r.csv"])
def test_a_folder_that_refuses_creation_is_one_line_before_any_case(where, run_cli):
    code, _, err = run_cli("run", "--run", "add", "--m", "8", "--n", "8", "-o", where)
    assert code == 2
    assert err.startswith(f"error: csv_path '{where}'") and len(err.splitlines()) == 1


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux /sys")
@pytest.mark.parametrize("where", ["/sys/kernel", "/sys/kernel/x"])
def test_a_stored_run_in_a_folder_that_refuses_its_record_is_one_line(where, run_cli):
    # as root the permission check passes /sys and only the record's creation is refused (trial 3)
    code, _, err = run_cli("run", "--run", "add", "--m", "8", "--n", "8", "--output-dir", where)
    assert code == 2 and len(err.splitlines()) == 1 and where in err


def test_a_whole_file_output_that_cannot_be_written_is_one_line_and_keeps_the_old_file(tmp_path):
    from accelbench.results.writer import OutputFailed, write_atomically

    (tmp_path / "a_file").write_text("")
    with pytest.raises(OutputFailed, match="cannot write it"):
        write_atomically(str(tmp_path / "a_file" / "records.json"), lambda f: f.write("{}"))
    (tmp_path / "records.json").write_text("old")

    def fails(f) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputFailed, match="No space left on device"):
        write_atomically(str(tmp_path / "records.json"), fails)
    assert (tmp_path / "records.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "records.json"]


@pytest.mark.parametrize("kind", ["file", "device"])
def test_seed_json_never_replaces_an_existing_file_or_a_device(kind, tmp_path, run_cli):
    target = tmp_path / "seed.json" if kind == "file" else Path("/dev/null")
    if kind == "file":
        target.write_text("earlier results")
    code, _, err = run_cli(
        "run", "--run", "add", "--m", "8", "--n", "8", "-o", str(tmp_path / "r.csv"),
        "--seed-json", str(target),
    )  # fmt: skip
    assert code == 2 and str(target) in err and len(err.splitlines()) == 1
    assert not (tmp_path / "r.csv").exists()
    if kind == "file":
        assert target.read_text() == "earlier results"
    else:
        assert target.is_char_device()
