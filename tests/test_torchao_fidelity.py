"""The torchao dialect against torchao's own runner: recipes, sparsity, earlier keys, the runner's CSV,
and benchmark_mode: training (on CPU: planning, unsupported rows, the gradient check on tiny models)."""

import csv
import re

import pytest

from accelbench.errors import CaseFailure
from accelbench.ops.torchao import recipe_examples, recipe_of, recipes, sparsity_pairs, weight_bits

ALL_RECIPES = CONFIG_RECIPES = [r for r in recipe_examples() if r != "baseline"]


def test_sparsity_pairs_are_the_runners_set():
    recipes = ["baseline", "int8wo", "int8dq", "float8dq-row", "marlin", "float8wo"]
    assert sparsity_pairs(recipes, ["semi-sparse", "block", "2:4"]) == [
        *((r, "none") for r in recipes),
        ("baseline", "semi-sparse"),
        ("int8dq", "semi-sparse"),
        ("float8dq-row", "semi-sparse"),
        ("marlin", "semi-sparse"),
        ("baseline", "block"),
        ("baseline", "2:4"),
        ("int8dq", "2:4"),
        ("float8dq-row", "2:4"),
        ("marlin", "2:4"),
    ]
    assert sparsity_pairs(["baseline"], ["block", "block"]) == [
        ("baseline", "none"),
        ("baseline", "block"),
    ]


def test_weight_bits_of_sparse_and_low_bit_recipes():
    assert weight_bits("baseline", 16) == 16
    assert weight_bits("baseline", 16, "semi-sparse") == 16 / 2 + 1  # values halved, 2-bit indices
    assert weight_bits("baseline", 16, "block") == pytest.approx(1.6)  # 10% of the blocks kept
    assert weight_bits("float8dq-row", 16, "2:4") == 5
    assert weight_bits("uintx-4-64", 16) == 4 + 32 / 64
    assert weight_bits("int8_dynamic_activation_intx_weight-4-32-asym", 32) == 4 + 1
    assert weight_bits("int8_dynamic_activation_intx_weight-2-0", 32) == 2  # per channel
    assert weight_bits("fp6", 16) == 6


@pytest.fixture(scope="module")
def every_recipe(tmp_path_factory):
    """Every recipe name of the runner's tables and its earlier versions, dense and 2:4/block, on CPU."""
    from accelbench.cli import main

    root = tmp_path_factory.mktemp("recipes")
    names = ", ".join(CONFIG_RECIPES)
    (root / "c.yaml").write_text(
        f"quantization_config_recipe_names: [{names}]\n"
        "sparsity_config_recipe_names: [semi-sparse, block]\n"
        f"output_dir: {root / 'out'}\n"
        "model_params:\n"
        "  - matrix_shapes: [{name: custom, shapes: [[32, 128, 128]]}]\n"
        "    high_precision_dtype: torch.float32\n    device: cpu\n    num_runs: 2\n    warmup: 0\n"
    )
    assert main(["run", "--config", str(root / "c.yaml"), "--no-progress", "--torchao-csv"]) == 0
    rows = list(csv.DictReader(open(root / "out" / "results.csv")))
    return root, rows


@pytest.mark.slow  # the module's fixture runs every recipe
def test_every_recipe_name_is_planned_and_is_ok_or_says_why_not(every_recipe):
    _, rows = every_recipe
    dense = {r["recipe"]: r for r in rows if r["sparsity"] == "none"}
    assert set(dense) == {"baseline", *CONFIG_RECIPES}
    for recipe, row in dense.items():
        assert row["status"] in ("ok", "unsupported"), (recipe, row["error"])
        if row["status"] == "unsupported":
            assert row["error"] and row["time_median_s"] == ""
        elif recipe != "baseline":  # never silently the baseline
            assert row["recipe_status"] == "quantized" and float(row["sqnr_db"]) < 200
    assert dense["int8wo"]["status"] == dense["uintx-4-64"]["status"] == "ok"
    assert "no longer has Marlin" in dense["marlin"]["error"]
    assert "FPx" in dense["fp6"]["error"]
    assert "torch.float32" not in dense["int8_dynamic_activation_intx_weight-4-32-asym"]["error"]


@pytest.mark.slow  # the module's fixture runs every recipe
def test_sparse_pairs_on_a_cpu_are_unsupported_rows_with_the_reason(every_recipe):
    _, rows = every_recipe
    sparse = {(r["recipe"], r["sparsity"]): r for r in rows if r["sparsity"] != "none"}
    assert set(sparse) == {
        ("baseline", "semi-sparse"),
        ("baseline", "block"),
        # the recipes whose declaration pairs them with 2:4 (an alias as the recipe it runs as)
        *((r, "semi-sparse") for r in CONFIG_RECIPES if (k := recipe_of(r)) and k[0].make_2_4),
    }
    assert all(r["status"] == "unsupported" for r in sparse.values())
    assert "2:4 sparsity needs a CUDA GPU" in sparse["baseline", "semi-sparse"]["error"]
    assert "Triton BSR kernels" in sparse["baseline", "block"]["error"]
    assert "ROCm" in sparse["float8dq-tensor", "semi-sparse"]["error"]
    assert "no 2:4 layout" in sparse["int8dq", "semi-sparse"]["error"]


