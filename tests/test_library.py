"""The device timer as a library (issue 48): `accelbench.bench` on NumPy, JAX and PyTorch callables
through the same procedure as the catalogue's ops, the results as a table and through the one writer,
and the pytest plugin run by pytest itself in a subprocess."""

from __future__ import annotations

import ast
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


def test_the_documented_python_imports_the_package_it_uses():
    """Every Python block of the README and docs parses, never imports `microbench` (another project's
    name on the package index), and uses `accelbench.` only where its page has imported it (trial
    finding 4)."""
    root = Path(__file__).resolve().parents[1]
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        imported: set[str] = set()
        for block in page.read_text(encoding="utf-8").split("```python\n")[1:]:
            tree = ast.parse(block.split("```")[0], str(page))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported.update(a.name.split(".")[0] for a in node.names)
                if isinstance(node, ast.ImportFrom):
                    imported.add((node.module or "").split(".")[0])
            used = {
                n.value.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            }
            assert "microbench" not in imported, page
            assert "accelbench" not in used - imported, page


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
    assert [c.header for c in table.rich.columns][1:] == ["eager", "x2"]
    plain = accelbench.bench(np.matmul, t.numpy(), t.numpy(), num_runs=5)  # NumPy, variant default
    shown = str(accelbench.table([eager, doubled, plain], by="variant"))
    assert "matmul numpy:numpy" in shown and "no variant=eager row of this case" in shown
    plain = accelbench.bench(np.matmul, t.numpy(), t.numpy(), num_runs=5, variant="eager")
    by_backend = str(accelbench.table([plain, eager], by="backend"))
    assert "numpy" in by_backend.splitlines()[2] and "torch" in by_backend.splitlines()[2]
    assert "None" not in by_backend and "(" in by_backend  # a ratio, under a real heading


def test_a_table_prints_as_text_and_renders_in_a_notebook():
    results = [accelbench.bench(np.sum, np.ones(64), num_runs=3, name="s\x1b[31m")]
    table = accelbench.table(results)
    text = str(table)
    assert "median" in text and "\x1b" not in text and "object at" not in repr(table)
    assert "<table" in table._repr_html_() or "<pre" in table._repr_html_()
    assert "\x1b" not in str(results[0]) and "\\x1b" in str(results[0])  # spelt out


def test_numpy_runs_its_blas_on_one_thread_and_says_so():
    pytest.importorskip("threadpoolctl")
    a = np.ones((64, 64))
    r = accelbench.bench(np.matmul, a, a, num_runs=3)
    assert r.threads == 1 and r.row.conditions.thread_count == 1 and "host threads 1" in str(r)
    assert accelbench.bench(np.matmul, a, a, num_runs=3, threads=2).threads == 2


@pytest.mark.slow  # a fresh process: JAX sizes its CPU pool once, when its client starts
def test_a_jax_program_importing_accelbench_times_on_one_cpu_thread():
    """docs/library.md's order: jax, then accelbench, then the arrays (trial finding 9)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: one thread whatever the policy")
    program = (
        "import jax.numpy as jnp\nimport accelbench\nx = jnp.ones((8, 8))\n"
        "print(accelbench.bench(lambda a: a @ a, x, num_runs=3, warmup=1).threads)"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # one host device, not 4
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split()[-1] == "1", done.stderr


@pytest.mark.parametrize(
    "fn, keywords, key",
    [
        (np.sum, {"flops": -1}, "flops"),
        (np.sum, {"bytes": float("nan")}, "bytes"),
        (np.sum, {"rtol": -0.1}, "rtol"),
        (np.sum, {"backend": "tpu9"}, "backend"),
        (np.sum, {"inputs": []}, "inputs"),
        (np.sum, {"reference": 3}, "reference"),
        ("np.sum", {}, "fn"),
        (np.sum, {"num_runs": 0}, "num_runs"),
        (np.sum, {"nm_runs": 3}, "nm_runs"),
    ],
)
def test_bad_arguments_are_one_value_error_naming_the_keyword_before_anything_runs(
    fn, keywords, key
):
    calls = []
    called = (lambda *a: calls.append(a)) if callable(fn) else fn
    with pytest.raises(ValueError, match=key) as raised:
        accelbench.bench(called, np.ones(3), **keywords)
    assert isinstance(raised.value, UserError) and "\n" not in str(raised.value) and not calls


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
import os, time
import numpy as np

SLOW = float(os.environ.get("SLOW", "0"))
BROKEN = os.environ.get("BROKEN") == "1"

def work(x):
    if BROKEN:
        raise RuntimeError("broken now")
    if SLOW:  # a sleep of 0 would yield the CPU, which a busy host makes a wait of milliseconds
        time.sleep(SLOW)
    return x.sum()

def test_sum(microbench):
    r = microbench(work, np.ones((64, 64)), reference=np.sum, num_runs=15)
    assert r.ok or BROKEN

def test_max(microbench):
    r = microbench(lambda x: (SLOW and time.sleep(SLOW), x.max())[1], np.ones(64), num_runs=15)
    assert r.ok
"""


