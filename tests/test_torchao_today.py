"""torchao as it is today (issue 49), on this CPU: every recipe its own benchmarks lead with resolves,
runs where the CPU can (emulated MX, NVFP4 weight-only, static int8 and fp8) with its SQNR checked, and
is an `unsupported` row naming what it needs elsewhere; torchao's perf-script names are aliases; removed
recipes say what removed them and what replaced them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from accelbench.ops.torchao import ALIASES, alias_note, recipe_of, recipes, weight_bits

TODAY = (
    "mxfp8", "mxfp8-emulated", "mxfp4", "mxfp4-emulated", "nvfp4", "nvfp4wo", "float8dq-block",
    "float8dq-block-triton", "float8dq-block-torch", "int4wo-fp8a", "int4wo-fp8a-plain",
    "float8-static", "int8-static", "int4wo-128-plain", "int4wo-128-preshuffled",
    "int4wo-128-plain_int32",
)  # fmt: skip
# on this CPU: what runs (with a usable SQNR), and why each other one cannot
RUNS_HERE = ("mxfp8-emulated", "mxfp4-emulated", "nvfp4wo", "float8-static", "int8-static")
NEEDS = {
    "mxfp8": "SM 10.0+",
    "mxfp4": "SM 10.0+",
    "nvfp4": "SM 10.0+",
    "float8dq-block": "SM 8.9+",
    "float8dq-block-triton": "SM 8.9+",
    "int4wo-fp8a": "SM 9.0+",
    "int4wo-128-plain": "needs CUDA",
}


@pytest.mark.parametrize("name", TODAY)
def test_each_recipe_resolves_with_its_declaration(name):
    known = recipe_of(name)
    assert known is not None and known[0].problem(known[1]) is None
    declared = known[0]
    assert declared.config and declared.needs and declared.doc  # the docs table's cells


def test_the_schemas_granularities_are_the_declared_ones():
    from typing import get_args

    from accelbench.dialects.torchao.schema import Granularity
    from accelbench.ops.torchao import TRAINING_GRANULARITIES

    assert get_args(Granularity) == TRAINING_GRANULARITIES


def test_mx_and_nvfp4_weights_cost_their_element_bits_and_8_bit_scales():
    assert weight_bits("mxfp8", 16) == pytest.approx(8 + 8 / 32)
    assert weight_bits("mxfp4", 16) == pytest.approx(4 + 8 / 32)
    assert weight_bits("nvfp4", 16) == pytest.approx(4 + 8 / 16)
    assert weight_bits("int4wo-128", 16) == pytest.approx(4 + 32 / 128)  # scale and zero, 16 bits


def test_torchaos_perf_script_names_are_aliases_with_a_note():
    assert set(ALIASES) == {
        "float8_rowwise", "int8_rowwise", "int8_rowwise_weight_only",
        "int4_groupwise_weight_float8_rowwise_activation", "int4_groupwise_hqq_weight_only",
    }  # fmt: skip
    for alias in ALIASES.values():
        (declared, match), (runs_as, its) = recipe_of(alias.name), recipe_of(alias.runs_as)
        assert declared is runs_as and match.groups() == its.groups()
    assert "runs as float8dq-row" in (alias_note("float8_rowwise") or "")
    assert {"mxfp8", "nvfp4"} <= set(recipes())  # torchao's names that are ours too


CONFIG = """
quantization_config_recipe_names: [{names}]
output_dir: {out}
model_params:
  - matrix_shapes: [{{name: custom, shapes: [[64, 256, 256]]}}]
    model_type: linear
    device: cpu
    num_runs: 3
