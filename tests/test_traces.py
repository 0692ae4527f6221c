"""Traces a user finds and opens (issue 45): one profiler session per case and run, in a folder named
after the case (op, id, shape, dtype...), each timed iteration a step named after the case (read back
with JAX's profiler API), the row's trace_path that session, PyTorch's timed loop kept as a Kineto
trace, the run saying where they went, and `microbench traces` serving them on 127.0.0.1 only."""

import csv
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

CONFIG = """
benchmarks:
- benchmark_name: add
  backend: {backend}
  trace_dir: tr
  num_runs: 4
  warmup: 1
  {more}
  benchmark_params: [{{m: 64, n: 32, dtype: float32}}]
"""


def _rows(path):
    return list(csv.DictReader(open(path)))


def test_a_jax_case_keeps_one_session_per_run_with_its_iterations_as_named_steps(
    tmp_path, monkeypatch, run_cli
):
    from jax.profiler import ProfileData

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        CONFIG.format(backend="jax", more="target_precision: 0.5\n  max_time_s: 2")
    )
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 0, err
    (row,) = _rows(tmp_path / "results" / "c.csv")
    (folder,) = glob.glob("tr/*")
    name = os.path.basename(folder)
    assert name.startswith(f"add-{row['case_id'][:8]}-64x32-float32"), name
    sessions = sorted(glob.glob(f"{folder}/plugins/profile/*"))
    assert len(sessions) == 1 and os.path.abspath(row["trace_path"]) == os.path.abspath(sessions[0])
    (pb,) = glob.glob(f"{sessions[0]}/*.xplane.pb")
    steps = [
        e
        for plane in ProfileData.from_file(pb).planes
        for line in plane.lines
        for e in line.events
        if e.name == row["label"]
    ]
    assert len(steps) >= 4  # at least the last round's iterations, each one step
    assert "traces: tr" in err and "microbench traces tr" in err
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    assert len(glob.glob(f"{folder}/plugins/profile/*")) == 2  # the second run's own session


def test_a_torch_case_keeps_its_timed_loop_as_a_kineto_trace(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG.format(backend="torch", more="implementation: eager"))
    code, _, err = run_cli("run", "--config", "c.yaml", "--no-progress")
    assert code == 0, err
    (row,) = _rows(tmp_path / "results" / "c.csv")
    (trace,) = glob.glob(f"{row['trace_path']}/*.pt.trace.json")
    names = [e.get("name") for e in json.load(open(trace))["traceEvents"]]
    assert names.count(row["label"]) == 4  # the timed iterations, each a range named after the case
    assert "Perfetto" in err


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # starts xprof's server
def test_microbench_traces_serves_xprof_on_this_machine_only(tmp_path):
    (tmp_path / "tr").mkdir()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "accelbench", "traces", str(tmp_path / "tr"), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline, status = time.monotonic() + 120, None
        while status is None and time.monotonic() < deadline and server.poll() is None:
            try:
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).status
            except OSError:
                time.sleep(0.5)
        assert status == 200
        if shutil.which("ss"):
            listening = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
            assert f"127.0.0.1:{port}" in listening and f"0.0.0.0:{port}" not in listening
    finally:
        server.kill()  # xprof's gRPC worker outlives a SIGTERM
        server.wait(timeout=30)
