"""FLOP and byte models against values worked out by hand (docs/ops.md derives each formula)."""

import pytest

from accelbench.catalogue import get_spec
from accelbench.results.roofline import derive
from accelbench.specs import Peaks


def params(op, **given):
    """The op's fully resolved parameters, exactly as the planner would make them."""
    return get_spec(op).resolve(given, op)


@pytest.mark.parametrize(
    "op, given, flops, nbytes",
    [
        # 2*M*N*K; fp8 A (1024x2048) and B (2048x512) read once, bf16 out written once
        ("gemm_simple", dict(m=1024, k=2048, n=512), 2147483648, 2097152 + 1048576 + 1048576),
        # bf16 in: (128*128 + 128*128)*2 + out 128*128*2
        ("gemm_multiple_run", dict(m=128, k=128, n=128, dtype="bfloat16"), 4194304, 65536 + 32768),
        # fp4 in: half a byte per element
        (
            "gemm_multiple_run",
            dict(m=128, k=128, n=128, dtype="float4_e2m1fn"),
            4194304,
            16384 + 32768,
        ),
        (
            "gemm_simple_with_dtype",
            dict(m=128, k=128, n=128, in_dtype="float8_e4m3fn", out_dtype="float32"),
            4194304,
            32768 + 65536,
        ),
        # + 2*M*N for the outer-product scaling; + 4*(M+N) bytes of fp32 scales
        ("gemm", dict(m=128, k=128, n=128), 4194304 + 32768, 32768 + 32768 + 1024),
        # + 3*M*N (scale twice, accumulate once); fp32 buffer read and written: 2*4*M*N
        ("gemm_accum", dict(m=128, k=128, n=128), 4194304 + 49152, 32768 + 1024 + 131072),
        # the reference's spellings: in_dtype_str/out_dtype_str, 'fp8' and 'bf16' in any case
        (
            "gemm_simple_with_dtype",
            dict(m=128, k=128, n=128, in_dtype_str="FP8", out_dtype_str="bf16"),
            4194304,
            32768 + 32768,
        ),
        # + quantize A (2MK) and B (2KN), scale the result (2MN), one division per scale (M+N)
        ("gemm_fp8_rowwise", dict(m=128, k=128, n=128), 4194304 + 98304 + 256, 65536 + 32768),
        # static: one division per element, no scale to compute
        (
            "gemm_fp8_rowwise_static_scaling",
            dict(m=128, k=128, n=128),
            4194304 + 32768 + 32768,
            65536 + 32768,
        ),
        # the fp32 accumulators written and read back: + 2 * 4 * M*N bytes
        (
            "gemm_fp8_rowwise_w_dequantize",
            dict(m=128, k=128, n=128),
            4194304 + 98304 + 256,
            65536 + 32768 + 131072,
        ),
        # M=64, K=256, N=384: 2 k-blocks scale every output twice (2*2MN); scales: A 64x2, B 2x3
        (
            "gemm_fp8_b128_fp32",
            dict(m=64, k=256, n=384),
            2 * 64 * 256 * 384 + 2 * (64 * 256 + 256 * 384) + 2 * 2 * 64 * 384 + (128 + 6),
            2 * (64 * 256 + 256 * 384) + 2 * 64 * 384,
        ),
        # ragged K=300: 3 k-blocks, the last one 44 wide; A 64x3 and B 3x1 scales
        (
            "gemm_fp8_b128_fp32",
            dict(m=64, k=300, n=100),
            2 * 64 * 300 * 100 + 2 * (64 * 300 + 300 * 100) + 2 * 3 * 64 * 100 + (192 + 3),
            2 * (64 * 300 + 300 * 100) + 2 * 64 * 100,
        ),
        (
            "gemm_fp8_b128_fp32_static_scaling",
            dict(m=64, k=256, n=384),
            2 * 64 * 256 * 384 + (64 * 256 + 256 * 384) + 2 * 2 * 64 * 384,
            2 * (64 * 256 + 256 * 384) + 2 * 64 * 384,
        ),
        # MX: K=64 is 2 blocks of 32; scales A 32x2, B 2x16
        (
            "gemm_mxfp8_b32",
            dict(m=32, k=64, n=16),
            2 * 32 * 64 * 16 + 2 * (32 * 64 + 64 * 16) + 2 * 2 * 32 * 16 + (64 + 32),
            2 * (32 * 64 + 64 * 16) + 2 * 32 * 16,
        ),
        # a copy reads and writes every element once: 2 * 2^20 * 2 bytes in bf16
        ("single_device_hbm_copy", dict(num_elements=1 << 20), 0.0, 4194304),
        # attention, the reference's config shape: B=1, S=4096, 128 query heads over 8 KV heads, d=256.
        # causal: S(S+1)/2 = 8390656 pairs per head, 2*(256+256) FLOPs each; bf16 Q, K, V, O read/written once
        (
            "tokamax_splash_attention",
            dict(
                batch_size=1,
                q_seq_len=4096,
                kv_seq_len=4096,
                q_heads=128,
                kv_heads=8,
                qk_head_dim=256,
                v_head_dim=256,
            ),
            2 * 128 * 8390656 * 512,
            2 * (134217728 + 8388608 + 8388608 + 134217728),
        ),
        # not causal: all 4096^2 pairs; bwd (+ the forward it recomputes) is 3.5x the forward, and reads
        # Q, K, V, dO and writes dQ, dK, dV
        (
            "tokamax_splash_attention",
            dict(
                batch_size=1,
                q_seq_len=4096,
                kv_seq_len=4096,
                q_heads=128,
                kv_heads=8,
                qk_head_dim=256,
                v_head_dim=256,
                causal=False,
                mode="bwd",
            ),
            3.5 * 2 * 128 * 4096 * 4096 * 512,
            2 * (2 * (134217728 + 8388608 + 8388608) + 134217728),
        ),
        # elementwise: (inputs + 1 output) * M*N * bytes per element
        ("inference_add", dict(m=512, n=256, dtype="float8"), 131072, 3 * 131072),
        ("inference_silu_mul", dict(m=512, n=256, dtype="bfloat16"), 5 * 131072, 6 * 131072),
        ("inference_sigmoid", dict(m=512, n=256, dtype="float8_e4m3fn"), 3 * 131072, 2 * 131072),
        # rmsnorm: read X, write Y (4MN in bf16, not the reference's 6MN), fp32 gamma 4N
        ("rmsnorm_fwd", dict(m=512, n=256), 4 * 131072 + 3 * 512, 4 * 131072 + 1024),
        (
            "inference_rmsnorm",
            dict(m=512, n=256, dtype="float8"),
            4 * 131072 + 1536,
            2 * 131072 + 1024,
        ),
        ("rmsnorm_bwd", dict(m=512, n=256), 8 * 131072 + 7 * 512, 6 * 131072 + 1024),
        # swiglu: read X (2MN bytes), write Y of N/2 columns (MN bytes)
        ("swiglu_fwd", dict(m=512, n=256), 5 * 65536, 3 * 131072),
        # read X and dY (N/2 columns), write dX: 5MN bytes; 11 FLOPs per output pair
        ("swiglu_bwd", dict(m=512, n=256), 11 * 65536, 5 * 131072),
        ("add", dict(m=4096, n=16384, dtype="bfloat16"), 67108864, 402653184),
        # read bf16 X, write fp8 values and M fp32 scales; 2 ops per element + 1 division per row
        ("quantization", dict(m=1024, n=256), 524288 + 1024, 786432 + 4096),
        # the transposed op writes N scales, not M (the reference counted 4M)
        ("transpose_quantization", dict(m=1024, n=256), 524288 + 256, 786432 + 1024),
        # fp4 values are half a byte
        (
            "quantization",
            dict(m=1024, n=256, quant_dtype="float4_e2m1fn"),
            524288 + 1024,
            655360 + 4096,
        ),
        ("quantization_static_scaling", dict(m=1024, n=256), 262144, 786432 + 4),
        ("transpose_quantization_static_scaling", dict(m=1024, n=256), 262144, 786432 + 4),
        (
            "torchao_inference",
            dict(m=1024, k=1024, n=1024, recipe="baseline"),
            2147483648,
            4194304 + 2097152,
        ),
        # int4 with group 128: 4 bits + a bf16 scale and zero per 128 weights = 4.25 bits
        (
            "torchao_inference",
            dict(m=1024, k=1024, n=1024, recipe="int4wo-128"),
            2147483648,
            4194304 + 557056,
        ),
        (
            "torchao_inference",
            dict(m=1024, k=1024, n=1024, recipe="int8wo"),
            2147483648,
            4194304 + 1048576,
        ),
        # transformer block (hidden k): 24*m*k^2 + 4*m^2*k
        (
            "torchao_inference",
            dict(m=512, k=256, n=256, model_type="transformer_block"),  # 2 heads of 128
            24 * 512 * 256 * 256 + 4 * 512 * 512 * 256,
            2 * 512 * 256 * 2 + 12 * 256 * 256 * 2,
        ),
    ],
)
def test_models_match_hand_computed_values(op, given, flops, nbytes):
    spec = get_spec(op)
    p = params(op, **given)
    assert spec.flops(p) == flops
    assert spec.bytes(p) == nbytes


