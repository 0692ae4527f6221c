"""The case runner: failures become rows, the sweep goes on, nothing finished is lost."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from accelbench.results.columns import IDENTITY

FAULTS = """
num_runs: 3
warmup: 1
benchmarks:
- benchmark_name: fault
  csv_path: out.csv
  benchmark_params:
  - {mode: ok}
  - {mode: raise}
  - {mode: wrong}
  - {mode: oom, alloc_gb: 2048}
  - {mode: ok, n: 128}
"""


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow  # over a second: the full suite runs it
def test_failures_become_rows_and_the_sweep_continues(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(FAULTS)
    code, out, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 1  # failed cases are rows, and the run says it failed
    got = [(r["mode"], r["status"]) for r in rows(tmp_path / "out.csv")]
    assert got == [
        ("ok", "ok"),
        ("raise", "error"),
        ("wrong", "wrong_result"),
        ("oom", "oom"),
        ("ok", "ok"),
    ]
    by_mode = {r["mode"]: r for r in rows(tmp_path / "out.csv")}
    assert by_mode["raise"]["error"] == "RuntimeError: injected failure"
    assert by_mode["oom"]["error"].startswith(
        "out of device memory at n=64: Unable to allocate 2.00 TiB"
    )
    assert by_mode["wrong"]["time_median_s"] == ""  # strict check: a wrong result is not timed
    assert "relative error" in by_mode["wrong"]["error"]
    assert by_mode["ok"]["sample_count"] == "3" and float(by_mode["ok"]["time_median_s"]) > 0
    assert "4 of 5" not in err and "3 of 5 cases did not produce a clean number" in err
    assert "2 ok, 3 failed, 0 unsupported" in err


def test_flag_mode_times_a_wrong_result_but_never_as_a_clean_row(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n"
        "  benchmark_params: [{mode: wrong, check: flag}]\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 1
    (row,) = rows(tmp_path / "out.csv")
    assert row["status"] == "wrong_result" and float(row["time_median_s"]) > 0
    assert row["check"].startswith("flagged: output 'out' differs")


def test_one_sample_per_iteration_and_raw_samples_in_jsonl(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 17\n  csv_path: out.csv\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    (record,) = [json.loads(line) for line in open(tmp_path / "out.jsonl")]
    assert record["sample_count"] == 17 and len(record["samples_s"]) == 17
    assert record["time_median_s"] == pytest.approx(sorted(record["samples_s"])[8])
    assert record["timing_source"] == "wall_clock"


@pytest.mark.slow  # over a second: the full suite runs it
def test_timeout_in_process_ends_a_hung_case(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n  timeout_s: 0.5\n  cache: warm\n"
        "  benchmark_params: [{mode: hang}, {mode: ok}]\n"
    )
    t0 = time.monotonic()
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 1
    assert (
        time.monotonic() - t0 < 300
    )  # the hang would last an hour: ended by the timeout, at any load
    assert [r["status"] for r in rows(tmp_path / "out.csv")] == ["timeout", "ok"]


def test_a_timeout_is_never_caught_as_a_case_s_own_failure():
    """A timeout lands wherever the case is; code that turns its own failures into others (placing
    inputs: `except Exception` -> unsupported, which read an empty message as IndexError) must not
    catch it, so the case is a timeout row and nothing half-done is left for the next."""
    from accelbench.platform.interrupt import CaseTimeout
    from accelbench.run.runner import _alarm

    with pytest.raises(CaseTimeout), _alarm(0.05):
        try:
            time.sleep(600)
        except Exception as error:
            raise RuntimeError(str(error).splitlines()[0]) from None


@pytest.mark.slow
def test_isolate_turns_a_crash_and_a_hang_into_rows(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n  cache: warm\n"
        "  benchmark_params: [{mode: crash}, {mode: hang}, {mode: ok}]\n"
    )  # warm: a cold case rewrites twice the CPU's last-level cache (300 MiB here) 20 times
    code, _, _ = run_cli(
        "run", "--config", "c.yaml", "--no-progress", "--isolate", "--timeout", "3"
    )
    assert code == 1  # failed cases are rows, and the run says it failed
    got = rows(tmp_path / "out.csv")
    assert [r["status"] for r in got] == ["crashed", "timeout", "ok"]
    assert "killed by signal 9" in got[0]["error"]


@pytest.mark.slow
def test_an_isolated_case_s_timeout_leaves_out_its_process_s_start_up(
    tmp_path, monkeypatch, run_cli
):
    """A worker whose devices take longer to come up than the case's whole timeout (a loaded machine
    importing its frameworks): the case is still timed, not a timeout."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "slow_start").mkdir()
    (tmp_path / "slow_start" / "sitecustomize.py").write_text(
        "import functools, time\nfrom accelbench.numpy_backend import NumpyBackend\n"
        "start_up = functools.cache(lambda: time.sleep(4))\n"
        "real = NumpyBackend.device_info\n"
        "NumpyBackend.device_info = lambda self, *a: start_up() or real(self, *a)\n"
    )  # loaded by each spawned worker before it runs anything: its devices' first start-up is slow
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join([str(tmp_path / "slow_start"), os.environ.get("PYTHONPATH", "")]),
    )
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  csv_path: out.csv\n  cache: warm\n"
        "  benchmark_params: [{mode: ok}]\n"
    )
    code, _, err = run_cli(
        "run", "--config", "c.yaml", "--no-progress", "--isolate", "--timeout", "2"
    )
    assert code == 0, err
    assert [r["status"] for r in rows(tmp_path / "out.csv")] == ["ok"]