def _pytest(
    tmp_path: Path, *args: str, xdist: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env}
    environ.pop("PYTEST_XDIST_WORKER", None)
    plugins = [] if xdist else ["-p", "no:xdist"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugins, *args],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.slow  # pytest in a subprocess, several times
def test_the_pytest_plugin_stores_prints_and_gates(tmp_path):
    (tmp_path / "test_k.py").write_text(textwrap.dedent(PLUGGED))
    first = _pytest(tmp_path, "--microbench-compare")  # nothing stored yet: the gate is off
    assert first.returncode == 0, first.stdout + first.stderr
    assert (
        "no earlier run of .microbench/tests.csv to compare with: the gate is off" in first.stdout
    )
    assert (tmp_path / ".microbench/tests.csv").is_file() and "median" in first.stdout
    # the flag takes no next word: test_k.py stays a path, compared with the previous run
    same = _pytest(tmp_path, "--microbench-compare", "test_k.py", "--microbench-threshold", "1.0")
    assert same.returncode == 0 and "compared with" in same.stdout, same.stdout + same.stderr
    slower = _pytest(tmp_path, "--microbench-compare=1", SLOW="0.1")  # 0.1 s against ~20 µs
    assert slower.returncode == 1 and "conclusive regression" in slower.stdout, slower.stdout
    broken = _pytest(tmp_path, "--microbench-compare=1", BROKEN="1")  # a case that now fails
    assert broken.returncode == 1 and "failed in candidate" in broken.stdout, broken.stdout
    assert "2 passed" in broken.stdout  # the tests pass: the gate alone fails the session
    elsewhere = _pytest(tmp_path, "--microbench-save", "m/x.csv")
    assert elsewhere.returncode == 0 and (tmp_path / "m/x.csv").is_file()


@pytest.mark.slow  # pytest in a subprocess, several times
def test_the_plugin_refuses_what_cannot_be_gated_in_one_line(tmp_path):
    (tmp_path / "test_k.py").write_text(textwrap.dedent(PLUGGED))
    missing = _pytest(tmp_path, "--microbench-compare=nightly")
    assert missing.returncode == 2 and "no stored run" in missing.stdout + missing.stderr
    assert "passed" not in missing.stdout  # refused before any test ran
    for bad in ("-1", "nan"):
        refused = _pytest(tmp_path, f"--microbench-threshold={bad}")
        assert refused.returncode == 4 and "--microbench-threshold" in refused.stderr
    (tmp_path / "file").write_text("")
    unwritable = _pytest(tmp_path, "--microbench-save", "file/x.csv")
    said = unwritable.stdout + unwritable.stderr
    assert unwritable.returncode == 2 and "cannot write" in said and "INTERNALERROR" not in said
    for no_file in ("", ".", "sdir/"):  # a folder's name or none: refused, not a file named sdir
        refused = _pytest(tmp_path, "--microbench-save", no_file)
        said = refused.stdout + refused.stderr
        assert refused.returncode == 2 and "names no file" in said and "passed" not in said
        assert "Traceback" not in said and not (tmp_path / "sdir").exists()
    (tmp_path / "victim.csv").write_text("kept\n")
    (tmp_path / "lnk.csv").symlink_to(tmp_path / "victim.csv")
    for planted in ("lnk.csv", "a\x1b[31mb/x.csv"):  # trial 6: refused only after every test ran
        refused = _pytest(tmp_path, "--microbench-save", planted)
        said = refused.stdout + refused.stderr
        assert refused.returncode == 2 and "passed" not in said and "\x1b" not in said, said
    assert (tmp_path / "victim.csv").read_text() == "kept\n"
    if os.path.isdir("/proc"):  # a folder the kernel refuses though os.access says yes to root
        kernel = _pytest(tmp_path, "--microbench-save", "/proc/x.csv")
        said = kernel.stdout + kernel.stderr
        assert kernel.returncode == 2 and "cannot write" in said and "passed" not in said


@pytest.mark.slow  # pytest-xdist in a subprocess
def test_under_xdist_the_controller_gathers_one_file_one_table_and_gates(tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "test_k.py").write_text(textwrap.dedent(PLUGGED))
    first = _pytest(tmp_path, "-n", "2", xdist=True)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "microbench: 2 measurements in .microbench/tests.csv" in first.stdout
    slower = _pytest(tmp_path, "-n", "2", "--microbench-compare", xdist=True, SLOW="0.1")
    assert slower.returncode == 1 and "conclusive regression" in slower.stdout, slower.stdout
    assert not list(tmp_path.glob("microbench-*"))  # the workers' files are gone