def test_roofline_derivation():
    h100 = Peaks("h100", bf16_tflops=989.4, hbm_gbps=3350)
    d, roof = derive(2e12, 1e9, 0.004, h100, "bf16")
    assert d.tflop_per_s == pytest.approx(500)
    assert d.gb_per_s == pytest.approx(250)
    assert d.intensity_flop_per_byte == 2000
    assert roof.roofline_bound_by == "compute"
    assert roof.roofline_bound_s == pytest.approx(2e12 / 989.4e12)
    assert roof.roofline_attained_pct == pytest.approx(100 * (2e12 / 989.4e12) / 0.004)
    assert roof.compute_of_peak_pct == pytest.approx(100 * 500 / 989.4)


def test_a_warm_working_set_about_the_l2s_size_is_at_its_edge():
    """add 2048x4096 bf16 moves 3 x 16 MiB: 0.96 of an H100's 50 MiB L2; only warm rows are at its
    edge (a cold one is flushed each iteration), and an unknown L2 leaves the ratio blank."""
    from accelbench.results.roofline import at_l2_edge
    from accelbench.specs import lookup

    assert lookup("NVIDIA H100 80GB HBM3").l2_mib == 50
    add = get_spec("add").bytes(params("add", m=2048, n=4096, dtype="bfloat16"))
    assert add == 3 * 16 * 2**20
    _, roof = derive(0.0, add, 17e-6, lookup("NVIDIA H100 80GB HBM3"), "bf16")
    assert roof.working_set_over_l2_ratio == pytest.approx(0.96)
    assert at_l2_edge("warm", roof.working_set_over_l2_ratio)
    assert not at_l2_edge("cold", roof.working_set_over_l2_ratio)
    assert not at_l2_edge("warm", 4 * roof.working_set_over_l2_ratio)  # 192 MiB: from HBM anyway
    assert derive(0.0, add, 17e-6, Peaks("unknown"), "bf16")[1].working_set_over_l2_ratio is None


def test_unknown_peaks_stay_blank():
    d, roof = derive(2e12, 1e9, 0.004, Peaks("unknown"), "bf16")
    assert d.tflop_per_s == pytest.approx(500)
    assert (
        roof.peak_tflop_per_s is None
        and roof.compute_of_peak_pct is None
        and roof.roofline_bound_s is None
    )
