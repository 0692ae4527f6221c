"""Every extension point is one registration: each test adds one from inside the test (a timer, a
backend, an output sink, an op with a JAX and a PyTorch implementation) and runs it end to end through
the CLI, touching no other file."""

import csv
import json
from typing import Any

import numpy as np
import pytest

from accelbench import catalogue, registrations
from accelbench.catalogue import OpSpec, array_implementation, get_spec
from accelbench.core.types import DeviceInfo, Prepared, Timing
from accelbench.measure import procedure, timers
from accelbench.measure.numerics import digest_rows
from accelbench.ops.common import PlacementExtras, register_compute
from accelbench.platform import backends
from accelbench.results import sinks


@pytest.fixture
def scoped():
    """Whatever a test registers is gone afterwards (the program's own scope for registrations)."""
    with registrations.scoped():
        yield


def rows(path):
    return list(csv.DictReader(open(path)))


def test_a_timer_is_one_registration(scoped, write_yaml, run_cli, tmp_path):
    @timers.register_timer("probe_clock")
    def probe(case):
        def timer(prepared, warmup, n):
            timed = timers.wall_clock(prepared, warmup, n)
            return Timing(samples_s=timed.samples_s, source="probe_clock")

        return timer

    path = write_yaml(
        f"timer: probe_clock\nbenchmarks:\n- benchmark_name: add\n  num_runs: 3\n"
        f"  csv_path: {tmp_path}/t.csv\n  benchmark_params: [{{m: 8, n: 8}}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0, err
    (row,) = rows(tmp_path / "t.csv")
    assert (row["timer"], row["timing_source"], row["sample_count"]) == (
        "probe_clock",
        "probe_clock",
        "3",
    )


class DoublingBackend:
    """A backend that runs array ops with numpy, through the one procedure."""

    name = "probe"

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(
            kind="probe", count=1, platform="cpu", framework="probe", framework_version="1"
        )

    def measure(self, case):
        spec = catalogue.get_spec(case.op)
        impl = catalogue.implementation_of(catalogue.ArrayImplementation, case.op, self.name)
        host = spec.make_inputs(case.params, np.random.default_rng(0))
        fn = impl.build(case.params)
        prepared = Prepared(
            call=lambda: fn(*host.values()),
            sync=lambda out: None,
            implementation=impl.name,
            digest=lambda out: digest_rows(spec, case.params, host, lambda n, r: out[n][r]),
            finish=lambda timing, companions: PlacementExtras(1, "none"),  # compute ops' columns
        )
        timer = timers.get_timer(
            self.name, timers.timer_name(self.name, "cpu", case.run.timer), case
        )
        return procedure.measure(case, prepared, timer, self.device_info())


def test_a_backend_is_one_registration(scoped, write_yaml, run_cli, tmp_path):
    backends.register_backend(
        backends.BackendInfo("probe", 5, DoublingBackend, "accelbench.ops", "numpy")
    )
    array_implementation("add", "probe", "numpy")(lambda p: lambda a, b: {"out": a + b})
    path = write_yaml(
        f"benchmarks:\n- benchmark_name: add\n  backend: [jax, probe]\n  num_runs: 3\n"
        f"  csv_path: {tmp_path}/b.csv\n  benchmark_params: [{{m: 8, n: 8}}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0, [r["error"] for r in rows(tmp_path / "b.csv")]
    jax_row, probe_row = rows(tmp_path / "b.csv")
    assert (probe_row["backend"], probe_row["status"], probe_row["timing_source"]) == (
        "probe",
        "ok",
        "wall_clock",
    )
    assert probe_row["paired_with"] == jax_row["case_id"]  # its output agreed with JAX's
    assert float(probe_row["cross_backend_rel_error_ratio"]) < 1e-2


def test_an_output_sink_is_one_registration(scoped, write_yaml, run_cli, tmp_path):
    seen: dict[str, Any] = {"opened": 0, "rows": [], "closed": None}

    class Probe(sinks.Sink):
        def open(self):
            seen["opened"] += 1

        def row(self, case, row):
            seen["rows"].append((case.op, row.status.value, row.median_s))

        def close(self, rows, interrupted):
            seen["closed"] = (len(rows), interrupted)

    sinks.register_sink("probe")(lambda context: Probe())
    path = write_yaml(
        f"benchmarks:\n- benchmark_name: add\n  num_runs: 2\n  csv_path: {tmp_path}/s.csv\n"
        f"  benchmark_sweep_params: [{{m: [8, 16], n: 8}}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0, err
    assert seen["opened"] == 1 and seen["closed"] == (2, False)
    assert [(op, status) for op, status, _ in seen["rows"]] == [("add", "ok"), ("add", "ok")]
    assert all(median > 0 for _, _, median in seen["rows"])


def test_an_op_with_a_jax_and_a_pytorch_twin_is_one_registration_each(
    scoped, write_yaml, run_cli, tmp_path, monkeypatch
):
    from dataclasses import dataclass

    from accelbench.catalogue import param
    from accelbench.ops.common import Placed
    from torch_backend import arrays

    @dataclass(frozen=True)
    class Rows(Placed):
        m: int = param("dim")

    register_compute(  # a compute op: its parameters plus placement and seed
        OpSpec(
            name="probe_triple",
            doc="y = 3x",
            typed=Rows,
            flops=lambda p: float(p.m),
            bytes=lambda p: 8.0 * p.m,
            peak_dtype=lambda p: "fp32",
            make_inputs=lambda p, rng: {"x": rng.standard_normal((p.m, 1), dtype=np.float32)},
            reference=lambda x, p, rows: {"out": 3 * x["x"][rows].astype(np.float64)},
            output_rows=lambda p: p.m,
        )
    )
    array_implementation("probe_triple", "jax", "jit")(lambda p: lambda x: {"out": 3 * x})
    arrays.register_array_op("probe_triple", lambda p, device: (lambda x: {"out": 3 * x}, "eager"))
    path = write_yaml(
        f"benchmarks:\n- benchmark_name: probe_triple\n  backend: [jax, torch]\n  num_runs: 3\n"
        f"  implementation: [jit, eager]\n  csv_path: {tmp_path}/o.csv\n"
        f"  benchmark_params: [{{m: 64}}]\n"
    )
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0, err
    jax_row, torch_row = rows(tmp_path / "o.csv")
    assert (jax_row["backend"], torch_row["backend"]) == ("jax", "torch")
    assert {jax_row["check"], torch_row["check"]} == {"passed"}
    assert torch_row["paired_with"] == jax_row["case_id"]
    assert float(jax_row["model_flop"]) == 64


def test_an_op_parameter_is_one_field_of_its_ops_dataclass(scoped, write_yaml, run_cli, tmp_path):
    """A typed op declares its parameters once, as a frozen dataclass: the spec's parameter list, the
    config's checks, `list`, the CSV's columns and their typed read-back all come from it, and the
    op's models read attributes."""
    from dataclasses import FrozenInstanceError, dataclass

    from accelbench.catalogue import param
    from accelbench.errors import UserError
    from accelbench.ops.common import Placed
    from accelbench.results.reading import read_rows

    @dataclass(frozen=True)
    class ProbeParams(Placed):
        m: int = param("dim", doc="rows")
        buffer_mib: int = param("mib", 1, doc="a size in MiB: read back as a number")
        scale: float = param("float", 3.0)

    register_compute(
        OpSpec(
            name="probe_scale",
            doc="y = scale x",
            typed=ProbeParams,
            flops=lambda p: float(p.m),
            bytes=lambda p: 8.0 * p.m,
            peak_dtype=lambda p: "fp32",
            make_inputs=lambda p, rng: {"x": rng.standard_normal((p.m, 1), dtype=np.float32)},
            reference=lambda x, p, rows: {"out": p.scale * x["x"][rows].astype(np.float64)},
            output_rows=lambda p: p.m,
        )
    )
    spec = get_spec("probe_scale")
    assert [q.name for q in spec.params][:3] == ["m", "buffer_mib", "scale"]
    assert spec.typed.declared_param("m").required
    assert spec.typed.declared_param("buffer_mib").doc.startswith("a size")
    resolved = spec.resolve({"m": 64}, "probe")
    assert isinstance(resolved, ProbeParams) and resolved.m == 64 and resolved.scale == 3.0
    with pytest.raises(FrozenInstanceError):
        resolved.m = 1  # type: ignore[misc]
    with pytest.raises(UserError, match="unknown parameter 'mm'"):
        spec.resolve({"mm": 64}, "probe")

    array_implementation("probe_scale", "jax", "jit")(lambda p: lambda x: {"out": p.scale * x})
    path = write_yaml(
        f"benchmarks:\n- benchmark_name: probe_scale\n  backend: [jax]\n  num_runs: 2\n"
        f"  csv_path: {tmp_path}/o.csv\n  benchmark_params: [{{m: 64, buffer_mib: 2}}]\n"
    )
    code, listed, err = run_cli("list", "--json")
    assert code == 0 and "buffer_mib" in listed, err
    code, _, err = run_cli("run", "--config", str(path), "--no-progress")
    assert code == 0, err
    (row,) = rows(tmp_path / "o.csv")
    assert row["check"] == "passed" and row["buffer_mib"] == "2" and float(row["scale"]) == 3.0
    (typed,) = read_rows(tmp_path / "o.csv")
    assert typed.params.buffer_mib == 2 and typed.params.scale == 3.0


ADDED_SETTING = r"""
import dataclasses, json, sys
from accelbench.core import case
from accelbench.core.case import Rule, setting

# the one declaration a new run setting needs, made before anything reads the declarations
case.RunSettings = dataclasses.make_dataclass(
    "RunSettings",
    [(
        "probe_gap_s",
        float,
        setting("seconds between probes", Rule("duration", 0.0, 0, 60, column="probe_gap_s")),
    )],
    bases=(case.RunSettings,),
    frozen=True,
)
from accelbench.cli import main
from accelbench.config import settings
from accelbench.dialects.ironwood import schema
from accelbench.dialects.jax_bench.plan import JaxBenchConfig
from accelbench.config.loader import one_off_params
from accelbench.benchmarks.base import OURS
from accelbench.results.column_docs import settings_markdown
from accelbench.results.columns import header
from accelbench.results.records import Conditions, condition_values, Row
from accelbench.catalogue import get_spec

plain = case.Case(
    "add", "jax", get_spec("add").resolve({"m": 8, "n": 8}, "t"), case.RunSettings(), case.Outputs("x.csv"), "add"
)
gapped = dataclasses.replace(plain, run=dataclasses.replace(plain.run, probe_gap_s=0.5))
row = Row(identity=None, params={}, conditions=Conditions(probe_gap_s=0.5))
seen = {
    "schema": "probe_gap_s" in schema.Benchmark.model_fields,
    "top_level": "probe_gap_s" in schema.IronwoodConfig.model_fields,
    "checks": "probe_gap_s" in settings.RUN_KEYS,
    "command_line": "probe_gap_s" in {p.name for p in one_off_params("add")},
    "jax_bench": "probe_gap_s" in OURS,
    "readme": "| `probe_gap_s` |" in settings_markdown(),
    "id_changes": plain.id != gapped.id,
    "id_of_the_default_kept": plain.id == case.Case(
        "add", "jax", plain.params, case.RunSettings(probe_gap_s=0.0), case.Outputs("x.csv"), "add"
    ).id,
    "row_column": "probe_gap_s" in header(["m"]),
    "compared": ("probe_gap_s", 0.5) in condition_values(row),
}
print(json.dumps(seen))
sys.exit(main(["validate", "--config", sys.argv[1]]))
"""


def test_a_run_setting_is_one_declaration(tmp_path):
    """A setting declared once (a field of RunSettings with its default, doc, rule and column) is in
    the YAML schemas, the checks, the one-off command line, the jax-bench keys, the README's table,
    a case's id (only when it differs from its default), the row's columns and what compare pairs
    rows on; a value outside its rule is refused by name."""
    import subprocess
    import sys

    config = tmp_path / "c.yaml"
    config.write_text(
        "probe_gap_s: 100\nbenchmarks:\n- benchmark_name: add\n  benchmark_params: [{m: 8, n: 8}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", ADDED_SETTING, str(config)], capture_output=True, text=True
    )
    seen = json.loads(done.stdout.splitlines()[0])
    assert all(seen.values()), seen
    assert done.returncode == 2 and "probe_gap_s" in done.stderr, done.stderr


def test_a_cases_id_is_its_parameters_values_not_their_class():
    """Typing an op's parameters changed no case id: --resume still finds earlier runs' cases."""
    from accelbench.catalogue import ReadParams
    from accelbench.core.case import Case, Outputs, RunSettings

    typed = get_spec("add").resolve({"m": 8, "n": 8}, "test")
    ids = {
        Case("add", "jax", params, RunSettings(), Outputs("x.csv"), "add").id
        for params in (typed, ReadParams(typed.as_dict()))
    }
    assert len(ids) == 1


def test_a_registered_benchmark_crosses_to_a_worker_as_itself():
    """A case holds its benchmark (models as lambdas); an isolated worker receives it pickled."""
    import pickle

    from accelbench.benchmarks.base import TPUMS, V2

    for table in (V2, TPUMS):
        assert all(pickle.loads(pickle.dumps(entry)) is entry for entry in table.values())
