"""The torchao ops: a small model before and after a quantization recipe (names as torchao's runner),
and a float8 training step. Models per model type (docs/ops.md), weights at their stored bits."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from accelbench.catalogue import OpParams, OpSpec, Traits, discover, param, register
from accelbench.core.column import doc
from accelbench.platform.dtypes import dtype
from accelbench.registry import register_once

ACTIVATIONS = ("Sigmoid", "ReLU", "LeakyReLU", "ReLU6", "GELU", "SiLU", "Hardswish")  # in torch.nn
MODEL_TYPES = ("linear", *(f"ln_linear_{a.lower()}" for a in ACTIVATIONS), "transformer_block")
Match = re.Match[str]
GROUP_SIZES = (32, 64, 128, 256)  # torchao's int4 / gemlite / uintx group sizes


BASELINE = "baseline"  # the unquantized recipe every other one is measured against


@dataclass(frozen=True)
class Recipe:
    """One quantization recipe of torchao's runner (or of its earlier versions), declared once; the
    torch backend declares each, with its makers, in torch_backend/recipes.py."""

    name: str
    pattern: str = ""  # the full-match pattern of the names a config may take (default: the name)
    examples: tuple[str, ...] = ()  # names it takes, spelt out (a parameterised recipe's)
    bits: float | None = 8  # stored bits per weight (None: the high-precision dtype's)
    group: int | None = None  # elements per scale (None, or a name's group below 1: per channel)
    bits_at: int | None = None  # the pattern's group holding the weight bits (checked 1..8)
    group_at: int | None = None  # the pattern's group holding the group size (checked in `groups`)
    groups: tuple[int, ...] = GROUP_SIZES
    peak: str | None = None  # the peak its matmuls run at (None: the high-precision dtype's)
    scale_bits: int = 32  # bits of scale (and zero point) stored per group: 2x16; MX, NVFP4: 8
    config: str = ""  # the torchao config it builds (docs/torchao_recipes.md)
    needs: str = ""  # the hardware or package it needs, as its maker checks it
    doc: str = ""  # what it measures
    make: Callable[..., Any] | None = None  # (torchao.quantization, match, target) -> its config
    make_2_4: Callable[..., Any] | None = None  # (torchao.quantization, target) -> its 2:4 config

    @property
    def full_pattern(self) -> str:
        return self.pattern or re.escape(self.name)

    @property
    def names(self) -> tuple[str, ...]:
        """What a typo is measured against."""
        return self.examples or (self.name,)

    def problem(self, match: Match) -> str | None:
        """What is wrong with the numbers a name spells, if anything: `int4wo-0` is a name torchao's
        runner would take and then fail on deep inside a case."""
        if self.bits_at is not None and not 1 <= int(match.group(self.bits_at)) <= 8:
            return f"weight bits must be 1..8, got {match.group(self.bits_at)}"
        if self.group_at is not None and int(match.group(self.group_at)) not in self.groups:
            groups = ", ".join(map(str, self.groups))
            return f"group size {match.group(self.group_at)} is not one of {groups}"
        return None


RECIPES: dict[str, Recipe] = {}


def register_recipe(recipe: Recipe) -> Recipe:
    return register_once(RECIPES, recipe.name, recipe, "torchao recipe")


def recipes() -> dict[str, Recipe]:
    """Every declared recipe (the torch backend's module declares them: discovered first)."""
    discover()
    return RECIPES


def recipe_examples() -> tuple[str, ...]:
    return (*(name for recipe in recipes().values() for name in recipe.names), *ALIASES)


@dataclass(frozen=True)
class Alias:
    """A name torchao's own benchmarks give a recipe (its perf script's model-level names)."""

    name: str
    runs_as: str  # the recipe name here, parameters spelt out
    note: str = ""


ALIASES: dict[str, Alias] = {}


def register_alias(alias: Alias) -> Alias:
    return register_once(ALIASES, alias.name, alias, "torchao recipe alias")


def alias_note(name: str) -> str | None:
    """What a config is told when it names a recipe by torchao's perf-script name."""
    if (alias := ALIASES.get(name)) is None:
        return None
    return f"'{name}' is torchao's perf-script name; it runs as {alias.runs_as}" + (
        f" ({alias.note})" if alias.note else ""
    )


def recipe_of(name: str) -> tuple[Recipe, Match] | None:
    """The recipe a config's name spells, with its parameters (bits, group size), if any."""
    recipes()
    name = ALIASES[name].runs_as if name in ALIASES else name
    for recipe in RECIPES.values():
        if match := re.fullmatch(recipe.full_pattern, name):
            return recipe, match
    return None


SPARSITY_KINDS = ("semi-sparse", "block")
# float8 training's scalings: torchao.float8's recipes, and the prototypes (blockwise, MX) beside them
TRAINING_GRANULARITIES = ("tensorwise", "rowwise", "blockwise", "mxfp8", "mxfp8-emulated")
BLOCK_DENSITY = 0.1  # block-sparse weights keep 10% of their 64x64 blocks (90% sparsity)
DEVICES = ("cuda", "cpu", "mps", "xpu")
HEAD_DIM = 128  # attention heads of transformer_block are k / 128 wide-128 heads (flash/efficient SDPA sizes)
MLP_RATIO = 4


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
        if kind == "semi-sparse":  # 2:4 pairs with baseline and the recipes that have a 2:4 maker
            partners += [r for r in recipes if (known := recipe_of(r)) and known[0].make_2_4]
        pairs += [(recipe, sparsity) for recipe in partners]
    return list(dict.fromkeys(pairs))


def weight_bits(recipe: str, hp_bits: int, sparsity: str = "none") -> float:
    """Stored bits per dense weight element: group scales and zero points, 2:4 values and their
    2-bit indices, or the kept blocks of a block-sparse weight."""
    bits: float = 8
    if (known := recipe_of(recipe)) is not None:
        r, match = known
        bits = int(match.group(r.bits_at)) if r.bits_at else hp_bits if r.bits is None else r.bits
        group = int(match.group(r.group_at)) if r.group_at else r.group
        bits += r.scale_bits / group if group and group >= 1 else 0
    kind = sparsity_kind(sparsity)
    if kind == "semi-sparse":
        return bits / 2 + 1
    return bits * BLOCK_DENSITY if kind == "block" else bits


def _layer_flops(m: int, k: int, n: int) -> float:
    # layernorm ~5 ops/element, activation 1 op/element
    return 2.0 * m * k * n + 5.0 * m * k + m * n


# FLOPs per model type (hidden size k for the transformer block: qkv, out proj, attention, 4x MLP)
MODEL_FLOPS = {
    "linear": lambda m, k, n: 2.0 * m * k * n,
    "transformer_block": lambda m, k, n: 24.0 * m * k * k + 4.0 * m * m * k,
}


@dataclass(frozen=True)
class TorchaoModelParams(OpParams):
    """The model a recipe is applied to, and how the case runs it (after the recipe's own fields)."""

    trailing = True
    model_type: str = param("str", "linear")
    shape_name: str = param("str", "custom")
    m: int = param("dim")
    k: int = param("dim")
    n: int = param("dim")
    high_precision_dtype: str = param("dtype", "bfloat16", ("bfloat16", "float16", "float32"))
    compile_mode: str = param("choice", "off", ("off", "default", "max-autotune"))
    device: str = param("choice", "cuda", DEVICES)
    enable_profiler: bool = param("bool", False)
    enable_memory_profiler: bool = param("bool", False)
    output_dir: str = param("path", "results/torchao")


@dataclass(frozen=True)
class TorchaoInferenceParams(TorchaoModelParams):
    recipe: str = param("str", BASELINE)
    sparsity: str = param("str", "none")


def model_flops(p: TorchaoModelParams) -> float:
    return MODEL_FLOPS.get(p.model_type, _layer_flops)(p.m, p.k, p.n)


def recipe_peak(p: TorchaoInferenceParams) -> str:
    known = recipe_of(p.recipe)
    return known[0].peak if known and known[0].peak else dtype(p.high_precision_dtype).peak_family


def model_bytes(p: TorchaoModelParams, recipe: str, sparsity: str) -> float:
    m, k, n = p.m, p.k, p.n
    hp = dtype(p.high_precision_dtype).nbytes
    wbytes = weight_bits(recipe, int(hp * 8), sparsity) / 8
    if p.model_type == "transformer_block":
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
    baseline_peak_reserved_bytes: int | None = field(
        default=None,
        metadata=doc(
            "this and the next three: CUDA's caching allocator during one call, cache emptied"
        ),
    )
    quantized_peak_reserved_bytes: int | None = None
    baseline_fragmentation_bytes: int | None = field(
        default=None,
        metadata=doc("reserved beyond the peak allocation (rounding, unusable splits)"),
    )
    quantized_fragmentation_bytes: int | None = None
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
        return self.recipe == BASELINE and self.sparsity in ("", "none")

    LABEL_ORDER: ClassVar[tuple[str, ...]] = ("shape_name", "m", "k", "n", "model_type", "recipe")


register(
    OpSpec(
        name="torchao_inference",
        suite="quantization",
        doc="a model (linear, ln_linear_<act>, transformer_block) before and after a torchao recipe",
        typed=TorchaoInferenceParams,
        flops=model_flops,
        bytes=lambda p: model_bytes(p, p.recipe, p.sparsity),
        peak_dtype=recipe_peak,
        row_extras=TorchaoExtras,
        traits=Traits(compiler_options=True),  # recipes set inductor options
    )
)

# a training step is the forward and the backward's two matmuls per linear (grad input, grad weight)
TRAINING_FLOP_FACTOR = 3


@dataclass(frozen=True)
class TorchaoTrainingParams(TorchaoModelParams):
    recipe: str = param("choice", "baseline", ("baseline", "float8"))
    scaling_granularity: str = param("choice", "none", ("none", *TRAINING_GRANULARITIES))
    scaling_type_input: str = param("choice", "dynamic", ("dynamic",))
    scaling_type_weight: str = param("choice", "dynamic", ("dynamic",))
    scaling_type_grad_output: str = param("choice", "dynamic", ("dynamic",))
    use_fast_accum: bool = param("bool", True)


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
        typed=TorchaoTrainingParams,
        flops=lambda p: TRAINING_FLOP_FACTOR * model_flops(p),
        # each of the three passes reads and writes about what the high-precision forward does
        bytes=lambda p: TRAINING_FLOP_FACTOR * model_bytes(p, BASELINE, "none"),
        peak_dtype=lambda p: (
            "fp8" if p.recipe == "float8" else dtype(p.high_precision_dtype).peak_family
        ),
        row_extras=TorchaoTrainingExtras,
        traits=Traits(compiler_options=True),  # recipes set inductor options
    )
)
