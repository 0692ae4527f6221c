"""TPU v5e and v5p, per chip (cloud.google.com/tpu/docs/v5e, /v5p)."""

from accelbench.specs import Chip, Peaks, register_chip

register_chip(
    Chip(r"^TPU v5( lite|e)", Peaks("tpu-v5e", bf16_tflops=197, int8_tflops=394, hbm_gbps=819))
)
register_chip(
    Chip(r"^TPU v5(p)?$", Peaks("tpu-v5p", bf16_tflops=459, int8_tflops=918, hbm_gbps=2765))
)