SLOW_SWEEP = """
benchmarks:
- benchmark_name: fault
  num_runs: 1
  warmup: 0
  csv_path: out.csv
  benchmark_sweep_params:
  - {mode: hang, seconds: 0.25, n_list: [1, 2, 3, 4, 5, 6, 7, 8]}
"""


def _start(tmp_path):
    (tmp_path / "c.yaml").write_text(SLOW_SWEEP)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    return subprocess.Popen(
        [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "--no-progress"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_rows(path, count, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= count + 1:
            return
        time.sleep(0.05)
    raise AssertionError("no rows appeared")


def _assert_complete(tmp_path, run_cli):
    code, _, err = run_cli("run", "--config", "c.yaml", "--resume", "--no-progress")
    assert code == 0 and "resuming:" in err
    got = rows(tmp_path / "out.csv")
    assert sorted(int(r["n"]) for r in got) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert len({r["case_id"] for r in got}) == 8
    assert all(r["status"] == "ok" and r[IDENTITY[0]] for r in got)
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert len({len(next(csv.reader([line]))) for line in lines}) == 1  # every row whole
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 8


@pytest.mark.slow
def test_sigkill_loses_at_most_the_case_in_flight_and_resume_completes(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    proc = _start(tmp_path)
    _wait_for_rows(tmp_path / "out.csv", 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(rows(tmp_path / "out.csv"))
    assert 2 <= done < 8
    _assert_complete(tmp_path, run_cli)


@pytest.mark.slow
def test_ctrl_c_flushes_finished_rows_and_says_how_to_resume(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    proc = _start(tmp_path)
    _wait_for_rows(tmp_path / "out.csv", 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted:" in err and "--resume" in err and "Traceback" not in err
    _assert_complete(tmp_path, run_cli)


def test_a_ctrl_c_python_swallowed_still_stops_the_run_quietly(tmp_path, monkeypatch, run_cli):
    """An exit raised inside a garbage-collector callback (JAX installs one) is not printed as an
    ignored traceback and not lost: the run stops before its first case."""
    from accelbench.platform import interrupt

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 1\n  csv_path: out.csv\n"
    )

    class Collected:
        def __del__(self):
            raise SystemExit(130)  # what Ctrl-C's handler raises outside a run

    try:
        interrupt.keep_swallowed()
        Collected()  # collected at once: Python cannot raise from __del__ and reports it unraisable
        assert interrupt.requested()
        code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    finally:
        interrupt._requested.clear()
    assert code == 130 and "interrupted" in err
    assert "Traceback" not in err and "ignored" not in err
    assert not (tmp_path / "out.csv").exists() or rows(tmp_path / "out.csv") == []


def test_a_case_larger_than_device_memory_is_an_oom_row_before_inputs_exist(tmp_path):
    from test_backends import case

    from accelbench.catalogue import get_spec
    from accelbench.errors import CaseFailure
    from accelbench.measure.procedure import check_fits

    c = case("gemm_multiple_run", "jax", tmp_path, m=4194304, k=16, n=4194304)
    with pytest.raises(CaseFailure) as info:
        check_fits(get_spec("gemm_multiple_run"), c, 80 * 2**30)
    assert info.value.status == "oom"
    assert info.value.reason == (
        "out of device memory at m=4194304xk=16xn=4194304: inputs and outputs alone "
        "need 32768.2 GiB, the framework can allocate 80.0 GiB"
    )


def test_jax_cases_run_before_torch_cases(tmp_path, write_yaml, monkeypatch, run_cli):
    """Kineto (PyTorch's profiler) starves JAX's GPU traces once it has run, so JAX goes first."""
    monkeypatch.chdir(tmp_path)
    write_yaml("""
        benchmarks:
        - benchmark_name: add
          backend: [torch, jax]
          num_runs: 2
          csv_path: out.csv
          benchmark_sweep_params: [{m: 32, n: [32, 64], implementation: eager}]
        """)
    assert run_cli("run", "--config", "config.yaml", "--no-progress")[0] == 0
    assert [(r["backend"], r["n"]) for r in rows(tmp_path / "out.csv")] == [
        ("jax", "32"),
        ("jax", "64"),
        ("torch", "32"),
        ("torch", "64"),
    ]


@pytest.mark.slow
def test_ctrl_c_at_random_moments_is_never_ignored_and_never_a_traceback(tmp_path):
    """20 runs, each interrupted once at a random moment (start-up, planning, a case, between cases)."""
    import random

    rng = random.Random(7)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 1\n  warmup: 0\n  csv_path: out.csv\n"
        "  benchmark_sweep_params:\n  - {mode: hang, seconds: 0.2, n_list: [1, 2, 3, 4]}\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    for attempt in range(20):
        for leftover in tmp_path.glob("out.*"):
            leftover.unlink()
        ready = tmp_path / "ready"
        ready.unlink(missing_ok=True)
        # the child says when Python's own start-up is over (a signal before that is the
        # interpreter's, however loaded the machine), then runs the command as `python -m` would
        start = (
            "import accelbench.quiet_start, pathlib, runpy, sys; pathlib.Path('ready').touch(); "
            "sys.argv = ['microbench', 'run', '--config', 'c.yaml', '--no-progress']; "
            "runpy.run_module('accelbench.cli', run_name='__main__')"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", start],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not ready.exists() and proc.poll() is None:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 2.2))  # imports, planning, a case, between cases
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, (attempt, err[-2000:])
        if proc.returncode == 0:  # it had finished before the signal
            continue
        assert proc.returncode == 130, (attempt, proc.returncode, err[-500:])
        assert "interrupted" in err


@pytest.mark.slow
def test_isolate_timeout_starts_when_the_case_starts(tmp_path, monkeypatch, run_cli):
    """The child's start-up (interpreter, imports) is not the case's time: a fast case never times out."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: fault\n  num_runs: 2\n  cache: warm\n  csv_path: out.csv\n"
    )
    # every Python started from here takes 4 s to start: longer than the timeout, so a timeout
    # that counted the child's start-up would fire, at any load
    (tmp_path / "sitecustomize.py").write_text("import time\ntime.sleep(4)\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    code, _, _ = run_cli(
        "run", "--config", "c.yaml", "--no-progress", "--isolate", "--timeout", "2"
    )
    assert code == 0 and [r["status"] for r in rows(tmp_path / "out.csv")] == ["ok"]


FAST_SWEEP = """
benchmarks:
- benchmark_name: fault
  num_runs: 2
  warmup: 0
  cache: warm
  csv_path: out.csv
  benchmark_sweep_params:
  - {mode: hang, seconds: 0.01, n_range: {start: 1, end: 40, increase_by: 1}}
"""


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_keeps_every_case_exactly_once(tmp_path):
    """50 kills at random moments (also between a row's JSON line and its CSV row), each followed by
    --resume until the sweep is done: every case once in the CSV and once in the JSONL, every row whole."""
    import json
    import random

    rng = random.Random(11)
    (tmp_path / "c.yaml").write_text(FAST_SWEEP)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    command = [sys.executable, "-m", "accelbench.cli", "run", "--config", "c.yaml", "--no-progress"]
    for _ in range(50):
        resume = ["--resume"] if (tmp_path / "out.csv").exists() else []
        proc = subprocess.Popen(
            command + resume,
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 1.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = subprocess.run(
        command + ["--resume"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-1000:]
    got = rows(tmp_path / "out.csv")
    assert sorted(int(r["n"]) for r in got) == list(range(1, 41))
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert len({len(next(csv.reader([line]))) for line in lines}) == 1
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(r["case_id"] for r in records) == sorted(r["case_id"] for r in got)


@pytest.mark.slow
def test_two_runs_on_one_results_file_lose_no_row(tmp_path):
    """The second run is refused, naming the first; the first finishes every row."""
    (tmp_path / "c.yaml").write_text(SLOW_SWEEP)
    first = _start(tmp_path)
    _wait_for_rows(tmp_path / "out.csv", 1)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    second = subprocess.run(
        [
            sys.executable,
            "-m",
            "accelbench.cli",
            "run",
            "--config",
            "c.yaml",
            "--no-progress",
            "--resume",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (
        second.returncode == 2 and f"in use by another run (process {first.pid})" in second.stderr
    )
    first.communicate(timeout=60)
    assert first.returncode == 0
    assert sorted(int(r["n"]) for r in rows(tmp_path / "out.csv")) == [1, 2, 3, 4, 5, 6, 7, 8]
