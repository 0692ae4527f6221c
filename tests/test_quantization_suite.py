"""The torchao suite on CPU: recipes that run here, the unsupported path, SQNR, dashboard JSON, seed YAML."""

import csv
import json

import pytest
from conftest import SEED_EXAMPLES

CONFIG = """
quantization_config_recipe_names: [int8wo, int8dq, float8dq-row, my_new_quantization]
output_dir: out
model_params:
  - matrix_shapes: [{name: custom, shapes: [[64, 128, 256]]}]
    model_type: linear
    device: cpu
    num_runs: 5
  - matrix_shapes: [{name: custom, shapes: [[32, 128, 64]]}]
    model_type: ln_linear_gelu
  - matrix_shapes: [{name: custom, shapes: [[16, 256, 256]]}]
    model_type: transformer_block
    device: cuda
    num_runs: 5
"""


@pytest.fixture(scope="module")
def suite_rows(tmp_path_factory):
    from accelbench.cli import main

    root = tmp_path_factory.mktemp("tq")
    (root / "c.yaml").write_text(CONFIG.replace("output_dir: out", f"output_dir: {root / 'out'}"))
    assert (
        main(
            [
                "dashboard",
                "--config",
                str(root / "c.yaml"),
                "--output",
                str(root / "dash.json"),
                "--no-progress",
            ]
        )
        == 0
    )
    rows = list(csv.DictReader(open(root / "out" / "results.csv")))
    return rows, json.loads((root / "dash.json").read_text())


def by(rows, recipe, model):
    (row,) = [r for r in rows if r["recipe"] == recipe and r["model_type"] == model]
    return row


@pytest.mark.slow  # over a second: the full suite runs it
@pytest.mark.parametrize("model", ["linear", "ln_linear_gelu", "transformer_block"])
def test_int8_recipes_quantize_run_and_keep_a_good_sqnr(suite_rows, model):
    rows, _ = suite_rows
    base = by(rows, "baseline", model)
    assert base["status"] == "ok" and base["sqnr_db"] == "inf" and base["check"] == "passed"
    for recipe in ("int8wo", "int8dq"):
        row = by(rows, recipe, model)
        assert row["status"] == "ok" and row["recipe_status"] == "quantized"
        assert float(row["sqnr_db"]) > 30
        assert int(row["quantized_weight_bytes"]) < int(row["baseline_weight_bytes"])
        assert float(row["eager_speedup_ratio"]) == pytest.approx(
            float(row["baseline_eager_s"]) / float(row["quantized_eager_s"]), rel=1e-4
        )
        assert row["platform"] == "cpu" and int(row["thread_count"]) >= 1


def test_float8_on_cpu_and_an_unknown_recipe_are_unsupported_rows(suite_rows):
    rows, _ = suite_rows
    f8 = by(rows, "float8dq-row", "linear")
    assert f8["status"] == "unsupported" and "SM 8.9+" in f8["error"] and f8["time_median_s"] == ""
    mine = by(rows, "my_new_quantization", "linear")
    assert mine["status"] == "unsupported" and "not known to this harness" in mine["error"]


def test_dashboard_records_are_the_ci_runners_key_by_key(suite_rows):
    rows, records = suite_rows
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(records) == 3 * len(ok)  # no CPU memory figure: "Allocated Memory (MB)" is left out
    row = by(rows, "int8dq", "linear")
    # the recipe is the record's dtype; the model's name is M-K-N, as torchao's tutorial shows it
    mine = [
        r
        for r in records
        if r["model"]["name"] == "64-128-256" and r["benchmark"]["dtype"] == "int8dq"
    ]
    assert mine == [
        {
            "benchmark": {
                "name": "micro-benchmark api",
                "mode": "inference",
                "dtype": "int8dq",
                "extra_info": {
                    "device": "cpu",
                    "arch": row["device_kind"],
                    "torch_compile_mode": "false",
                },
            },
            "model": {
                "name": "64-128-256",
                "type": "micro-benchmark custom layer",
                "origins": ["torchao"],
            },
            "metric": {
                "name": metric,
                "benchmark_values": [pytest.approx(float(row[column]) * scale)],
                "target_value": 0.0,
                "extra_info": {"unit": unit},
            },
            "runners": [],
            "dependencies": {},
        }
        for metric, column, unit, scale in (
            ("Fwd Speedup (x)", "eager_speedup_ratio", "x", 1),
            ("Bfloat16 Fwd Time (ms)", "baseline_eager_s", "ms", 1e3),  # the rows' seconds, in ms
            ("Quantized Fwd Time (ms)", "quantized_eager_s", "ms", 1e3),
        )
    ]
    assert row["device_kind"] not in ("", "x86_64")  # the CPU's name, as the runner's arch