@pytest.mark.slow  # the module's fixture runs every recipe
def test_torchao_rows_carry_a_kernel_breakdown_on_a_cpu(every_recipe):
    _, rows = every_recipe
    int8dq = next(r for r in rows if r["recipe"] == "int8dq" and r["sparsity"] == "none")
    assert float(int8dq["kernels_per_iter"]) > 3
    # which kernel leads depends on the torch and torchao releases (aten::_int_mm, or torchao's own
    # quantize ops on newer ones): the breakdown names framework ops, whichever they are
    assert re.search(r"(aten|torchao)::", int8dq["top_kernels"])
    assert re.fullmatch(r"(\S+ x[\d.]+ \d+%; ){2}\S+ x[\d.]+ \d+%", int8dq["top_kernels"])


# torchao's runner's CSV columns, in its order
RUNNER_COLUMNS = (
    "name", "quantization", "sparsity", "m", "k", "n", "high_precision_dtype", "torch_compile_mode",
    "device", "model_type", "output_dir", "enable_profiler", "enable_memory_profiler",
    "baseline_model_eager_inference_time_in_ms", "quantized_model_eager_inference_time_in_ms",
    "baseline_model_compiled_inference_time_in_ms",
    "quantized_model_compiled_inference_time_in_ms", "eager speedup on baseline",
    "compile speedup on baseline", "eager vs compile speedup", "profiler_json_path",
    "memory_profile_path", "memory_visualization_path", "memory_stats",
)  # fmt: skip


@pytest.mark.slow  # the module's fixture runs every recipe
def test_the_runners_csv_has_its_columns_and_name(every_recipe):
    root, rows = every_recipe
    (path,) = (root / "out" / "inference").iterdir()
    assert re.fullmatch(r"results_\d{8}_\d{6}\.csv", path.name)
    lines = list(csv.DictReader(open(path)))
    assert tuple(lines[0]) == RUNNER_COLUMNS
    assert len(lines) == sum(r["status"] == "ok" for r in rows)
    int8wo = next(line for line in lines if line["quantization"] == "int8wo")
    assert int8wo["name"] == "benchmark_int8wo_linear_m32_k128_n128"
    assert int8wo["high_precision_dtype"] == "torch.float32"
    assert int8wo["torch_compile_mode"] == "false" and int8wo["sparsity"] == ""
    row = next(r for r in rows if r["recipe"] == "int8wo")
    assert float(int8wo["eager speedup on baseline"]) == pytest.approx(
        float(row["eager_speedup_ratio"])
    )


def test_the_runners_csv_never_replaces_a_file(tmp_path):
    from accelbench.dialects.torchao.runner import write_runner_csvs
    from accelbench.results.reading import RowReader

    row = {
        "op": "torchao_inference",
        "status": "ok",
        "output_dir": str(tmp_path),
        "recipe": "baseline",
        "model_type": "linear",
        "m": 1,
        "k": 2,
        "n": 3,
        "high_precision_dtype": "bfloat16",
        "compile_mode": "off",
        "device": "cpu",
        "enable_profiler": False,
        "enable_memory_profiler": False,
    }
    record = {k: str(v) for k, v in row.items()}
    (typed,) = RowReader(list(record)).rows([list(record.values())])
    first = write_runner_csvs([typed], now=0)
    second = write_runner_csvs([typed], now=0)
    assert first != second and all(map(lambda p: open(p).read(), first + second))
    assert second[0].endswith("_1.csv")


EARLIER = """
quantizations: [int8wo]
model_params:
  - name: old
    matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}]
    precision: torch.float32
    compile: "false"
    profile: false
    enable_memory_profile: false
    sparsity: semi-sparse
    device: cpu
"""


