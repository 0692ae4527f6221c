"""The torchao inference op: a small model before and after a quantization recipe.

Recipe names follow torchao's benchmark runner. FLOP and byte models are per model type
(docs/ops.md); weight bytes use the recipe's storage bits including group scales.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from microbench.catalogue import OpSpec, Param, Params, register
from microbench.errors import UserError, did_you_mean
from microbench.platform.dtypes import dtype

ACTIVATIONS = ("sigmoid", "relu", "leakyrelu", "relu6", "gelu", "silu", "hardswish")
MODEL_TYPES = ("linear", *(f"ln_linear_{a}" for a in ACTIVATIONS), "transformer_block")
FIXED_RECIPES = ("baseline", "int8wo", "int8dq", "float8wo", "float8dq-tensor", "float8dq-row")
RECIPE_PATTERNS = (r"int4wo-(\d+)", r"int4wo-(\d+)-hqq", r"gemlitewo-(4|8)-(\d+)")
RECIPE_EXAMPLES = (*FIXED_RECIPES, "int4wo-128", "int4wo-128-hqq", "gemlitewo-4-64")
COMPILE_MODES = ("off", "default", "max-autotune")
DEVICES = ("cuda", "cpu", "mps", "xpu")
HEAD_DIM = 128  # attention heads of transformer_block are k / 128 wide-128 heads (flash/efficient SDPA sizes)
MLP_RATIO = 4


def is_known_recipe(name: str) -> bool:
    return name in FIXED_RECIPES or any(re.fullmatch(p, name) for p in RECIPE_PATTERNS)


def check_name(name: str, known: bool, examples: tuple[str, ...], what: str) -> str:
    """A name close to a known one is a typo and refused; a distant one is a user's new recipe or
    model (the torchao tutorial's placeholders) and yields `unsupported` rows at run time."""
    if known:
        return name
    suggestion = did_you_mean(name, examples)
    if suggestion:
        raise UserError(f"unknown {what} '{name}'", suggestion=suggestion)
    return name


def weight_bits(recipe: str, hp_bits: int) -> float:
    """Stored bits per weight element, group scales and zero points included."""
    if recipe == "baseline":
        return hp_bits
    if recipe.startswith(("int8", "float8")) or not is_known_recipe(recipe):
        return 8
    group = re.search(r"-(\d+)(-hqq)?$", recipe)
    bits = 4 if recipe.startswith("int4") else int(recipe.split("-")[1])
    return bits + (2 * 16 / int(group.group(1)) if group else 0)  # bf16 scale + zero per group


def _layer_flops(m: int, k: int, n: int) -> float:
    return (
        2.0 * m * k * n + 5.0 * m * k + m * n
    )  # layernorm ~5 ops/element, activation 1 op/element


# FLOPs per model type (hidden size k for the transformer block: qkv, out proj, attention, 4x MLP)
MODEL_FLOPS = {
    "linear": lambda m, k, n: 2.0 * m * k * n,
    "transformer_block": lambda m, k, n: 24.0 * m * k * k + 4.0 * m * m * k,
}
# the peak a recipe's matmuls run at, by recipe-name prefix
RECIPE_PEAKS = (("int8dq", "int8"), ("float8dq", "fp8"))


def model_flops(p: Params) -> float:
    return MODEL_FLOPS.get(p["model_type"], _layer_flops)(p["m"], p["k"], p["n"])


def recipe_peak(p: Params) -> str:
    for prefix, family in RECIPE_PEAKS:
        if p["recipe"].startswith(prefix):
            return family
    return dtype(p["high_precision_dtype"]).peak_family


def model_bytes(p: Params) -> float:
    m, k, n = p["m"], p["k"], p["n"]
    hp = dtype(p["high_precision_dtype"]).nbytes
    wbytes = weight_bits(p["recipe"], int(hp * 8)) / 8
    if p["model_type"] == "transformer_block":
        return 2 * m * k * hp + 12 * k * k * wbytes
    return (m * k + m * n) * hp + k * n * wbytes


@dataclass
class TorchaoExtras:
    """torchao runner's result fields and what this harness adds (SQNR, weight bytes, peak memory)."""

    shape_name: str
    model_type: str
    recipe: str
    sparsity: str
    recipe_status: str
    compile_mode: str
    torch_compile_mode: str
    baseline_eager_ms: float | None
    quantized_eager_ms: float | None
    baseline_compile_ms: float | None
    quantized_compile_ms: float | None
    eager_speedup: float | None
    compile_speedup: float | None
    eager_vs_compile_speedup: float | None
    baseline_compile_time_s: float | None
    quantized_compile_time_s: float | None
    sqnr_db: float
    weight_bytes_baseline: int
    weight_bytes_quantized: int
    baseline_peak_memory_mb: float | None
    quantized_peak_memory_mb: float | None
    cpu_threads: int
    profiler_trace_path: str | None = None
    memory_profile_path: str | None = None
    memory_profile_note: str | None = None


register(
    OpSpec(
        name="torchao_inference",
        suite="quantization",
        doc="a model (linear, ln_linear_<act>, transformer_block) before and after a torchao recipe",
        params=(
            Param("recipe", "str", "baseline"),
            Param("sparsity", "str", "none"),
            Param("model_type", "str", "linear"),
            Param("shape_name", "str", "custom"),
            Param("m", "dim"),
            Param("k", "dim"),
            Param("n", "dim"),
            Param("high_precision_dtype", "dtype", "bfloat16", ("bfloat16", "float16", "float32")),
            Param("compile_mode", "choice", "off", COMPILE_MODES),
            Param("device", "choice", "cuda", DEVICES),
            Param("enable_profiler", "bool", False),
            Param("enable_memory_profiler", "bool", False),
            Param("output_dir", "str", "results/torchao"),
        ),
        flops=model_flops,
        bytes=model_bytes,
        peak_dtype=recipe_peak,
        row_extras=TorchaoExtras,
    )
)
