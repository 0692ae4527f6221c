"""The torchao inference op: a small model before and after a quantization recipe.

Recipe names follow torchao's benchmark runner. FLOP and byte models are per model type
(docs/ops.md); weight bytes use the recipe's storage bits including group scales.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from microbench.catalogue import OpSpec, Param, Params, Traits, register
from microbench.core.column import doc
from microbench.errors import UserError, did_you_mean
from microbench.platform.dtypes import dtype

ACTIVATIONS = ("sigmoid", "relu", "leakyrelu", "relu6", "gelu", "silu", "hardswish")
MODEL_TYPES = ("linear", *(f"ln_linear_{a}" for a in ACTIVATIONS), "transformer_block")
# Every recipe of torchao's runner and of its earlier versions: its name -> the full-match pattern of
# the names a config may give it (the parameterised ones carry bits and group sizes). The torch backend
# maps each onto the installed torchao (torch_backend/recipes.py), or says why it cannot.
RECIPES: dict[str, str] = {
    "baseline": "baseline",
    "int8wo": "int8wo",
    "int8dq": "int8dq",
    "int8dq_prefill_wo_decode": "int8dq_prefill_wo_decode",
    "int8_dynamic_activation_intx_weight": (
        r"int8_dynamic_activation_intx_weight-(\d+)-(-?\d+)(?:-(.*))?"
    ),
    "float8wo": "float8wo",
    "float8dq": "float8dq",
    "float8dq-tensor": "float8dq-tensor",
    "float8dq-row": "float8dq-row",
    "int4wo": r"int4wo-(\d+)(-hqq)?",
    "gemlitewo": r"gemlitewo-(4|8)-(\d+)",
    "marlin": "marlin",
    "marlin-qqq": "marlin-qqq",
    "int8adq-int4w-symm": "int8adq-int4w-symm",
    "fp6": "fp6",
    "uintx": r"uintx-(\d+)-(\d+)(-hqq)?",
}
RECIPE_EXAMPLES = (
    *(name for name, pattern in RECIPES.items() if name == pattern),
    "int8_dynamic_activation_intx_weight-4-32-asym",
    "int4wo-128",
    "int4wo-128-hqq",
    "gemlitewo-4-64",
    "uintx-4-64",
)
# 2:4 pairs with baseline and these recipe families; block sparsity with baseline only
SEMI_SPARSE_PARTNERS = ("int8dq", "float8dq", "marlin")
SPARSITY_KINDS = ("semi-sparse", "block")
TRAINING_GRANULARITIES = ("tensorwise", "rowwise")
BLOCK_DENSITY = 0.1  # block-sparse weights keep 10% of their 64x64 blocks (90% sparsity)
COMPILE_MODES = ("off", "default", "max-autotune")
DEVICES = ("cuda", "cpu", "mps", "xpu")
HEAD_DIM = 128  # attention heads of transformer_block are k / 128 wide-128 heads (flash/efficient SDPA sizes)
MLP_RATIO = 4


def recipe_of(name: str) -> tuple[str, re.Match[str]] | None:
    """The recipe a config's name spells, with its parameters (bits, group size), if any."""
    for recipe, pattern in RECIPES.items():
        match = re.fullmatch(pattern, name)
        if match:
            return recipe, match
    return None


def is_known_recipe(name: str) -> bool:
    return recipe_of(name) is not None


GROUP_SIZES = (32, 64, 128, 256)  # torchao's int4 / gemlite / uintx group sizes
# recipe -> (its pattern's group holding weight bits, or None; the one holding the group size; the
# group sizes torchao takes for it: -1 and 0 both mean per channel)
RECIPE_NUMBERS: dict[str, tuple[int | None, int, tuple[int, ...]]] = {
    "int4wo": (None, 1, GROUP_SIZES),
    "gemlitewo": (1, 2, GROUP_SIZES),
    "uintx": (1, 2, GROUP_SIZES),
    "int8_dynamic_activation_intx_weight": (1, 2, (-1, 0, *GROUP_SIZES)),
}


