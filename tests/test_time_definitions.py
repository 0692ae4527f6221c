"""One definition of time: kernel attribution, the cache policy and thread count on every row, eager and
compiled PyTorch twins, and a case's own GPU."""

import contextlib
import csv

import pytest

from accelbench.catalogue import PreparedImplementation, all_specs, get_implementation, get_spec
from accelbench.measure.attribution import (
    AttributionError,
    KernelEvent,
    Launch,
    attribute,
    breakdown,
)

COMPUTE_OPS = [
    name
    for name, spec in all_specs().items()
    # transfers prepare themselves and have no compiled twin
    if spec.suite == "compute"
    and not isinstance(get_implementation(spec.name, "jax"), PreparedImplementation)
]


def k(name, start, dur, corr, stream=7):
    return KernelEvent(name, start, dur, stream, corr)


def test_kernels_belong_to_the_iteration_that_launched_them_with_gaps_overlaps_and_other_streams():
    windows = [(0, 100), (200, 300), (400, 500)]
    launches = [
        Launch(1, -60),
        Launch(2, 10),
        Launch(3, 20),
        Launch(4, 210),
        Launch(5, 215),
        Launch(6, 150),
        Launch(7, 405),
        Launch(8, 410),
    ]
    kernels = [
        k("flush", -50, 40, 1),  # the cache flush, launched before the first window: not counted
        k("gemm", 10, 30, 2),
        k("epilogue", 60, 5, 3),  # a gap between two kernels of one iteration
        k("gemm", 210, 30, 4),
        k("side", 220, 20, 5, stream=9),  # two streams overlapping: both counted
        k("flush", 150, 40, 6),  # launched between windows
        k("gemm", 405, 30, 7),
        k("epilogue", 440, 5, 8),
        k("foreign", 420, 5, 99),  # launched by someone else: no launch of ours carries its id
    ]
    its = attribute(windows, launches, kernels)
    assert [it.total_ns for it in its] == [35, 50, 35]
    assert [it.span_ns for it in its] == [55, 30, 40]
    rows = {kn.name: kn for kn in breakdown(its)}
    assert set(rows) == {"gemm", "epilogue", "side"}
    assert rows["gemm"].per_iter == 1 and rows["side"].per_iter == pytest.approx(1 / 3)
    assert rows["gemm"].share == pytest.approx(90 / 120)


def test_sustained_iterations_overlap_on_the_device_and_still_attribute():
    """Back to back: the device runs iteration 0's kernel after the host closed window 0."""
    windows = [(0, 10), (20, 30)]
    launches = [Launch(1, 5), Launch(2, 25)]
    kernels = [k("gemm", 40, 100, 1), k("gemm", 140, 100, 2)]
    assert [it.total_ns for it in attribute(windows, launches, kernels)] == [100, 100]


def test_a_kernel_whose_launch_record_was_lost_is_placed_by_the_op_that_issued_it():
    windows = [(0, 100), (200, 300)]
    kernels = [
        KernelEvent("a", 400, 5, 7, 1, 11),
        KernelEvent("a", 500, 5, 7, 2, 12),
    ]  # run after both windows
    launches = [
        Launch(1, 5),
        Launch(12, 210, "op"),
    ]  # iteration 1's runtime record is missing, its op is not
    assert [it.total_ns for it in attribute(windows, launches, kernels)] == [5, 5]


def test_a_kernel_whose_launch_record_was_lost_is_placed_by_where_it_ran_when_blocked():
    windows = [(0, 100), (200, 300)]
    kernels = [k("a", 10, 5, 1), k("a", 210, 5, 2)]
    assert [
        it.total_ns for it in attribute(windows, [Launch(1, 5)], kernels, executed_inside=True)
    ] == [5, 5]
    with pytest.raises(AttributionError, match="1 of 2 iterations"):
        attribute(windows, [Launch(1, 5)], kernels)  # sustained: no way to place it


def test_an_iteration_without_kernels_or_overlapping_windows_is_an_error():
    with pytest.raises(AttributionError, match="1 of 2 iterations have no device kernels"):
        attribute([(0, 100), (200, 300)], [Launch(1, 10)], [k("a", 10, 5, 1)])
    with pytest.raises(AttributionError, match="overlap"):
        attribute([(0, 100), (50, 300)], [Launch(1, 10)], [k("a", 10, 5, 1)])


def test_a_real_pytorch_session_is_read_into_one_window_per_iteration():
    """The kineto reader on this PyTorch's own events (a CPU session: windows and host ops, no kernels):
    each ITERATION range is a window, in order, and no host op is taken for a kernel."""
    torch = pytest.importorskip("torch")
    from torch.autograd.profiler import record_function

    from torch_backend import profiling, timing

    x = torch.ones(8)
    with profiling.recording(torch.device("cpu")) as prof:
        for _ in range(5):
            with record_function(timing.ITERATION):
                x = x + 1
    windows, launches, kernels, *_ = timing.windows_and_kernels(profiling.raw_events(prof), 0)
    assert len(windows) == 5 and windows == sorted(windows) and kernels == [] == launches
    assert all(start < end for start, end in windows)


CONDITIONS = """
threads: 1
benchmarks:
- benchmark_name: add
  backend: [jax, torch]
  implementation: eager
  num_runs: 2
  warmup: 0
  csv_path: out.csv
  benchmark_params: [{m: 16, n: 16}]
- benchmark_name: add
  backend: torch
  implementation: eager
  cache: warm
  num_runs: 2
  csv_path: out.csv
  benchmark_params: [{m: 16, n: 16, device: 7}]
"""


