"""The device timer as a library (issue 48): `accelbench.bench` on NumPy, JAX and PyTorch callables
through the same procedure as the catalogue's ops, the results as a table and through the one writer,
and the pytest plugin run by pytest itself in a subprocess."""

from __future__ import annotations

import csv
import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import accelbench
from accelbench.errors import Status, UserError


def test_a_numpy_function_is_checked_then_timed_with_its_rates():
    a = np.random.default_rng(0).standard_normal((64, 64))
    r = accelbench.bench(np.matmul, a, a, reference=np.matmul, flops=2 * 64**3, num_runs=7)
    assert r.ok and r.row.params.name == "matmul" and r.row.identity.backend == "numpy"
    assert len(r.samples_s) == 7 and r.median_s == pytest.approx(np.median(r.samples_s))
    assert r.time_definition == "wall_clock" and r.row.stats.stop_reason == "num_runs"
    assert r.row.timing.check == "passed" and r.row.derived.tflop_per_s > 0
    assert "matmul" in str(r) and "check passed" in str(r)


def test_a_wrong_function_fails_its_check_and_is_not_timed():
    a = np.ones((8, 8))
    r = accelbench.bench(lambda x: x * 3, a, reference=lambda x: x * 2, name="triple")
    assert r.row.status is Status.WRONG_RESULT and not r.samples_s
    assert "relative error" in r.row.identity.error and "triple" in str(r)


def test_a_precision_target_stops_when_the_interval_is_tight_enough():
    a = np.ones((32, 32))
    r = accelbench.bench(np.sum, a, target_precision=0.5, max_time_s=5.0)
    assert r.ok and r.row.stats.stop_reason in ("precision", "max_runs", "max_time")


def test_input_sets_rotate_and_each_is_checked():
    sets = [(np.full((4, 4), float(i)),) for i in range(3)]
    r = accelbench.bench(lambda x: x + 1, inputs=sets, reference=lambda x: x + 1, num_runs=6)
    assert r.ok and r.row.timing.input_set_count == 3
    wrong = {id(sets[2][0])}
    r = accelbench.bench(
        lambda x: x + (2 if id(x) in wrong else 1), inputs=sets, reference=lambda x: x + 1
    )
    assert r.row.status is Status.WRONG_RESULT  # the third set's output was checked too


def test_cold_and_warm_are_run_settings_and_tell_rows_apart():
    a = np.ones((64, 64))
    cold = accelbench.bench(np.sum, a, cache="cold", num_runs=3)
    warm = accelbench.bench(np.sum, a, cache="warm", num_runs=3)
    assert cold.row.conditions.cache == "cold" and warm.row.conditions.cache == "warm"
    assert cold.row.identity.case_id != warm.row.identity.case_id


def test_a_jax_function_is_one_jitted_program():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones((128, 128))
    r = accelbench.bench(lambda x, k: (x @ x) * k, x, 2.0, reference=lambda x, k: (x @ x) * k)
    assert r.ok and r.row.identity.backend == "jax" and r.row.identity.implementation == "jit"
    assert r.row.timing.compile_s is not None and r.row.timing.check == "passed"


def test_a_pytorch_function_eager_and_compiled_compare_by_variant():
    torch = pytest.importorskip("torch")
    t = torch.randn(64, 64)
    eager = accelbench.bench(torch.matmul, t, t, reference=np.matmul, num_runs=5, variant="eager")
    assert eager.ok and eager.row.identity.backend == "torch" and eager.row.timing.check == "passed"
    doubled = accelbench.bench(
        functools.partial(torch.mul, other=2.0), t, num_runs=5, name="matmul", variant="x2"
    )
    table = accelbench.table([eager, doubled], by="variant")
    assert [c.header for c in table.columns][1:] == ["eager", "x2"]


def test_bad_options_are_one_line_naming_the_key():
    with pytest.raises(UserError, match="nm_runs"):
        accelbench.bench(np.sum, np.ones(3), nm_runs=3)
    with pytest.raises(UserError, match="num_runs"):
        accelbench.bench(np.sum, np.ones(3), num_runs=0)


def test_saved_results_are_a_run_of_the_store_that_compare_and_report_read(tmp_path, run_cli):
    a = np.ones((16, 16))
    results = [accelbench.bench(np.sum, a, num_runs=3), accelbench.bench(np.max, a, num_runs=3)]
    first = accelbench.save(results, str(tmp_path / "lib.csv"))
    second = accelbench.save(results, str(tmp_path / "lib.csv"))
    assert first.endswith("lib.csv") and second.endswith("lib.2.csv")
    with open(second, newline="") as f:
        assert [r["name"] for r in csv.DictReader(f)] == ["sum", "max"]
    code, out, _ = run_cli("compare", first, second, "--format", "csv")
    assert code == 0 and out.count("\n") == 3
    assert run_cli("report", second, "--output-dir", str(tmp_path / "rep"))[0] == 0


PLUGGED = """
import time
import numpy as np

SLOW = float(__import__("os").environ.get("SLOW", "0"))

def test_sum(microbench):
    a = np.ones((64, 64))
    r = microbench(lambda x: (time.sleep(SLOW), x.sum())[1], a, reference=np.sum, num_runs=15)
    assert r.ok
"""


def _pytest(tmp_path: Path, *args: str, slow: float = 0.0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLOW": str(slow), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.slow  # pytest in a subprocess, three times
def test_the_pytest_plugin_stores_prints_and_gates(tmp_path):
    (tmp_path / "test_k.py").write_text(textwrap.dedent(PLUGGED))
    first = _pytest(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "microbench" in first.stdout and (tmp_path / ".microbench/tests.csv").is_file()
    same = _pytest(tmp_path, "--microbench-compare", "--microbench-threshold", "1.0")
    assert same.returncode == 0, same.stdout
    assert "compared with" in same.stdout
    slower = _pytest(tmp_path, "--microbench-compare=1", slow=0.01)  # 0.01 s against ~20 µs
    assert slower.returncode == 1 and "conclusive regression" in slower.stdout, slower.stdout
    assert (tmp_path / ".microbench/tests.3.csv").is_file()
    elsewhere = _pytest(tmp_path, "--microbench-save", "m/x.csv")
    assert elsewhere.returncode == 0 and (tmp_path / "m/x.csv").is_file()
