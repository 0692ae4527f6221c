"""Beyond one machine (issue 51), on CPU: the launchers `--multihost` reads, one process per GPU under
`--processes` on a GPU host (scripted), and a job whose process dies is stopped within seconds."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from accelbench.platform.launchers import DEFAULT_PORT, detect
from accelbench.run import launch

LAUNCHED_AS = [
    (
        {"RANK": "3", "WORLD_SIZE": "8", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"},
        ("torchrun", "10.0.0.1:29501", 8, 3),
    ),
    ({"SLURM_PROCID": "1", "SLURM_NTASKS": "4"}, ("slurm", None, 4, 1)),
    (
        {"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "MASTER_ADDR": "node7"},
        ("slurm", f"node7:{DEFAULT_PORT}", 4, 1),
    ),
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, ("open-mpi", None, 2, 0)),
    (
        {"JOB_COMPLETION_INDEX": "2", "NUM_PROCESSES": "4", "JOBSET_NAME": "mb", "REPLICATED_JOB_NAME": "w"},
        ("gke-indexed-job", f"mb-w-0-0.mb:{DEFAULT_PORT}", 4, 2),
    ),
    ({}, ("jax", None, None, None)),  # a TPU pod: jax.distributed finds it itself
    (
        {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1",
         "MICROBENCH_COORDINATOR": "c:9"},
        ("torchrun", "c:9", 2, 0),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("env", "joined"), LAUNCHED_AS)
def test_each_launchers_variables_give_the_job(env, joined):
    found = detect(env)
    assert (found.launcher, found.coordinator, found.num_processes, found.process_id) == joined


TORCHRUN = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "localhost", "MASTER_PORT": "29500"}
BAD_JOBS = [
    ({**TORCHRUN, "RANK": "abc"}, "RANK"),
    ({**TORCHRUN, "RANK": "2"}, "RANK"),  # an id outside the job
    ({**TORCHRUN, "RANK": "-1"}, "RANK"),
    ({**TORCHRUN, "RANK": "١"}, "RANK"),  # a digit, but not one a config would read
    ({**TORCHRUN, "WORLD_SIZE": "0"}, "WORLD_SIZE"),
    ({**TORCHRUN, "MASTER_PORT": "65535"}, "MASTER_PORT"),  # the coordinator's would be 65536
    ({**TORCHRUN, "MASTER_PORT": "70000"}, "MASTER_PORT"),
    ({**TORCHRUN, "MASTER_PORT": "http"}, "MASTER_PORT"),
    ({"OMPI_COMM_WORLD_RANK": "x", "OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_RANK"),
    ({"SLURM_PROCID": "1", "SLURM_NTASKS": "1e3"}, "SLURM_NTASKS"),
    ({"MICROBENCH_COORDINATOR": "hostonly"}, "MICROBENCH_COORDINATOR"),
    ({"MICROBENCH_COORDINATOR": "host:0"}, "MICROBENCH_COORDINATOR"),
    ({**TORCHRUN, "MICROBENCH_COORDINATOR": ":1234"}, "MICROBENCH_COORDINATOR"),
    ({"JOB_COMPLETION_INDEX": "0", "NUM_PROCESSES": "2", "MICROBENCH_COORDINATOR": "h:99999"},
     "MICROBENCH_COORDINATOR"),
]  # fmt: skip


@pytest.mark.parametrize(("env", "variable"), BAD_JOBS)
def test_a_launcher_variable_no_job_can_form_from_is_one_line_naming_it(
    env, variable, monkeypatch, tmp_path, run_cli
):
    for name in (
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "SLURM_PROCID",
        "SLURM_NTASKS",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--multihost", "-q")
    assert code == 2 and err.count("\n") == 1 and f"error: {variable}:" in err, err


@pytest.mark.parametrize(
    "args, says",
    [
        (["--coordinator", "localhost"], "--coordinator: must be HOST:PORT"),
        (["--coordinator", "localhost:1", "--num-processes", "2", "--process-id", "2"],
         "--process-id: is 2"),
    ],
)  # fmt: skip
def test_a_job_the_command_line_cannot_form_is_one_line(args, says, tmp_path, run_cli):
    (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), *args)
    assert code == 2 and err.count("\n") == 1 and says in err, err


def test_a_coordinator_that_never_resolves_is_one_line_after_a_bounded_wait(
    monkeypatch, tmp_path, run_cli
):
    from accelbench.platform import launchers

    monkeypatch.setattr(launchers, "RESOLVE_WAIT_S", 1.5)
    monkeypatch.setattr(launchers, "_resolves", lambda host: False)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    monkeypatch.setenv("NUM_PROCESSES", "2")
    monkeypatch.setenv("JOBSET_NAME", "nightly")
    (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--multihost", "-q")
    assert code == 2 and err.count("\n") == 1, err
    assert (
        "JOBSET_NAME: the coordinator 'nightly-workers-0-0.nightly:62111' does not resolve" in err
    )


def test_a_coordinator_that_never_answers_is_one_line_after_a_bounded_wait(
    monkeypatch, tmp_path, run_cli
):
    import socket

    from accelbench.platform import launchers

    monkeypatch.setattr(launchers, "REACH_WAIT_S", 1.5)
    with socket.socket() as taken:  # a port bound, never listened on: connections are refused
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        monkeypatch.setenv("MICROBENCH_COORDINATOR", f"127.0.0.1:{port}")
        monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
        monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
        (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
        code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--multihost", "-q")
    assert code == 2 and err.count("\n") == 1, err
    assert f"MICROBENCH_COORDINATOR: the coordinator '127.0.0.1:{port}' does not answer" in err


def test_a_gpu_host_gives_each_process_its_own_gpu(monkeypatch):
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(launch.glob, "glob", lambda pattern: ["/dev/nvidia0", "/dev/nvidia1"])
    assert launch.gpus() == 2
    assert [launch._placed({}, i, 2) for i in range(2)] == [
        {"CUDA_VISIBLE_DEVICES": "0"},
        {"CUDA_VISIBLE_DEVICES": "1"},
    ]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert launch._placed({}, 1, launch.gpus()) == {"CUDA_VISIBLE_DEVICES": "5"}
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert launch.gpus() == 0 and launch._placed({}, 0, 0) == {"JAX_PLATFORMS": "cpu"}


def test_more_processes_than_gpus_is_one_line(monkeypatch, tmp_path, run_cli):
    monkeypatch.setattr(launch, "gpus", lambda: 1)
    (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--processes", "2")
    assert code == 2 and "--processes" in err and "this host has 1" in err


def test_more_cpu_processes_than_cores_is_one_line_before_any_starts(
    monkeypatch, tmp_path, run_cli
):
    monkeypatch.setattr(launch, "gpus", lambda: 0)
    monkeypatch.setattr(launch, "_cores", lambda: 3)
    monkeypatch.setattr(launch.subprocess, "Popen", None)  # nothing may start
    (tmp_path / "c.yaml").write_text("backend: numpy\nbenchmarks:\n- benchmark_name: fault\n")
    code, _, err = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--processes", "4")
    assert code == 2 and err.count("\n") == 1 and "this host has 3" in err and "core" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--config", "bad.yaml"],
        ["--run", "all_reduce", "--mesh_shape", "0x0"],  # a plan that counts the job's devices
        ["--run", "no_such_benchmark"],
    ],
)
def test_a_bad_config_is_said_once_and_no_process_starts(args, monkeypatch, tmp_path, run_cli):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(launch, "gpus", lambda: 0)
    monkeypatch.setattr(launch, "_cores", lambda: 2)
    monkeypatch.setattr(launch.subprocess, "Popen", None)  # nothing may start
    (tmp_path / "bad.yaml").write_text("benchmarks:\n- benchmark_name: add\n  num_runs: -1\n")
    code, _, err = run_cli("run", *args, "--processes", "2")
    assert code == 2 and err.count("\n") == 1, err


def test_the_launcher_counts_the_job_s_devices_as_its_processes_will(monkeypatch):
    monkeypatch.setattr(launch, "gpus", lambda: 0)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=x --xla_force_host_platform_device_count=4")
    assert launch.job_devices(2) == 8
    monkeypatch.setattr(launch, "gpus", lambda: 2)  # a GPU each
    assert launch.job_devices(2) == 2


LEAVING = """
import os, sys, jax
from accelbench.jax_backend import distributed
def shutdown():
    os.write(2, b"W0000 coordination_service_agent.cc] WatchTasksAsync failed: CANCELLED\\n")
    if sys.argv[1] == "fails":
        raise RuntimeError("a peer is gone")
