"""TPU v4 (cloud.google.com/tpu/docs/v4): 275 TFLOP/s bf16 and int8 per chip, 1200 GB/s HBM."""

from accelbench.specs import Chip, Peaks, register_chip

register_chip(Chip(r"^TPU v4", Peaks("tpu-v4", bf16_tflops=275, int8_tflops=275, hbm_gbps=1200)))
