"""NVIDIA H100 datasheet (SXM5): 989.4 TFLOP/s bf16/fp16, 1978.9 fp8/int8, 66.9 fp32, 3350 GB/s
(dense); 50 MiB L2 (the H100 whitepaper; PyTorch's L2_cache_size 52428800 on the H100 used here).
The H200 (SXM) datasheet: the H100's math rates and die, 4800 GB/s HBM3e."""

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
