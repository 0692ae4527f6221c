"""Upstream's model presets (its core/model_configs.py): a model's shape, whose fields a benchmark
takes where it has them (jax-bench's `model:`, TPUMS's `model_preset:`)."""

from __future__ import annotations

from typing import Any

from accelbench.benchmarks.hardware import hint

PRESET_KEYS = tuple(
    "layers seq_len attn_type num_q_heads num_kv_heads head_dim ffn_type model_dim shared_ffn_dim "
    "routed_ffn_dim num_experts experts_activated".split()
)


def _preset(*values: Any) -> dict[str, Any]:
    return dict(zip(PRESET_KEYS, values, strict=True))


MODEL_PRESETS: dict[str, dict[str, Any]] = {
    "LLM-36B": _preset(60, 8192, "MHA", 56, 56, 128, "SwiGLU", 7168, 2048, 2048, 256, 8),
    "LLM-100B": _preset(96, 16384, "GQA", 64, 8, 128, "SwiGLU", 8192, 2048, 2048, 512, 16),
    "LLM-200B": _preset(80, 16384, "GQA", 128, 8, 128, "SwiGLU", 16384, 4096, 4096, 256, 8),
    "LLM-400B": _preset(96, 16384, "GQA", 128, 8, 128, "SwiGLU", 16384, 4096, 4096, 512, 16),
}


def model_fields(
    name: Any, benchmark_fields: tuple[str, ...], entry: dict[str, Any], where: str
) -> tuple[dict[str, Any], str]:
    """The preset's values for the fields the benchmark has and the entry lacks (upstream passes all,
    and fails), and a note saying which; an unknown name adds nothing, as upstream."""
    preset = MODEL_PRESETS.get(str(name))
    if preset is None:
        return {}, (
            f"{where}: unknown model preset '{name}'{hint(str(name), MODEL_PRESETS)}: it sets "
            f"nothing, as jax-bench ignores it (presets: {', '.join(MODEL_PRESETS)})"
        )
    used = {k: v for k, v in preset.items() if k in benchmark_fields and k not in entry}
    note = (
        f"{where}: {name} sets {', '.join(f'{k}={v}' for k, v in used.items())}"
        if used
        else f"{where}: {name} sets nothing this benchmark takes"
    ) + " (the preset's other fields do not apply to this benchmark)"
    return used, note
