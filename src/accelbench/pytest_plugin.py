"""The pytest plugin (`pytest11: microbench`): a `microbench` fixture timing a callable with
`accelbench.bench` under the test's name, the session's measurements saved into the run store, a table
at the end, and `compare`'s gate (`--microbench-compare[=RUN]`: conclusively slower, or failed, fails).
Under pytest-xdist the controller saves, prints and gates for every worker. Nothing of the harness is
imported until a test asks for the fixture or the session ends."""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import shutil
import tempfile
from typing import Any

import pytest

RESULTS = pytest.StashKey[list[Any]]()
SAID = pytest.StashKey[list[str]]()
DEFAULT_FILE = ".microbench/tests.csv"
COMPARE = "--microbench-compare"
PREVIOUS = "previous"  # the implicit baseline: the only one that may be missing
WORKER_FILE = "microbench_file"  # the key a worker's measurements travel under to the controller


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("microbench", "device timing of the microbench fixture")
    group.addoption(
        "--microbench-save",
        default=DEFAULT_FILE,
        metavar="PATH",
        help=f"the results file of the session's measurements, numbered per run ({DEFAULT_FILE})",
    )
    group.addoption(
        COMPARE,
        nargs="?",  # alone it is rewritten to =previous before parsing: it never takes the next word
        const=PREVIOUS,
        default=None,
        metavar="RUN",
        help=f"compare with a stored run ({COMPARE}=RUN: its number or label; alone: the previous "
        "run) and fail the session on a conclusive regression",
    )
    group.addoption(
        "--microbench-threshold",
        type=_threshold,
        default=0.05,
        help="the slowdown the gate allows (0.05: 5%%)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: Any, args: list[str]
) -> None:
    """`--microbench-compare` alone is `=previous`: the word after it is never taken as its value."""
    args[:] = [f"{COMPARE}={PREVIOUS}" if a == COMPARE else a for a in args]


def _worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _stop(message: str) -> None:
    pytest.exit(f"microbench: {message}", returncode=2)


def pytest_configure(config: pytest.Config) -> None:
    """A missing named baseline or an unwritable save folder: one line, exit 2, before any test."""
    if _worker(config):
        return
    path = config.getoption("microbench_save")
    from accelbench.errors import UserError  # light: the harness stays unimported
    from accelbench.names import check_path_text, names_no_file

    if names_no_file(path):
        _stop(f"--microbench-save {path!r}: names no file (a results CSV)")
    try:  # the writer's own check, before any test rather than at the save
        check_path_text(path, "--microbench-save")
    except UserError as error:
        _stop(str(error))
    if os.path.islink(path):  # the save would refuse it at the end, after every test ran
        _stop(f"--microbench-save {path}: a symbolic link, refused (results never go through one)")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    try:  # a file made and removed, not os.access: root passes that where the kernel still refuses
        tempfile.TemporaryFile(dir=parent).close()
    except OSError:
        _stop(f"--microbench-save {path}: cannot write under {parent}")
    ref = config.getoption("microbench_compare")
    if ref not in (None, PREVIOUS) and _baseline(path, ref, None) is None:
        _stop(f"{COMPARE}={ref}: no stored run of {path} has that number or label")


@pytest.fixture
def microbench(request: pytest.FixtureRequest) -> Any:
    """`microbench(fn, *args, **options)`: `accelbench.bench` named after the test, kept for the session."""
    from accelbench.library import bench

    def measure(fn: Any, *args: Any, **options: Any) -> Any:
        options.setdefault("name", request.node.nodeid)
        result = bench(fn, *args, **options)
        request.config.stash.setdefault(RESULTS, []).append(result)
        return result

    return measure


def _baseline(path: str, ref: str, written: str | None) -> str | None:
    from accelbench.results.run_store import find_run, stored_runs

    runs = [r for r in stored_runs([path]) if written not in r.files]
    found = runs[-1] if ref == PREVIOUS and runs else find_run(runs, ref)
    return found.files[0] if found else None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    folder = getattr(node, "workeroutput", {}).get(WORKER_FILE)
    if not folder:
        return
    from accelbench.library import Result
    from accelbench.results.reading import read_rows

    try:
        found = [Result(r) for r in read_rows(os.path.join(folder, "w.csv"), series="all")]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    node.config.stash.setdefault(RESULTS, []).extend(found)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    results = config.stash.get(RESULTS, [])
    if not results:
        return
    from accelbench.errors import UserError
    from accelbench.library import save, table

    if _worker(config):  # the controller saves, prints and gates for every worker
        folder = tempfile.mkdtemp(prefix="microbench-")
        save(results, os.path.join(folder, "w.csv"))
        config.workeroutput[WORKER_FILE] = folder  # type: ignore[attr-defined]
        return
    said: list[str] = []
    config.stash[SAID] = said
    path = config.getoption("microbench_save")
    try:
        written = save(results, path)
    except (OSError, UserError) as error:
        said.append(f"microbench: the session's measurements were not saved: {error}")
        session.exitstatus = 2  # measurements lost are never a passing session
        return
    said += [str(table(results)), f"microbench: {len(results)} measurements in {written}"]
    if config.getoption("microbench_compare") is not None:
        session.exitstatus = _gate(config, path, written, said) or session.exitstatus


def _gate(config: pytest.Config, path: str, written: str, said: list[str]) -> int:
    """0 (pass, or no earlier run), 1 (a conclusive regression), 2 (no comparison)."""
    from accelbench.errors import UserError
    from accelbench.results.compare import run_compare

    ref = config.getoption("microbench_compare")
    baseline = _baseline(path, ref, written)
    if baseline is None:
        said.append(f"microbench: no earlier run of {path} to compare with: the gate is off")
        return 0
    out = io.StringIO()
    threshold = config.getoption("microbench_threshold")
    try:
        with contextlib.redirect_stdout(out):
            code = run_compare([[baseline], [written]], None, None, threshold, "table", True)
    except UserError as error:
        said.append(f"microbench: cannot compare with {baseline}: {error}")
        return 2
    said += [out.getvalue(), f"microbench: compared with {baseline}"]
    if code:
        said.append("microbench: a conclusive regression: the session fails")
    return code


def pytest_terminal_summary(terminalreporter: Any) -> None:
    said = terminalreporter.config.stash.get(SAID, [])
    if said:
        terminalreporter.section("microbench")
        for text in said:
            terminalreporter.write_line(text.rstrip("\n"))