jax.distributed.shutdown = shutdown
print("rows", flush=True)
distributed.leave(3, sys.argv[2] == "-v")
"""


@pytest.mark.slow  # a process that imports JAX
@pytest.mark.parametrize("how", [("clean", ""), ("clean", "-v"), ("fails", "")])
def test_leaving_a_job_keeps_the_coordination_service_s_notes_below_v(how):
    """What JAX logs natively as a clean job's processes leave is held: shown under -v, or where the
    shutdown failed; the exit code and what was printed before stand."""
    done = subprocess.run(
        [sys.executable, "-c", LEAVING, *how], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3 and done.stdout == "rows\n"
    assert ("WatchTasksAsync" in done.stderr) == (how != ("clean", "")), done.stderr


@pytest.mark.slow  # real processes
def test_a_process_that_dies_stops_the_others_within_seconds(monkeypatch, capsys):
    monkeypatch.setattr(launch, "STOP_GRACE_S", 1.0)
    waiting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dying = subprocess.Popen(
        [sys.executable, "-c", "import os, signal, time; time.sleep(0.5); os.kill(os.getpid(), 9)"]
    )
    started = time.monotonic()
    code = launch._wait([waiting, dying])
    assert time.monotonic() - started < 20 and waiting.poll() is not None
    assert code == 137 and "process 1 of 2 ended with exit code 137" in capsys.readouterr().err