def recipe_problem(name: str) -> str | None:
    """What is wrong with the numbers a known recipe's name spells (bits, group size), if anything:
    `int4wo-0` is a name torchao's runner would take and then fail on deep inside a case."""
    known = recipe_of(name)
    if known is None or known[0] not in RECIPE_NUMBERS:
        return None
    recipe, match = known
    bits_at, group_at, groups = RECIPE_NUMBERS[recipe]
    if bits_at is not None and not 1 <= int(match.group(bits_at)) <= 8:
        return f"weight bits must be 1..8, got {match.group(bits_at)}"
    if int(match.group(group_at)) not in groups:
        return f"group size {match.group(group_at)} is not one of {', '.join(map(str, groups))}"
    return None


def sparsity_kind(name: str) -> str | None:
    """The runner's reading of a sparsity name: anything with `semi` or `2:4` is 2:4, `block` is block."""
    if "semi" in name or "2:4" in name:
        return "semi-sparse"
    return "block" if name == "block" else None


def sparsity_pairs(recipes: list[str], sparsities: list[str]) -> list[tuple[str, str]]:
    """The (recipe, sparsity) pairs the runner ran, in order and without repeats ("none": dense)."""
    pairs = [(recipe, "none") for recipe in recipes]
    for sparsity in sparsities:
        kind = sparsity_kind(sparsity)
        partners = ["baseline"]
        if kind == "semi-sparse":
            partners += [r for r in recipes if any(f in r for f in SEMI_SPARSE_PARTNERS)]
        pairs += [(recipe, sparsity) for recipe in partners]
    return list(dict.fromkeys(pairs))


def check_name(name: str, known: bool, examples: tuple[str, ...], what: str) -> str:
    """A name close to a known one is a typo and refused; a distant one is a user's new recipe or
    model (the torchao tutorial's placeholders) and yields `unsupported` rows at run time."""
    if known:
        return name
    suggestion = did_you_mean(name, examples)
    if suggestion:
        raise UserError(f"unknown {what} '{name}'", suggestion=suggestion)
    return name


# (pattern, storage bits, group size or None): recipes whose weights are not 8-bit
_LOW_BIT = (
    (r"int4wo-(\d+)(-hqq)?", lambda m: 4, lambda m: int(m.group(1))),
    (r"(gemlitewo|uintx)-(\d+)-(\d+)(-hqq)?", lambda m: int(m.group(2)), lambda m: int(m.group(3))),
    (
        r"int8_dynamic_activation_intx_weight-(\d+)-(-?\d+).*",
        lambda m: int(m.group(1)),
        lambda m: int(m.group(2)) if int(m.group(2)) > 0 else None,
    ),
    (r"marlin.*|int8adq-int4w.*", lambda m: 4, lambda m: None),
    (r"fp6", lambda m: 6, lambda m: None),
)


def weight_bits(recipe: str, hp_bits: int, sparsity: str = "none") -> float:
    """Stored bits per dense weight element: group scales and zero points, 2:4 values and their
    2-bit indices, or the kept blocks of a block-sparse weight."""
    bits: float = 8
    if recipe == "baseline":
        bits = hp_bits
    for pattern, bits_of, group_of in _LOW_BIT:
        match = re.fullmatch(pattern, recipe)
        if match:
            group = group_of(match)
            bits = bits_of(match) + (
                2 * 16 / group if group else 0
            )  # 16-bit scale + zero per group
    kind = sparsity_kind(sparsity)
    if kind == "semi-sparse":
        return bits / 2 + 1
    return bits * BLOCK_DENSITY if kind == "block" else bits


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
    wbytes = weight_bits(p["recipe"], int(hp * 8), p["sparsity"]) / 8
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
    baseline_eager_s: float | None
    quantized_eager_s: float | None
    baseline_compiled_s: float | None
    quantized_compiled_s: float | None
    eager_speedup_ratio: float | None
    compiled_speedup_ratio: float | None
    compiled_over_eager_speedup_ratio: float | None = field(
        metadata=doc("quantized eager time over quantized compiled time")
    )
    baseline_compile_time_s: float | None
    quantized_compile_time_s: float | None
    sqnr_db: float
    weight_density_pct: float
    baseline_weight_bytes: int
    quantized_weight_bytes: int
    baseline_peak_memory_bytes: int | None
    quantized_peak_memory_bytes: int | None
    profiler_trace_path: str | None = None
    memory_profile_path: str | None = None
    memory_profile_note: str | None = None

    @property
    def speedup(self) -> float | None:
        """The recipe over its baseline, compiled where the case was compiled."""
        compiled = self.compile_mode not in ("", "off")
        return self.compiled_speedup_ratio if compiled else self.eager_speedup_ratio

    @property
    def quality_db(self) -> float | None:
        return self.sqnr_db

    @property
    def variant(self) -> str:
        """What a chart colours this row by: the recipe, with its sparsity."""
        return self.recipe if self.sparsity in ("", "none") else f"{self.recipe}+{self.sparsity}"

    @property
    def is_reference(self) -> bool:
        """The dense baseline every recipe's speedup is taken against."""
        return self.recipe == "baseline" and self.sparsity in ("", "none")

    LABEL_ORDER: ClassVar[tuple[str, ...]] = ("shape_name", "m", "k", "n", "model_type", "recipe")


