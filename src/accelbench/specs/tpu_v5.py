"""TPU v5e and v5p (cloud.google.com/tpu/docs/v5e, /v5p): v5e 197 TFLOP/s bf16, 394 TOP/s int8,
819 GB/s HBM; v5p 459 TFLOP/s bf16, 918 TOP/s int8, 2765 GB/s HBM (per chip)."""

from accelbench.specs import Chip, Peaks, register_chip

register_chip(
    Chip(r"^TPU v5( lite|e)", Peaks("tpu-v5e", bf16_tflops=197, int8_tflops=394, hbm_gbps=819))
)
register_chip(
    Chip(r"^TPU v5(p)?$", Peaks("tpu-v5p", bf16_tflops=459, int8_tflops=918, hbm_gbps=2765))
)