def test_earlier_keys_load_with_one_warning_each(write_yaml, run_cli):
    path = write_yaml(EARLIER)
    code, out, err = run_cli("validate", "--config", str(path), "--list")
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {path}: 'quantizations' is deprecated; use 'quantization_config_recipe_names'",
        f"warning: {path}: 'model_params[0].precision' is deprecated; use 'high_precision_dtype'",
        f"warning: {path}: 'model_params[0].compile' is deprecated; use 'torch_compile_mode'",
        f"warning: {path}: 'model_params[0].profile' is deprecated; use 'enable_profiler'",
        f"warning: {path}: 'model_params[0].enable_memory_profile' is deprecated; use "
        "'enable_memory_profiler'",
        f"warning: {path}: 'model_params[0].sparsity' is deprecated; use "
        "'sparsity_config_recipe_names'",
    ]
    from accelbench.run.planning import plan_from_file

    cases = plan_from_file(str(path))
    assert [(c.params.recipe, c.params.sparsity) for c in cases] == [
        ("baseline", "none"),
        ("int8wo", "none"),
        ("baseline", "semi-sparse"),
    ]
    assert {c.params.high_precision_dtype for c in cases} == {"float32"}
    assert {c.params.compile_mode for c in cases} == {"off"}


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "quantizations: [int8wo]\nquantization_config_recipe_names: [int8dq]\n"
            "model_params: {matrix_shapes: [{name: llama}]}\n",
            "error: {path}: quantizations: 'quantizations' (an earlier spelling of "
            "'quantization_config_recipe_names') and 'quantization_config_recipe_names' disagree; "
            "keep 'quantization_config_recipe_names'",
        ),
        (
            "model_params: {matrix_shapes: [{name: llama}], precison: torch.float32}\n",
            "error: {path}: model_params[0].precison: unknown key 'precison' (did you mean "
            "'precision'?)",
        ),
        (
            "sparsity_config_recipe_names: [semi_sparse, blok]\n"
            "model_params: {matrix_shapes: [{name: llama}]}\n",
            "error: {path}: sparsity_config_recipe_names[1]: unknown sparsity recipe 'blok' (known: "
            "semi-sparse or any name with 'semi' or '2:4', and block) (did you mean 'block'?)",
        ),
        (
            "scaling_granularity: rowwise\nmodel_params: {matrix_shapes: [{name: llama}]}\n",
            "error: {path}: scaling_granularity: 'scaling_granularity' belongs to benchmark_mode: "
            "training (this config runs inference)",
        ),
        (
            "benchmark_mode: training\nquantization_config_recipe_names: [int8dq]\n"
            "model_params: {matrix_shapes: [{name: llama}]}\n",
            "error: {path}: quantization_config_recipe_names: benchmark_mode: training runs float8 "
            "training against the high-precision model; quantization recipes belong to inference",
        ),
        (
            "benchmark_mode: training\nscaling_granularity: colwise\n"
            "model_params: {matrix_shapes: [{name: llama}]}\n",
            "error: {path}: scaling_granularity: Input should be 'tensorwise', 'rowwise', "
            "'blockwise', 'mxfp8' or 'mxfp8-emulated' (got 'colwise')",
        ),
    ],
)
def test_bad_torchao_keys_are_one_line(text, message, write_yaml, run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_yaml(text)
    code, _, err = run_cli("run", "--config", str(path))
    assert code == 2 and err.strip().splitlines()[-1] == message.format(path=path)
    assert not (tmp_path / "results").exists()


TRAINING = """
benchmark_mode: training
scaling_granularity: [tensorwise, rowwise]
use_fast_accum: false
output_dir: {out}
model_params:
  - matrix_shapes: [{{name: custom, shapes: [[32, 64, 64]]}}]
    model_type: ln_linear_relu
    high_precision_dtype: torch.float32
    device: cpu
    repeat_n: 3
"""


@pytest.mark.slow  # over a second: the full suite runs it
def test_training_mode_plans_baseline_and_each_granularity_and_is_unsupported_on_a_cpu(
    tmp_path, run_cli
):
    (tmp_path / "t.yaml").write_text(TRAINING.format(out=tmp_path / "out"))
    code, _, _ = run_cli(
        "run", "--config", str(tmp_path / "t.yaml"), "--no-progress", "--torchao-csv"
    )
    assert code == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert [(r["recipe"], r["scaling_granularity"], r["status"]) for r in rows] == [
        ("baseline", "none", "ok"),
        ("float8", "tensorwise", "unsupported"),
        ("float8", "rowwise", "unsupported"),
    ]
    base = rows[0]
    assert base["op"] == "torchao_training" and base["sample_count"] == "3"  # repeat_n
    assert float(base["baseline_s"]) == pytest.approx(float(base["time_median_s"]))
    assert float(base["model_flop"]) == 3 * (2 * 32 * 64 * 64 + 5 * 32 * 64 + 32 * 64)
    assert rows[1]["use_fast_accum"] == "false"
    assert "SM 8.9+" in rows[1]["error"]
    (csv_path,) = (tmp_path / "out" / "training").iterdir()
    (line,) = list(csv.DictReader(open(csv_path)))
    assert line["quantization"] == "baseline" and line["baseline_model_fwd_bwd_time_in_ms"]
    assert tuple(line) == (
        "name", "quantization", "scaling_granularity", "scaling_type_input", "scaling_type_weight",
        "scaling_type_grad_output", "use_fast_accum", *RUNNER_COLUMNS[3:11],
        "baseline_model_fwd_bwd_time_in_ms", "float8_model_fwd_bwd_time_in_ms", "speedup on baseline",
        "tops",
    )  # fmt: skip


def _tiny_steps(model_type, granularity):
    import torch

    from accelbench.ops.torchao import TorchaoTrainingParams
    from torch_backend.ops.torchao_training import (
        _inputs,
        convert,
        float8_training_config,
        make_step,
    )

    p = TorchaoTrainingParams(
        model_type=model_type,
        m=32,
        k=128,
        n=64,
        scaling_granularity=granularity,
        use_fast_accum=True,
    )
    cpu = torch.device("cpu")
    reference = make_step(*_inputs(p, cpu, torch.float32), "off", cpu)
    module, x, grad_out = _inputs(p, cpu, torch.float32)
    convert(module, float8_training_config(p, emulate=True))  # fp8 casts emulated on the CPU
    return reference, make_step(module, x, grad_out, "off", cpu)


@pytest.mark.parametrize("granularity", ["tensorwise", "rowwise"])
@pytest.mark.parametrize("model_type", ["linear", "ln_linear_silu", "transformer_block"])
def test_float8_gradients_pass_the_check_on_tiny_models(model_type, granularity):
    from torch_backend.ops.torchao_training import check_step

    reference, step = _tiny_steps(model_type, granularity)
    assert reference.names[0] == "input" and len(step.grads) == len(reference.grads)
    out_db, grad_db = check_step(reference, step.output, step.grads)
    assert 15 < grad_db < 60 and 15 < out_db < 60  # fp8 rounding: far from exact, far from noise


def test_a_wrong_gradient_fails_the_check_and_is_named():
    from torch_backend.ops.torchao_training import check_step

    reference, step = _tiny_steps("ln_linear_silu", "tensorwise")
    broken = list(step.grads)
    broken[2] = -broken[2]  # norm.bias, the second parameter
    with pytest.raises(CaseFailure, match=r"gradient of norm.bias has SQNR -\d"):
        check_step(reference, step.output, tuple(broken))


def test_every_recipe_is_one_declaration_with_its_maker_and_names():
    declared = recipes()
    assert all(r.make is not None for name, r in declared.items() if name != "baseline")
    assert all(re.fullmatch(r.full_pattern, n) for r in declared.values() for n in r.names)


def test_a_recipe_added_in_a_test_is_one_registration(tmp_path, run_cli):
    """Its name checks, its weight bits, its 2:4 pairing and its maker come from one record."""
    from accelbench import registrations
    from accelbench.ops.torchao import Recipe, register_recipe

    with registrations.scoped():
        register_recipe(
            Recipe(
                "probe3",
                r"probe3-(\d+)",
                ("probe3-64",),
                bits=3,
                group_at=1,
                make_2_4=lambda tq, target: None,  # paired with 2:4
            )
        )
        assert weight_bits("probe3-64", 16) == 3 + 32 / 64
        assert ("probe3-64", "semi-sparse") in sparsity_pairs(["probe3-64"], ["semi-sparse"])
        (tmp_path / "c.yaml").write_text(
            "quantization_config_recipe_names: [probe3-63]\nmodel_params:\n"
            "- {matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}], device: cpu}\n"
        )
        code, _, err = run_cli("validate", "--config", str(tmp_path / "c.yaml"))
        assert code == 2 and "group size 63 is not one of 32, 64, 128, 256" in err
    assert "probe3" not in recipes()  # gone with its scope


HISTORICAL = """
quantization_config_recipe_names: [int8wo]
sparsity_config_recipe_name: semi-sparse
model_params:
  - matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}]
    compile: true
    compile_mode: max-autotune
    device: cpu
  - matrix_shapes: [{name: custom, shapes: [[8, 64, 64]]}]
    compile: false
    compile_mode: max-autotune
    device: cpu
"""


def test_the_runners_historical_spellings_load_as_it_read_them(write_yaml, run_cli):
    """`compile: true/false` beside `compile_mode:` was the switch and the mode; the sparsity key was
    once singular."""
    from accelbench.run.planning import plan_from_file

    path = write_yaml(HISTORICAL)
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 0, err
    assert "'model_params[0].compile' is deprecated; use 'use_torch_compile'" in err
    assert "'sparsity_config_recipe_name' is deprecated; use 'sparsity_config_recipe_names'" in err
    cases = plan_from_file(str(path))
    modes = {c.params.compile_mode for c in cases[: len(cases) // 2]}
    assert modes == {"max-autotune"}  # switched on, in that mode
    assert {c.params.compile_mode for c in cases[len(cases) // 2 :]} == {"off"}
    assert ("baseline", "semi-sparse") in {(c.params.recipe, c.params.sparsity) for c in cases}