def test_cache_policy_timer_and_thread_count_are_on_every_row(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(CONDITIONS)
    run_cli("run", "--config", "c.yaml", "--no-progress")
    rows = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert [(r["backend"], r["status"], r["cache"], r["timer"]) for r in rows] == [
        ("jax", "ok", "cold", "auto"),
        ("torch", "ok", "cold", "auto"),
        ("torch", "unsupported", "warm", "auto"),  # device 7 on a machine without GPUs
    ]
    by = {r["backend"]: r for r in rows}
    assert by["torch"]["thread_count"] == "1"  # threads: applied to PyTorch's pool
    assert int(rows[0]["thread_count"]) >= 1  # JAX records the pool its CPU client uses
    assert rows[2]["thread_count"] == "1" and "no GPU" in rows[2]["error"]  # failed rows say so too
    for r in rows[:2]:
        assert float(r["launch_median_s"]) > 0 and r["timing_source"] == "wall_clock"


def test_sustained_cadence_is_recorded_and_gives_the_loops_mean(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "benchmarks:\n- benchmark_name: add\n  backend: [jax, torch]\n"
        "  implementation: eager\n  cadence: sustained\n  num_runs: 4\n"
        "  csv_path: out.csv\n  benchmark_params: [{m: 16, n: 16}]\n"
    )
    run_cli("run", "--config", "c.yaml", "--no-progress")
    rows = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert [(r["backend"], r["status"], r["cadence"]) for r in rows] == [
        ("jax", "ok", "sustained"),
        ("torch", "ok", "sustained"),
    ]
    assert all(
        r["time_min_s"] == r["time_max_s"] for r in rows
    )  # one mean over the back-to-back loop


@pytest.mark.slow
def test_eager_and_compiled_rows_for_every_pytorch_parity_op(tmp_path, monkeypatch, run_cli):
    from accelbench.catalogue import all_specs, implementations
    from torch_backend.arrays import array_builder

    compute = sorted(op for op in all_specs() if array_builder(op))  # the array ops: every one
    # has an eager and a compiled twin
    assert all(set(implementations(op, "torch")) == {"eager", "compile"} for op in compute)
    monkeypatch.chdir(tmp_path)
    from test_backends import SMALL

    def tiny(op: str) -> str:
        names = all_specs()[op].param_names
        return ", ".join(f"{k}: {v}" for k, v in SMALL.items() if k in names)

    blocks = "".join(
        f"- benchmark_name: {op}\n  benchmark_params: [{{{tiny(op)}}}]\n" for op in compute
    )
    (tmp_path / "c.yaml").write_text(
        f"backend: torch\nnum_runs: 2\nwarmup: 1\nbenchmarks:\n{blocks}"
    )
    run_cli("run", "--config", "c.yaml", "--no-progress", "--output-dir", str(tmp_path))
    rows = list(csv.DictReader(open(tmp_path / "c.csv")))
    compiled = {(r["op"], r["implementation"].startswith("compile")) for r in rows}
    assert len(rows) == 2 * len(compute) and compiled == {
        (op, c) for op in compute for c in (True, False)
    }
    assert all(r["status"] == "ok" for r in rows), [
        (r["op"], r["error"]) for r in rows if r["status"] != "ok"
    ]


def test_a_pytorch_case_times_on_its_own_gpu(monkeypatch):
    """device: 1 -> events, flush and profiler all on cuda:1 (a mocked two-GPU machine)."""
    import torch

    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.core.types import Prepared
    from torch_backend import arrays, timing

    entered = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    case = Case(
        op="add",
        backend="torch",
        params=get_spec("add").resolve({"m": 4, "n": 4, "device": 1}, "test"),
        run=RunSettings(num_runs=2, warmup=0, cache="cold"),
        outputs=Outputs(csv_path="x.csv"),
        benchmark="b",
    )
    assert arrays.compute_device(case) == torch.device("cuda", 1)

    class FakeEvent:
        def __init__(self, **kw):
            pass

        def record(self):
            pass

        def elapsed_time(self, other):
            return 0.001

    @contextlib.contextmanager
    def on_device(device):
        entered.append(device)
        yield

    flushed = []
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "device", on_device)
    monkeypatch.setattr(
        torch.cuda, "synchronize", lambda device=None: flushed.append(("sync", device))
    )
    monkeypatch.setattr(
        timing, "_l2_flush", lambda device: lambda: flushed.append(("flush", torch.device(device)))
    )
    gpu1 = torch.device("cuda", 1)
    prepared = Prepared(call=lambda: None, sync=lambda out: None, device=gpu1)
    result = timing._timer(timing.cuda_events)(case)(prepared, 0, 2)
    assert entered == [gpu1] and result.samples_s == [1e-6, 1e-6]
    assert [d for what, d in flushed if what == "flush"] == [gpu1, gpu1]


@pytest.mark.parametrize("op", sorted(COMPUTE_OPS))
def test_the_compiled_twin_is_one_graph(op):
    """torch.compile must trace the op whole: a graph break would quietly time eager code as 'compile'."""
    import numpy as np
    import torch
    import torch._dynamo

    from accelbench.catalogue import get_spec
    from torch_backend.arrays import array_builder
    from torch_backend.tensors import to_torch

    spec = get_spec(op)
    from test_backends import SMALL

    p = spec.resolve({k: v for k, v in SMALL.items() if k in spec.param_names}, op)
    fn, _ = array_builder(op)(p, torch.device("cpu"))
    args = [
        to_torch(a, torch.device("cpu"))
        for a in spec.make_inputs(p, np.random.default_rng(0)).values()
    ]
    torch._dynamo.reset()
    explained = torch._dynamo.explain(fn)(*args)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
