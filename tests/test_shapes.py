import pytest

from accelbench.config.shapes import MODEL_PRESETS, generate_shapes
from accelbench.errors import UserError


def test_custom_keeps_the_given_shapes():
    assert generate_shapes({"name": "custom", "shapes": [[1, 2, 3], [4, 5, 6]]}) == [
        ("custom", [1, 2, 3]),
        ("custom", [4, 5, 6]),
    ]


def test_llama_is_llama2_70b_with_16384_tokens():
    shapes = generate_shapes({"name": "llama"})
    assert shapes == [
        ("llama_attn.wqkv", [16384, 8192, 1280]),
        ("llama_attn.w0", [16384, 1024, 8192]),
        ("llama_ffn.w13", [16384, 8192, 7168]),
        ("llama_ffn.w2", [16384, 3584, 8192]),
    ]


def test_pow2_defaults_and_bounds():
    shapes = generate_shapes({"name": "pow2"})
    assert (
        len(shapes) == 5
        and shapes[0] == ("pow2_0", [1024] * 3)
        and shapes[-1] == ("pow2_4", [16384] * 3)
    )
    assert generate_shapes({"name": "pow2", "min_power": 10, "max_power": 12}) == [
        ("pow2_0", [1024] * 3),
        ("pow2_1", [2048] * 3),
        ("pow2_2", [4096] * 3),
    ]


def test_pow2_extended_adds_the_half_steps():
    assert generate_shapes({"name": "pow2_extended", "min_power": 10, "max_power": 11}) == [
        ("pow2_extended_0", [1024] * 3),
        ("pow2_extended_1", [1536] * 3),
        ("pow2_extended_2", [2048] * 3),
        ("pow2_extended_3", [3072] * 3),
    ]
    assert len(generate_shapes({"name": "pow2_extended"})) == 10


def test_sweep_is_every_mkn_combination():
    shapes = generate_shapes({"name": "sweep", "min_power": 8, "max_power": 9})
    assert len(shapes) == 8
    assert shapes[0] == ("sweep_0", [256, 256, 256]) and shapes[1] == ("sweep_1", [256, 256, 512])
    assert shapes[-1] == ("sweep_7", [512, 512, 512])
    assert len(generate_shapes({"name": "sweep"})) == 8**3


def test_small_sweep_keeps_m_le_k_le_n_in_loop_order():
    p = [1024, 2048, 4096]
    expected = [
        [p[0], p[0], p[0]],
        [p[0], p[0], p[1]],
        [p[0], p[0], p[2]],
        [p[0], p[1], p[1]],
        [p[0], p[1], p[2]],
        [p[0], p[2], p[2]],
        [p[1], p[1], p[1]],
        [p[1], p[1], p[2]],
        [p[1], p[2], p[2]],
        [p[2], p[2], p[2]],
    ]
    shapes = generate_shapes({"name": "small_sweep", "min_power": 10, "max_power": 12})
    assert shapes == [(f"small_sweep_{i}", mkn) for i, mkn in enumerate(expected)]
    assert len(generate_shapes({"name": "small_sweep"})) == 35  # powers 10..14: C(5+2, 3)


RUNNER_MODELS_EXPECTED = {
    "llama4": [
        ("llama4_FFN", [16384, 8192, 5120]),
        ("llama4_QO_proj", [16384, 8192, 8192]),
        ("llama4_KV_proj", [16384, 8192, 1024]),
        ("llama4_FFN", [128000, 8192, 5120]),
        ("llama4_QO_proj", [128000, 8192, 8192]),
        ("llama4_KV_proj", [128000, 8192, 1024]),
    ],
    "deepseek_v3_236b": [
        ("deepseek_v3_236b_FFN", [16384, 1536, 5120]),
        ("deepseek_v3_236b_QKVO_proj", [16384, 7168, 7168]),
        ("deepseek_v3_236b_FFN", [128000, 1536, 5120]),
        ("deepseek_v3_236b_QKVO_proj", [128000, 7168, 7168]),
    ],
    "deepseek_v3_671b": [
        ("deepseek_v3_671b_FFN", [16384, 2048, 7168]),
        ("deepseek_v3_671b_QKVO_proj", [16384, 7168, 7168]),
        ("deepseek_v3_671b_FFN", [128000, 2048, 7168]),
        ("deepseek_v3_671b_QKVO_proj", [128000, 7168, 7168]),
    ],
    "qwen3_32b": [
        ("qwen3_32b_QO_proj", [16384, 5120, 5120]),
        ("qwen3_32b_KV_proj", [16384, 5120, 640]),
        ("qwen3_32b_QO_proj", [128000, 5120, 5120]),
        ("qwen3_32b_KV_proj", [128000, 5120, 640]),
    ],
    "gemma3_27b": [
        ("gemma3_27b_QO_proj", [16384, 4096, 4096]),
        ("gemma3_27b_KV_proj", [16384, 4096, 1024]),
        ("gemma3_27b_QO_proj", [128000, 4096, 4096]),
        ("gemma3_27b_KV_proj", [128000, 4096, 1024]),
    ],
}


@pytest.mark.parametrize("model", sorted(RUNNER_MODELS_EXPECTED))
def test_runner_model_generators_match_torchaos_runner(model):
    assert generate_shapes({"name": model}) == RUNNER_MODELS_EXPECTED[model]


@pytest.mark.parametrize(
    "preset, count, first, last",
    [
        (
            "llama4_layers",
            4,
            ("llama4_layers_attn.wqkv", [4096, 5120, 7168]),
            ("llama4_layers_expert.w2", [4096, 8192, 5120]),
        ),
        (
            "deepseek_v3_236b_layers",
            9,
            ("deepseek_v3_236b_layers_attn.wq_a", [4096, 5120, 1536]),
            ("deepseek_v3_236b_layers_expert.w2", [4096, 1536, 5120]),
        ),
        (
            "deepseek_v3_671b_layers",
            9,
            ("deepseek_v3_671b_layers_attn.wq_a", [4096, 7168, 1536]),
            ("deepseek_v3_671b_layers_expert.w2", [4096, 2048, 7168]),
        ),
        (
            "qwen3_32b_layers",
            4,
            ("qwen3_32b_layers_attn.wqkv", [4096, 5120, 10240]),
            ("qwen3_32b_layers_ffn.w2", [4096, 25600, 5120]),
        ),
        (
            "gemma3_27b_layers",
            4,
            ("gemma3_27b_layers_attn.wqkv", [4096, 5376, 8192]),
            ("gemma3_27b_layers_ffn.w2", [4096, 21504, 5376]),
        ),
    ],
)
def test_project_layer_presets(preset, count, first, last):
    shapes = generate_shapes({"name": preset})
    assert len(shapes) == count and shapes[0] == first and shapes[-1] == last
    assert generate_shapes({"name": preset, "tokens": 128})[0][1][0] == 128
    assert set(MODEL_PRESETS) >= {preset}


def test_unknown_generator_suggests():
    with pytest.raises(
        UserError, match=r"unknown shape generator 'pow_2' \(did you mean 'pow2'\?\)"
    ):
        generate_shapes({"name": "pow_2"})
