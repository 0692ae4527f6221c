"""NVIDIA HGX B200 datasheet, dense (half its sparse figures)."""

from accelbench.specs import Chip, Peaks, register_chip

B200 = Peaks(
    "b200", bf16_tflops=2250, fp16_tflops=2250, fp8_tflops=4500, int8_tflops=4500, hbm_gbps=8000
)
register_chip(Chip(r"B200", B200))
