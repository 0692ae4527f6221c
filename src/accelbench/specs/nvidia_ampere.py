"""NVIDIA A100 SXM4 80GB datasheet (fp32: non-tensor); L2: its whitepaper, l2CacheSize 41943040."""

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
