"""How Inductor compiles, decided from the run (issue 53): compiled cases compile in process (no pool
of compile workers to start and wait for), max-autotune keeps the pool, and the user's own
TORCHINDUCTOR_COMPILE_THREADS stands; the run's record keeps the choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from torch_backend import compile_workers


def case(implementation="compile", backend="torch", **params):
    from accelbench.ops.torchao import TorchaoModelParams

    typed = TorchaoModelParams(**params) if params else SimpleNamespace()
    return SimpleNamespace(implementation=implementation, backend=backend, params=typed)


def test_compiled_cases_compile_in_process_and_max_autotune_keeps_the_pool():
    assert compile_workers.in_process([case(), case("eager")]) is True
    assert compile_workers.in_process([case()] * 64) is True  # measured: the pool never paid off
    assert compile_workers.in_process([case(None, compile_mode="max-autotune")]) is False
    assert compile_workers.in_process([case("eager"), case(backend="jax")]) is None


def test_setup_sets_the_threads_unless_the_user_did_and_teardown_puts_it_back(monkeypatch):
    monkeypatch.delenv(compile_workers.THREADS, raising=False)
    compile_workers.setup([case()])
    assert os.environ[compile_workers.THREADS] == "1"
    compile_workers.teardown()
    assert compile_workers.THREADS not in os.environ
    monkeypatch.setenv(compile_workers.THREADS, "8")
    compile_workers.setup([case()])
    assert os.environ[compile_workers.THREADS] == "8"
    compile_workers.setup([case(None, compile_mode="max-autotune")])  # the pool: nothing to set
    compile_workers.teardown()
    assert os.environ[compile_workers.THREADS] == "8"


@pytest.mark.slow  # torch.compile in a fresh process
def test_a_one_case_compiled_run_records_that_it_compiled_in_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop(compile_workers.THREADS, None)
    done = subprocess.run(
        [sys.executable, "-m", "accelbench", "run", "--run", "add", "--m", "64", "--n", "64",
         "--backend", "torch", "--implementation", "compile", "--num-runs", "3", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = tmp_path.rglob("*.run.json")
    flags = json.loads(record.read_text())["environment"]["env_flags"]
    assert flags.get(compile_workers.THREADS) == "1"
