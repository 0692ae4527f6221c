"""NVIDIA A100 datasheet (SXM4 80GB): 312 TFLOP/s bf16/fp16, 624 int8, 19.5 fp32 (non-tensor),
2039 GB/s; 40 MiB L2 (the A100 whitepaper; cudaDeviceProp.l2CacheSize 41943040)."""

from accelbench.specs import Chip, Peaks, register_chip

A100 = Peaks(
    "a100-80gb",
    bf16_tflops=312,
    fp16_tflops=312,
    int8_tflops=624,
    fp32_tflops=19.5,
    hbm_gbps=2039,
    l2_mib=40,
)
register_chip(Chip(r"A100.*80GB", A100))
