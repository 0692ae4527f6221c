"""NVIDIA H100 SXM5 datasheet, dense; L2: its whitepaper (PyTorch's L2_cache_size 52428800 here).
The H200 (SXM) datasheet: the H100's math rates and die, HBM3e."""

from dataclasses import replace

from accelbench.specs import Chip, Peaks, register_chip

H100 = Peaks(
    "h100-sxm",
    bf16_tflops=989.4,
    fp16_tflops=989.4,
    fp8_tflops=1978.9,
    int8_tflops=1978.9,
    fp32_tflops=66.9,
    hbm_gbps=3350,
    l2_mib=50,
)
register_chip(Chip(r"H100(?!.*(PCIe|NVL))", H100))
register_chip(Chip(r"H200(?!.*NVL)", replace(H100, chip="h200-sxm", hbm_gbps=4800)))
