import pytest

from accelbench.specs import lookup, with_overrides


@pytest.mark.parametrize(
    "kind, chip, bf16, hbm",
    [
        ("TPU v4", "tpu-v4", 275, 1200),
        ("TPU v5 lite", "tpu-v5e", 197, 819),
        ("TPU v5", "tpu-v5p", 459, 2765),
        ("TPU v5p", "tpu-v5p", 459, 2765),
        ("TPU v6 lite", "tpu-v6e", 918, 1640),
        ("TPU7x", "tpu7x", 2307, 7370),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb", 312, 2039),
        ("NVIDIA H100 80GB HBM3", "h100-sxm", 989.4, 3350),
        ("NVIDIA H200", "h200-sxm", 989.4, 4800),
        ("NVIDIA B200", "b200", 2250, 8000),
    ],
)
def test_known_devices(kind, chip, bf16, hbm):
    peaks = lookup(kind)
    assert (peaks.chip, peaks.bf16_tflops, peaks.hbm_gbps) == (chip, bf16, hbm)


@pytest.mark.parametrize(
    "kind", ["cpu", "NVIDIA H100 PCIe", "NVIDIA GeForce RTX 4090", "", "TPU v3"]
)
def test_unknown_devices_have_no_peaks(kind):
    peaks = lookup(kind)
    assert peaks.chip == "unknown" and peaks.bf16_tflops is None and peaks.hbm_gbps is None


def test_overrides_win_and_fill_blanks():
    peaks = with_overrides(
        lookup("cpu"), {"fp32_tflops": 2.0, "hbm_gbps": 50.0, "bf16_tflops": None}
    )
    assert (peaks.fp32_tflops, peaks.hbm_gbps, peaks.bf16_tflops, peaks.chip) == (
        2.0,
        50.0,
        None,
        "user+overrides",
    )
    assert with_overrides(lookup("NVIDIA H200"), {"hbm_gbps": 4190}).hbm_gbps == 4190
