"""Per-chip peak rates (dense, no sparsity) and last-level cache. Unknown figures stay None and their
columns blank."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Peaks:
    chip: str
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tflops: float | None = None
    fp32_tflops: float | None = None
    hbm_gbps: float | None = None
    l2_mib: float | None = None  # the device's L2, beside which a warm-cache time is read

    def tflops(self, family: str) -> float | None:
        return getattr(self, f"{family}_tflops", None)


# (pattern on the framework's device-kind string, peaks). First match wins.
_TABLE: list[tuple[str, Peaks]] = [
    # cloud.google.com/tpu/docs/v4: 275 TFLOP/s bf16 and int8 per chip, 1200 GB/s HBM
    (r"^TPU v4", Peaks("tpu-v4", bf16_tflops=275, int8_tflops=275, hbm_gbps=1200)),
    # cloud.google.com/tpu/docs/v5e: 197 TFLOP/s bf16, 394 TOP/s int8, 819 GB/s HBM
    (r"^TPU v5( lite|e)", Peaks("tpu-v5e", bf16_tflops=197, int8_tflops=394, hbm_gbps=819)),
    # cloud.google.com/tpu/docs/v5p: 459 TFLOP/s bf16, 918 TOP/s int8, 2765 GB/s HBM
    (r"^TPU v5(p)?$", Peaks("tpu-v5p", bf16_tflops=459, int8_tflops=918, hbm_gbps=2765)),
    # cloud.google.com/tpu/docs/v6e: 918 TFLOP/s bf16, 1836 TOP/s int8, 1640 GB/s HBM
    (r"^TPU v6( lite|e)", Peaks("tpu-v6e", bf16_tflops=918, int8_tflops=1836, hbm_gbps=1640)),
    # cloud.google.com/tpu/docs/tpu7x and the Ironwood launch post (2025-04): 4614 TFLOP/s fp8,
    # 2307 TFLOP/s bf16, 7370 GB/s HBM per chip
    (r"^TPU ?7x|Ironwood", Peaks("tpu7x", bf16_tflops=2307, fp8_tflops=4614, hbm_gbps=7370)),
    # NVIDIA A100 datasheet (SXM4 80GB): 312 bf16/fp16, 624 int8, 19.5 fp32 (non-tensor), 2039 GB/s;
    # 40 MiB L2 (the A100 whitepaper; cudaDeviceProp.l2CacheSize 41943040)
    (
        r"A100.*80GB",
        Peaks(
            "a100-80gb",
            bf16_tflops=312,
            fp16_tflops=312,
            int8_tflops=624,
            fp32_tflops=19.5,
            hbm_gbps=2039,
            l2_mib=40,
        ),
    ),
    # NVIDIA H100 datasheet (SXM5): 989.4 bf16/fp16, 1978.9 fp8/int8, 66.9 fp32, 3350 GB/s (dense);
    # 50 MiB L2 (the H100 whitepaper; PyTorch's L2_cache_size 52428800 on the H100 used here)
    (
        r"H100(?!.*(PCIe|NVL))",
        Peaks(
            "h100-sxm",
            bf16_tflops=989.4,
            fp16_tflops=989.4,
            fp8_tflops=1978.9,
            int8_tflops=1978.9,
            fp32_tflops=66.9,
            hbm_gbps=3350,
            l2_mib=50,
        ),
    ),
    # NVIDIA H200 datasheet (SXM): the H100's math rates and die (50 MiB L2), 4800 GB/s HBM3e
    (
        r"H200(?!.*NVL)",
        Peaks(
            "h200-sxm",
            bf16_tflops=989.4,
            fp16_tflops=989.4,
            fp8_tflops=1978.9,
            int8_tflops=1978.9,
            fp32_tflops=66.9,
            hbm_gbps=4800,
            l2_mib=50,
        ),
    ),
    # NVIDIA HGX B200 datasheet: 2250 bf16/fp16, 4500 fp8/int8 dense (half the sparse figures), 8000 GB/s
    (
        r"B200",
        Peaks(
            "b200",
            bf16_tflops=2250,
            fp16_tflops=2250,
            fp8_tflops=4500,
            int8_tflops=4500,
            hbm_gbps=8000,
        ),
    ),
]


def lookup(device_kind: str) -> Peaks:
    """Peaks for a device-kind string; an unknown device gets an all-blank entry."""
    for pattern, peaks in _TABLE:
        if re.search(pattern, device_kind or ""):
            return peaks
    return Peaks(chip="unknown")


def with_overrides(peaks: Peaks, overrides: dict[str, Any] | None) -> Peaks:
    """Apply user-provided peaks (YAML `peaks:`), which take precedence over the table."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if not given:
        return peaks
    chip = peaks.chip if peaks.chip != "unknown" else "user"
    return replace(peaks, chip=f"{chip}+overrides", **given)
