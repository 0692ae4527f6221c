"""Traces a user finds and opens (issue 45): one profiler session per case and run, in a folder named
after the case (op, id, shape, dtype...), each timed iteration a step named after the case (read back
with JAX's profiler API), the row's trace_path that session, PyTorch's timed loop kept as a Kineto
trace, the run saying where they went, and `microbench traces` serving them on 127.0.0.1 only."""

import csv
import glob
import json
import os
import signal
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


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_link_planted_at_a_case_s_trace_folder_fails_that_case_not_the_victim(
    backend, tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG.format(backend=backend, more=""))
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    folder = sorted(glob.glob("tr/*"))[0]  # torch: eager and compiled, a folder each
    victim = tmp_path / "victim"
    victim.mkdir()
    for planted in (folder, f"{folder}/plugins"):  # the case's folder, or one inside it
        subprocess.run(["rm", "-rf", folder], check=True)
        os.makedirs(os.path.dirname(planted), exist_ok=True)
        os.symlink(victim, planted)
        code, _, _ = run_cli("run", "--config", "c.yaml", "--no-progress", "--overwrite")
        failed = [r for r in _rows(tmp_path / "results" / "c.csv") if r["status"] != "ok"]
        assert code == 1 and len(failed) == 1 and failed[0]["status"] == "error"
        assert f"{planted} is a symbolic link: no trace through one" in failed[0]["error"]
        assert not list(victim.iterdir())  # nothing written through it


def test_an_hlo_dump_is_never_written_through_a_planted_link(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONFIG.format(backend="jax", more="xla_dump_dir: dumps"))
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    (dump,) = glob.glob("dumps/*.stablehlo.txt")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.unlink(dump)
    os.symlink(victim, dump)
    code, _, _ = run_cli("run", "--config", "c.yaml", "--no-progress", "--overwrite")
    (row,) = _rows(tmp_path / "results" / "c.csv")
    assert code == 1 and row["status"] == "error" and "no dump through one" in row["error"]
    assert victim.read_text() == "precious"


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


def _listening(pid: int) -> list[str]:
    """The addresses a process listens on (TCP, IPv4 and IPv6), read from /proc."""
    inodes = set()
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            inodes.add(os.readlink(fd))
        except OSError:
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and f"socket:[{fields[9]}]" in inodes:  # LISTEN
                host, port = fields[1].split(":")
                ip = socket.inet_ntop(
                    socket.AF_INET if len(host) == 8 else socket.AF_INET6,
                    bytes.fromhex(host)[::-1] if len(host) == 8 else bytes.fromhex(host),
                )
                found.append(f"{ip}:{int(port, 16)}")
    return found


@pytest.mark.slow  # starts xprof's server
def test_microbench_traces_listens_on_this_machine_only_and_one_sigterm_stops_it(tmp_path):
    (tmp_path / "tr").mkdir()
    port = _free_port()
    command = [sys.executable, "-m", "accelbench", "traces", str(tmp_path / "tr"), "--port"]
    server = subprocess.Popen(
        [*command, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline, status = time.monotonic() + 120, None
        while status is None and time.monotonic() < deadline and server.poll() is None:
            try:
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).status
            except OSError:
                time.sleep(0.5)
        assert status == 200
        listening = _listening(server.pid)
        assert listening == [f"127.0.0.1:{port}"], listening  # no gRPC worker on *:50051
        taken = subprocess.run([*command, str(port)], capture_output=True, text=True, timeout=120)
        assert taken.returncode == 2 and len(taken.stderr.splitlines()) == 1, taken.stderr
        assert "--port" in taken.stderr and "in use" in taken.stderr
        server.send_signal(signal.SIGTERM)  # once: xprof's threads do not hold the exit
        assert server.wait(timeout=120) == 128 + signal.SIGTERM
        assert "warning: no trace under" in server.stderr.read()  # an empty folder: said
    finally:
        server.kill()
        server.wait(timeout=30)


def test_microbench_traces_over_no_folder_is_one_line(tmp_path, run_cli):
    (tmp_path / "file").write_text("")
    for path in (tmp_path / "missing", tmp_path / "file"):
        code, _, err = run_cli("traces", str(path))
        assert code == 2 and len(err.splitlines()) == 1 and str(path) in err, err
