"""The torchao dialect's matrix shape generators: (name, [m, k, n]) = (tokens, in, out). One named as
in torchao's runner yields its shapes, order and names (../shared/reference/UPSTREAM_TORCHAO.md); the
`<model>_layers` presets are ours: each distinct linear layer of a model (docs/ops.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from accelbench.config.expand import Axis, Expansion
from accelbench.errors import UserError, did_you_mean

Shape = tuple[str, list[int]]

# LLaMa 2 70B single-node weight shapes, fused attn.wqkv and ffn.w13, 4 x 4096 tokens
# (torchao benchmarks/microbenchmarks/benchmark_runner.py).
_LLAMA2_70B = {
    "attn.wqkv": (8192, 1280),
    "attn.w0": (1024, 8192),
    "ffn.w13": (8192, 7168),
    "ffn.w2": (3584, 8192),
}


# torchao's model generators: (layer, M, K, N) in the runner's order, at 16384 and 128000 tokens
def _runner(*layers: tuple[str, int, int]) -> tuple[tuple[str, int, int, int], ...]:
    return tuple((layer, m, k, n) for m in (16384, 128000) for layer, k, n in layers)


RUNNER_MODELS: dict[str, tuple[tuple[str, int, int, int], ...]] = {
    "llama4": _runner(("FFN", 8192, 5120), ("QO_proj", 8192, 8192), ("KV_proj", 8192, 1024)),
    "deepseek_v3_236b": _runner(("FFN", 1536, 5120), ("QKVO_proj", 7168, 7168)),
    "deepseek_v3_671b": _runner(("FFN", 2048, 7168), ("QKVO_proj", 7168, 7168)),
    "qwen3_32b": _runner(("QO_proj", 5120, 5120), ("KV_proj", 5120, 640)),
    "gemma3_27b": _runner(("QO_proj", 4096, 4096), ("KV_proj", 4096, 1024)),
}

# This project's presets: (in_features, out_features) of each distinct linear layer, with fused QKV
# and gate/up (w13) projections, dimensions from the models' public Hugging Face config.json files;
# named `<model>_layers` (the bare model names are the runner's generators above).
MODEL_PRESETS: dict[str, dict[str, tuple[int, int]]] = {
    # meta-llama/Llama-4-Scout-17B-16E: hidden 5120, 40 heads / 8 kv heads x 128, expert ffn 8192
    "llama4_layers": {
        "attn.wqkv": (5120, 7168),
        "attn.wo": (5120, 5120),
        "expert.w13": (5120, 16384),
        "expert.w2": (8192, 5120),
    },
    # DeepSeek 236B (DeepSeek-V2 dims): hidden 5120, MLA q_lora 1536 kv_lora 512, 128 heads,
    # dense ffn 12288, expert ffn 1536
    "deepseek_v3_236b_layers": {
        "attn.wq_a": (5120, 1536),
        "attn.wq_b": (1536, 24576),
        "attn.wkv_a": (5120, 576),
        "attn.wkv_b": (512, 32768),
        "attn.wo": (16384, 5120),
        "ffn.w13": (5120, 24576),
        "ffn.w2": (12288, 5120),
        "expert.w13": (5120, 3072),
        "expert.w2": (1536, 5120),
    },
    # deepseek-ai/DeepSeek-V3 (671B): hidden 7168, MLA q_lora 1536 kv_lora 512, 128 heads,
    # dense ffn 18432, expert ffn 2048
    "deepseek_v3_671b_layers": {
        "attn.wq_a": (7168, 1536),
        "attn.wq_b": (1536, 24576),
        "attn.wkv_a": (7168, 576),
        "attn.wkv_b": (512, 32768),
        "attn.wo": (16384, 7168),
        "ffn.w13": (7168, 36864),
        "ffn.w2": (18432, 7168),
        "expert.w13": (7168, 4096),
        "expert.w2": (2048, 7168),
    },
    # Qwen/Qwen3-32B: hidden 5120, 64 heads / 8 kv heads x 128, ffn 25600
    "qwen3_32b_layers": {
        "attn.wqkv": (5120, 10240),
        "attn.wo": (8192, 5120),
        "ffn.w13": (5120, 51200),
        "ffn.w2": (25600, 5120),
    },
    # google/gemma-3-27b-it: hidden 5376, 32 heads / 16 kv heads x 128, ffn 21504
    "gemma3_27b_layers": {
        "attn.wqkv": (5376, 8192),
        "attn.wo": (4096, 5376),
        "ffn.w13": (5376, 43008),
        "ffn.w2": (21504, 5376),
    },
}

PRESET_TOKENS = 4096
MAX_POWER = 22  # 2^22: the largest single dimension a case may have (catalogue.MAX_DIM)


def _grid(powers: range) -> Iterator[list[int]]:
    """Every (M, K, N) of powers of two, M outermost and N innermost (the expansion's product)."""
    sizes = tuple(2**p for p in powers)
    grid = Expansion(axes=tuple(Axis(d, sizes, d) for d in "mkn"))
    return ([p["m"].value, p["k"].value, p["n"].value] for p in grid.points())


# the power-of-two generators: their default (lowest, highest) powers, and their shapes over them,
# numbered in order (small_sweep's after its filter)
POWERS: dict[str, tuple[tuple[int, int], Callable[[range], Iterable[list[int]]]]] = {
    "pow2": ((10, 14), lambda ps: ([2**p] * 3 for p in ps)),
    "pow2_extended": (
        (10, 14),
        lambda ps: (s for p in ps for s in ([2**p] * 3, [2**p + 2 ** (p - 1)] * 3)),
    ),
    "small_sweep": ((10, 14), lambda ps: (s for s in _grid(ps) if s[0] <= s[1] <= s[2])),
    "sweep": ((8, 15), _grid),
}


def _powers(name: str, spec: dict[str, Any]) -> list[Shape]:
    """The generator's shapes, its powers bounded before any shape exists (at most 23^3 shapes)."""
    (low, high), shapes = POWERS[name]
    low = spec["min_power"] if spec.get("min_power") is not None else low
    high = spec["max_power"] if spec.get("max_power") is not None else high
    if high > MAX_POWER:
        raise UserError(
            f"max_power {high} makes dimensions of 2^{high}; the largest allowed is 2^{MAX_POWER}",
            key="max_power",
        )
    return [(f"{name}_{i}", mkn) for i, mkn in enumerate(shapes(range(low, high + 1)))]


def _runner_model(name: str, spec: dict[str, Any]) -> list[Shape]:
    return [(f"{name}_{layer}", [m, k, n]) for layer, m, k, n in RUNNER_MODELS[name]]


def _preset(name: str, spec: dict[str, Any]) -> list[Shape]:
    tokens = spec.get("tokens") or PRESET_TOKENS
    return [(f"{name}_{layer}", [tokens, k, n]) for layer, (k, n) in MODEL_PRESETS[name].items()]


GENERATOR_FUNCTIONS: dict[str, Callable[[str, dict[str, Any]], list[Shape]]] = {
    "custom": lambda name, spec: [(name, [int(d) for d in s]) for s in spec.get("shapes") or []],
    "llama": lambda name, spec: [
        (f"llama_{layer}", [4 * 4096, k, n]) for layer, (k, n) in _LLAMA2_70B.items()
    ],
    **dict.fromkeys(RUNNER_MODELS, _runner_model),
    **dict.fromkeys(POWERS, _powers),
    **dict.fromkeys(MODEL_PRESETS, _preset),
}


def generate_shapes(spec: dict[str, Any]) -> list[Shape]:
    """Shapes of one ``matrix_shapes`` entry, in torchao's order and naming."""
    name = spec["name"]
    if name not in GENERATOR_FUNCTIONS:
        raise UserError(
            f"unknown shape generator '{name}'",
            key="name",
            suggestion=did_you_mean(name, GENERATOR_FUNCTIONS),
        )
    # a generator makes its own shapes: given ones would be lost silently
    if spec.get("shapes") and name != "custom":
        raise UserError(
            f"'shapes' is read by the custom generator only; '{name}' makes its own (use name: "
            "custom, or drop shapes)",
            key="shapes",
        )
    return GENERATOR_FUNCTIONS[name](name, spec)