MODEL_PARAMS = (
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
)

register(
    OpSpec(
        name="torchao_inference",
        suite="quantization",
        doc="a model (linear, ln_linear_<act>, transformer_block) before and after a torchao recipe",
        params=(
            Param("recipe", "str", "baseline"),
            Param("sparsity", "str", "none"),
            *MODEL_PARAMS,
        ),
        flops=model_flops,
        bytes=model_bytes,
        peak_dtype=recipe_peak,
        row_extras=TorchaoExtras,
        traits=Traits(compiler_options=True),  # recipes set inductor options
    )
)

# a training step is the forward and the backward's two matmuls per linear (grad input, grad weight)
TRAINING_FLOP_FACTOR = 3


def training_flops(p: Params) -> float:
    return TRAINING_FLOP_FACTOR * MODEL_FLOPS.get(p["model_type"], _layer_flops)(
        p["m"], p["k"], p["n"]
    )


def training_bytes(p: Params) -> float:
    """Each of the three passes reads and writes about what the high-precision forward does."""
    return TRAINING_FLOP_FACTOR * model_bytes({**p, "recipe": "baseline", "sparsity": "none"})


def training_peak(p: Params) -> str:
    return "fp8" if p["recipe"] == "float8" else dtype(p["high_precision_dtype"]).peak_family


@dataclass
class TorchaoTrainingExtras:
    """A training step's figures beside the high-precision model's, and how far its gradients moved."""

    baseline_s: float | None  # the high-precision step's median, same timer and definition
    float8_s: float | None
    speedup_ratio: float | None
    grad_sqnr_db: float
    output_sqnr_db: float
    baseline_compile_time_s: float | None
    compile_time_s: float | None
    profiler_trace_path: str | None = None
    memory_profile_path: str | None = None
    memory_profile_note: str | None = None

    @property
    def speedup(self) -> float | None:
        return self.speedup_ratio

    @property
    def quality_db(self) -> float | None:
        """The worst gradient's SQNR against the high-precision model."""
        return self.grad_sqnr_db


register(
    OpSpec(
        name="torchao_training",
        suite="quantization",
        doc="forward + backward of a model in high precision and with torchao.float8 training",
        params=(
            Param("recipe", "choice", "baseline", ("baseline", "float8")),
            Param("scaling_granularity", "choice", "none", ("none", *TRAINING_GRANULARITIES)),
            Param("scaling_type_input", "choice", "dynamic", ("dynamic",)),
            Param("scaling_type_weight", "choice", "dynamic", ("dynamic",)),
            Param("scaling_type_grad_output", "choice", "dynamic", ("dynamic",)),
            Param("use_fast_accum", "bool", True),
            *MODEL_PARAMS,
        ),
        flops=training_flops,
        bytes=training_bytes,
        peak_dtype=training_peak,
        row_extras=TorchaoTrainingExtras,
        traits=Traits(compiler_options=True),  # recipes set inductor options
    )
)
