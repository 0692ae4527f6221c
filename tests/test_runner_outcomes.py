"""The runner's outcomes, one per way a case can end: every failure is a row with its status and a
one-line reason, never an exception that stops the sweep."""

import pytest

from accelbench.catalogue import get_spec
from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.core.types import CheckResult, DeviceInfo, Measurement, Timing
from accelbench.errors import CaseFailure, Status
from accelbench.platform import backends
from accelbench.run import runner

DEVICE = DeviceInfo(kind="fake", count=1, platform="cpu", framework="fake", framework_version="0")


class Scripted:
    """A backend whose measure does what the test says."""

    name = "fake"
    behaviour: object = None

    def device_info(self):
        return DEVICE

    def measure(self, case):
        if isinstance(self.behaviour, BaseException):
            raise self.behaviour
        if self.behaviour == "hang":
            import time

            time.sleep(5)
        return Measurement(
            timing=Timing(samples_s=[1e-3, 2e-3, 3e-3], source="fake_clock"),
            device=DEVICE,
            check=CheckResult("strict", "passed"),
            extras=None,
        )


@pytest.fixture
def fake_backend():
    from accelbench import registrations

    instance = Scripted()
    with registrations.scoped():
        backends.register_backend(
            backends.BackendInfo("fake", 9, lambda: instance, "accelbench.ops", "numpy")
        )
        yield instance


def case():
    run = RunSettings(num_runs=3, warmup=0)
    params = get_spec("fault").resolve({"mode": "ok", "n": 8}, "test")
    return Case("fault", "fake", params, run, Outputs(csv_path="x.csv"), "fault")


@pytest.mark.parametrize(
    "behaviour, status, reason",
    [
        (CaseFailure(Status.UNSUPPORTED, "no fp8 here"), Status.UNSUPPORTED, "no fp8 here"),
        (CaseFailure(Status.WRONG_RESULT, "off by one"), Status.WRONG_RESULT, "off by one"),
        (MemoryError(), Status.OOM, "out of device memory at m="),
        (RuntimeError("CUDA out of memory. Tried\nto allocate"), Status.OOM, "CUDA out of memory."),
        (ValueError("bad\nsecond line"), Status.ERROR, "ValueError: bad"),
    ],
)
def test_a_failing_case_is_a_row_with_its_status(fake_backend, behaviour, status, reason):
    fake_backend.behaviour = behaviour
    row, digest = runner.execute(case(), "run", {}, None)
    assert row.status is status and digest == {}
    assert reason.split(" at ")[0] in row.identity.error and "\n" not in row.identity.error
    assert row.median_s is None and row.conditions.timer == "auto"  # what it would have used


def test_a_hung_case_times_out_in_process(fake_backend):
    fake_backend.behaviour = "hang"
    row, _ = runner.execute(case(), "run", {}, None, timeout_s=0.2)
    assert row.status is Status.TIMEOUT and "0.2 s timeout" in row.identity.error


def test_a_timed_case_is_an_ok_row_with_its_statistics(fake_backend):
    row, _ = runner.execute(case(), "run", {}, None)
    assert row.ok and row.timing.timing_source == "fake_clock"
    assert row.stats.time_median_s == pytest.approx(2e-3) and row.stats.sample_count == 3
    assert row.series.samples_s == [1e-3, 2e-3, 3e-3]


@pytest.mark.parametrize(
    ("output", "named"),
    [
        ("x.c:1:10: fatal error: Python.h: No such file or directory", "needs Python.h"),
        ("Failed to find C compiler. Please specify via CC environment variable.", "C compiler"),
        ("Ninja is required to load C++ extensions", "needs ninja"),
        ("/bin/sh: 1: nvcc: not found", "needs nvcc"),
        ("nvcc fatal   : Unsupported gpu architecture 'compute_100'", "for compute_100"),
        ("error: identifier 'x' is undefined", None),  # a fault of the source itself: an error row
    ],
)
def test_a_build_names_the_piece_this_machine_lacks(output, named):
    got = runner._missing_piece(RuntimeError(f"Error building extension 'k': {output}"))
    assert got is None if named is None else named in got