"""


@pytest.fixture(scope="module")
def today_rows(tmp_path_factory):
    from accelbench.cli import main

    root = tmp_path_factory.mktemp("today")
    names = ", ".join([*TODAY, "float8_rowwise", "fp6", "marlin-qqq"])
    (root / "c.yaml").write_text(CONFIG.format(names=names, out=root / "out"))
    assert main(["run", "--config", str(root / "c.yaml"), "--no-progress", "-q"]) == 0
    with open(root / "out" / "results.csv", newline="") as f:
        return {r["recipe"]: r for r in csv.DictReader(f)}


@pytest.mark.slow  # a model per recipe
@pytest.mark.parametrize("name", RUNS_HERE)
def test_recipes_the_cpu_can_run_are_measured_and_checked(today_rows, name):
    row = today_rows[name]
    assert row["status"] == "ok", row["error"]
    assert row["recipe_status"] == "quantized" and float(row["sqnr_db"]) > 10
    assert int(row["quantized_weight_bytes"]) < int(row["baseline_weight_bytes"])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "needs"), NEEDS.items())
def test_recipes_the_cpu_cannot_run_say_what_they_need(today_rows, name, needs):
    row = today_rows[name]
    assert row["status"] == "unsupported" and needs in row["error"], row["error"]


@pytest.mark.slow
def test_an_alias_runs_its_recipe_and_removed_recipes_say_by_what(today_rows):
    assert "SM 8.9+" in today_rows["float8_rowwise"]["error"]  # float8dq-row's own gate
    fp6 = today_rows["fp6"]["error"]
    assert "no longer has" in fp6 and "pytorch/ao#3520" in fp6 and "replaced by" in fp6
    assert "pytorch/ao#3612" in today_rows["marlin-qqq"]["error"]


def test_an_alias_is_noted_when_a_config_names_it(tmp_path, run_cli, monkeypatch):
    from accelbench.dialects.torchao import plan

    monkeypatch.setattr(plan, "_NOTED", set())  # once a process: this test's process is shared
    path = tmp_path / "a.yaml"
    path.write_text(CONFIG.format(names="int8_rowwise", out=tmp_path / "o"))
    code, _, err = run_cli("validate", "--config", str(path))
    assert code == 0 and "runs as int8dq" in err


@pytest.mark.slow  # a model and its training step
@pytest.mark.parametrize(("granularity", "ok"), [("mxfp8-emulated", True), ("blockwise", False)])
def test_the_training_suite_takes_the_mx_and_blockwise_recipes(granularity, ok, tmp_path, run_cli):
    text = (
        f"benchmark_mode: training\nscaling_granularity: {granularity}\n"
        f"output_dir: {tmp_path / 'o'}\nmodel_params:\n"
        "  - matrix_shapes: [{name: custom, shapes: [[64, 128, 128]]}]\n"
        "    model_type: linear\n    device: cpu\n    num_runs: 3\n"
    )
    (tmp_path / "t.yaml").write_text(text)
    code, _, err = run_cli("run", "--config", str(tmp_path / "t.yaml"), "--no-progress", "-q")
    with open(next(Path(tmp_path / "o").glob("*.csv")), newline="") as f:
        rows = {r["recipe"]: r for r in csv.DictReader(f)}
    row = rows["float8"]
    if ok:
        assert row["status"] == "ok", row["error"]
    else:
        assert row["status"] == "unsupported" and "needs a CUDA GPU" in row["error"], row["error"]


def test_a_kernel_choice_torchao_refuses_is_unsupported_in_its_words():
    """torchao 0.18 refuses kernel_preference=TRITON for blockwise fp8 in the config itself (an
    AssertionError on an H100): the probe turns that into an unsupported row, not an error."""
    from accelbench.errors import CaseFailure, Status
    from accelbench.platform.frameworks import torch
    from torch_backend.recipes import Target
    from torch_backend.recipes_today import _probed

    def refused():
        raise AssertionError("unimplemented")

    target = Target("float8dq-block-triton", torch.device("cpu"), 128, 128, torch.bfloat16)
    with pytest.raises(CaseFailure) as caught:
        _probed(None, refused, target)
    assert caught.value.status is Status.UNSUPPORTED
    assert "AssertionError: unimplemented" in caught.value.reason


def test_gemlitewo_follows_torchao_0_18_and_earlier_configs(monkeypatch):
    """torchao 0.17+'s prototype UIntxWeightOnlyConfig (pytorch/ao#4144 deleted
    GemliteUIntXWeightOnlyConfig); before it, the old config; off CUDA or in fp32, unsupported."""
    import importlib.util
    import re
    import sys
    from types import SimpleNamespace

    import torch

    from accelbench.errors import CaseFailure
    from torch_backend import recipes

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: object() if n == "gemlite" else found(n, *a)
    )
    cuda = recipes.Target("gemlitewo-4-64", torch.device("cuda"), 256, 256, torch.bfloat16)
    four, eight = (re.fullmatch(r"gemlitewo-(4|8)-(\d+)", f"gemlitewo-{b}-64") for b in (4, 8))
    config = recipes._gemlite(None, four, cuda)
    assert type(config).__name__ == "UIntxWeightOnlyConfig" and config.group_size == 64
    assert recipes._gemlite(None, eight, cuda).group_size is None  # 8-bit: per channel
    old = SimpleNamespace(GemliteUIntXWeightOnlyConfig=lambda **kw: kw)
    monkeypatch.setitem(sys.modules, "torchao.prototype.quantization.quant_api", None)
    assert recipes._gemlite(old, four, cuda) == {"group_size": 64, "bit_width": 4}
    for target in (
        recipes.Target("gemlitewo-4-64", torch.device("cpu"), 256, 256, torch.bfloat16),
        recipes.Target("gemlitewo-4-64", torch.device("cuda"), 256, 256, torch.float32),
    ):
        with pytest.raises(CaseFailure, match="float16 or bfloat16 weights on CUDA"):
            recipes._gemlite(old, four, target)


def test_a_calls_memory_reads_reserved_and_fragmentation_beside_allocated(monkeypatch):
    """CUDA's allocator counters (scripted): the cache emptied and the peaks reset before the call,
    each peak over what was held before it; fragmentation is what was reserved beyond the peak
    allocation. Off CUDA: nothing."""
    from types import SimpleNamespace

    import torch

    from torch_backend import devices

    held = {"allocated": 100, "reserved": 1000}
    calls = []
    fake = dict(
        synchronize=lambda d=None: None,
        empty_cache=lambda: calls.append("empty"),
        reset_peak_memory_stats=lambda d=None: calls.append("reset"),
        memory_allocated=lambda d=None: held["allocated"],
        memory_reserved=lambda d=None: held["reserved"],
        max_memory_allocated=lambda d=None: 100 + 3000,
        max_memory_reserved=lambda d=None: 1000 + 4096,
    )
    for name, scripted in fake.items():
        monkeypatch.setattr(torch.cuda, name, scripted)
    peaks = devices.memory_peaks(lambda: "out", SimpleNamespace(type="cuda"))
    assert calls == ["empty", "reset"]
    assert (peaks.allocated_bytes, peaks.reserved_bytes, peaks.fragmentation_bytes) == (
        3000,
        4096,
        1096,
    )
    assert devices.peak_memory_bytes(lambda: "out", SimpleNamespace(type="cuda")) == 3000
    assert devices.memory_peaks(lambda: "out", SimpleNamespace(type="cpu")) is None