def test_a_recipe_that_leaves_weights_unquantized_is_unsupported(tmp_path, monkeypatch, run_cli):
    import torchao.quantization

    monkeypatch.setattr(torchao.quantization, "quantize_", lambda model, config: None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "quantization_config_recipe_names: [int8wo]\noutput_dir: out\nmodel_params:\n"
        "  matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}]\n  device: cpu\n  num_runs: 2\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert [r["status"] for r in rows] == ["ok", "unsupported"]
    assert rows[1]["error"] == "quantize_ with int8wo left the weights unquantized on cpu"


@pytest.mark.slow  # over a second: the full suite runs it
def test_compile_time_has_its_own_column_and_samples_are_compiled_calls(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "output_dir: out\nmodel_params:\n  matrix_shapes: [{name: custom, shapes: [[8, 32, 32]]}]\n"
        "  device: cpu\n  use_torch_compile: true\n  num_runs: 5\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    (row,) = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert (
        row["status"] == "ok"
        and row["implementation"] == "compiled"
        and row["compile_mode"] == "default"
    )
    assert float(row["quantized_compile_time_s"]) > float(
        row["time_max_s"]
    )  # compilation never in a sample
    assert row["sample_count"] == "5"


@pytest.mark.parametrize(
    "name, any_ok",
    [
        ("torchao_readme_example.yaml", True),
        ("tutorial_local_test.yml", True),
        ("tutorial_profiling.yml", True),
        ("tutorial_test_my_model.yml", False),
    ],
)
@pytest.mark.slow  # over a second: the full suite runs it
def test_seed_yaml_runs_on_cpu_at_reduced_shapes(name, any_ok, tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        "run",
        "--config",
        str(SEED_EXAMPLES / name),
        "--max-dim",
        "64",
        "--num-runs",
        "2",
        "--no-progress",
    )
    assert code == (0 if any_ok else 3)  # a run that measured nothing is not green
    (csv_path,) = list(tmp_path.rglob("results.csv"))
    rows = list(csv.DictReader(open(csv_path)))
    assert rows and all(max(int(r[d]) for d in "mkn") <= 64 for r in rows)
    assert {r["status"] for r in rows} <= {"ok", "unsupported"}
    # the tutorial's placeholder model type is the user's to define: its rows say so
    assert any(r["status"] == "ok" for r in rows) == any_ok
    if not any_ok:
        assert all("is not defined in torch_backend/models.py" in r["error"] for r in rows)


def test_a_recipes_inductor_settings_do_not_leak_into_the_next_case(tmp_path, monkeypatch, run_cli):
    import torch._inductor.config as inductor_config

    before = inductor_config.get_config_copy()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "quantization_config_recipe_names: [int8wo]\noutput_dir: out\nmodel_params:\n"
        "  matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}]\n  device: cpu\n  num_runs: 2\n"
    )
    assert run_cli("run", "--config", "c.yaml", "--no-progress")[0] == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert [r["status"] for r in rows] == [
        "ok",
        "ok",
    ]  # int8wo sets coordinate_descent_tuning globally
    after = inductor_config.get_config_copy()
    assert {k for k in before if before[k] != after[k]} == set()


def test_the_memory_page_loads_nothing_from_the_network():
    """Issue 45: PyTorch's memory page imports its script from a CDN; ours inlines its chart."""
    from torch_backend.memory_page import page, usage

    snapshot = {
        "device_traces": [
            [
                {"action": "alloc", "addr": 1, "size": 4 << 20},
                {"action": "alloc", "addr": 2, "size": 2 << 20},
                {"action": "free_completed", "addr": 1, "size": 4 << 20},
                {"action": "alloc", "addr": 3, "size": 1 << 20},
            ]
        ]
    }
    over, peak, blocks = usage(snapshot)
    assert over == [4 << 20, 6 << 20, 2 << 20, 3 << 20] and peak == 6 << 20
    assert blocks == [(1, 4 << 20), (2, 2 << 20)]
    text = page(snapshot, "linear-int8wo")
    assert "http" not in text and "<script" not in text and "data:image/png;base64," in text
