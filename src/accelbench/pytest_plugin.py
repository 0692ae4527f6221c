"""The pytest plugin (entry point `pytest11: microbench`): a `microbench` fixture that times a callable
with `accelbench.bench` under the test's name, every measurement of the session saved through the
project's writer into the run store, a table at the end, and a gate.

    def test_matmul(microbench):
        microbench(torch.matmul, a, b, flops=2 * m * n * k)

    pytest --microbench-compare            # fail on a conclusive regression against the previous run
    pytest --microbench-compare=3 --microbench-threshold=0.1   # against run 3 (or a --name label)

The gate is `microbench compare`'s: a case fails it when it is slower beyond the threshold and the
rank test says so, or when it failed; noise never does. Nothing here is imported until a test asks for
the fixture or the session ends with measurements.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

RESULTS = pytest.StashKey[list[Any]]()
SAID = pytest.StashKey[list[str]]()
DEFAULT_FILE = ".microbench/tests.csv"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("microbench", "device timing of the microbench fixture")
    group.addoption(
        "--microbench-save",
        default=DEFAULT_FILE,
        metavar="PATH",
        help=f"the results file of the session's measurements, numbered per run ({DEFAULT_FILE})",
    )
    group.addoption(
        "--microbench-compare",
        nargs="?",
        const="previous",
        default=None,
        metavar="RUN",
        help="compare with a stored run (its number or label; alone: the previous run) and fail the "
        "session on a conclusive regression",
    )
    group.addoption(
        "--microbench-threshold",
        type=float,
        default=0.05,
        help="the slowdown the gate allows (0.05: 5%%)",
    )


@pytest.fixture
def microbench(request: pytest.FixtureRequest) -> Any:
    """`microbench(fn, *args, **options)`: `accelbench.bench` named after the test (`name=` to choose),
    the measurement kept for the session's file and table, and returned."""
    from accelbench.library import bench

    def measure(fn: Any, *args: Any, **options: Any) -> Any:
        options.setdefault("name", request.node.nodeid)
        result = bench(fn, *args, **options)
        request.config.stash.setdefault(RESULTS, []).append(result)
        return result

    return measure


def _baseline(path: str, ref: str, written: str) -> str | None:
    from accelbench.results.run_store import find_run, stored_runs

    runs = [r for r in stored_runs([path]) if written not in r.files]
    found = runs[-1] if ref == "previous" and runs else find_run(runs, ref)
    return found.files[0] if found else None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    results = session.config.stash.get(RESULTS, [])
    if not results:
        return
    from rich.console import Console

    from accelbench.errors import UserError
    from accelbench.library import save, table
    from accelbench.results.compare import run_compare
    from accelbench.results.console import PIPE_WIDTH

    said: list[str] = []
    session.config.stash[SAID] = said
    path = session.config.getoption("microbench_save")
    written = save(results, path)
    text = io.StringIO()
    Console(file=text, width=PIPE_WIDTH).print(table(results))
    said += [text.getvalue(), f"microbench: {len(results)} measurements in {written}"]
    ref = session.config.getoption("microbench_compare")
    if ref is None:
        return
    baseline = _baseline(path, ref, written)
    if baseline is None:
        said.append(f"microbench: no stored run {ref!r} of {path} to compare with")
        return
    out = io.StringIO()
    threshold = session.config.getoption("microbench_threshold")
    try:
        with contextlib.redirect_stdout(out):
            code = run_compare([[baseline], [written]], None, None, threshold, False, True)
    except UserError as error:
        said.append(f"microbench: cannot compare: {error}")
        return
    said += [out.getvalue(), f"microbench: compared with {baseline}"]
    if code:
        said.append("microbench: a conclusive regression: the session fails")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    said = terminalreporter.config.stash.get(SAID, [])
    if said:
        terminalreporter.section("microbench")
        for text in said:
            terminalreporter.write_line(text.rstrip("\n"))
