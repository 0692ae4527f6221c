"""TPU v6e per chip (cloud.google.com/tpu/docs/v6e); TPUMS's specs/v6e.py (@1678bb80) per device."""

from accelbench.specs import Chip, DeviceSpec, Peaks, register_chip

TPUMS_TFLOPS = dict(
    bfloat16=918.0,
    float32=459.0,
    float8_e4m3fn=918.0,
    float8_e5m2=918.0,
    int8=1836.0,
    int4=3672.0,
    float4_e2m1fn=None,
)
TPUMS_V6E = DeviceSpec(1, TPUMS_TFLOPS, 1638.4)
V6E = Peaks("tpu-v6e", bf16_tflops=918, int8_tflops=1836, hbm_gbps=1640)
register_chip(Chip(r"^TPU v6( lite|e)", V6E, TPUMS_V6E, ("v6e", "tpu v6e", "tpu v6 lite")))
