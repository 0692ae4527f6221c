"""TPU7x, Ironwood, per chip (cloud.google.com/tpu/docs/tpu7x, the launch post 2025-04); TPUMS's
specs/tpu7x.py (@1678bb80) per device (two TensorCores a chip; int8 emulated on bf16); jax-bench's
`ironwood` preset (and `gfc`, the same): a per-chip dtype table and an HBM curve over transfer sizes."""

from accelbench.specs import Chip, DeviceSpec, HardwareStats, Peaks, preset_stats, register_chip

TPUMS_TFLOPS = dict(
    bfloat16=1153.5,
    float32=576.75,
    float8_e4m3fn=2307.0,
    float8_e5m2=2307.0,
    int8=1153.5,
    float4_e2m1fn=None,
)
TPUMS_TPU7X = DeviceSpec(2, TPUMS_TFLOPS, 7380.0)
IRONWOOD = HardwareStats(
    tflops=dict(
        bfloat16=2307.0, float32=1153.5, float8_e4m3fn=4614.0, float8_e5m2=4614.0, int8=4614.0
    ),
    hbm_curve=((1024, 100.0), (1048576, 2000.0), (104857600, 5000.0), (1073741824, 7380.0)),
    ici={"peak_bw_gbps": 1200.0, "bidirectional": True},
    chips=("TPU7x", "TPU v7"),
)
TPU7X = Peaks("tpu7x", bf16_tflops=2307, fp8_tflops=4614, hbm_gbps=7370)
SYSTEMS = {name: preset_stats(name, IRONWOOD) for name in ("ironwood", "gfc")}  # jax-bench presets
register_chip(Chip(r"^TPU ?7x|Ironwood", TPU7X, TPUMS_TPU7X, ("tpu7x", "tpu v7x"), SYSTEMS))
