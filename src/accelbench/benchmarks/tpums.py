"""TPUMS's names, each declared on the jax-bench benchmark that runs it (renamed, defaults and fields
moved, fields added that do nothing here yet), in TPUMS's order: production, experimental, earlier
names. Source of every fact: ../shared/reference/UPSTREAM_TPUMS.md sections 3 and 10."""

from __future__ import annotations

from functools import partial

from accelbench.benchmarks.base import Tier, Tpums, register_tpums
from accelbench.catalogue import Param

INERT_FIELDS = (
    Param("xla_dump_dir", "str", None, doc="where upstream reads its replica groups: unused"),
    Param("device_placement", "str", None, doc="e.g. id_sorted: recorded"),
)


# TPUMS's gemm defaults to bf16 (jax-bench's: fp8); its configs have no dtype but in and out
_gemm = partial(
    Tpums,
    v2="gemm_generalized",
    defaults={"in_dtype": "bfloat16"},
    roofline="compute",
    dropped=("dtype",),
    rate="tflops",
    config="GemmParams",
    size_column="total_flops",
)
_hbm = partial(
    Tpums,
    v2="hbm_bandwidth",
    renamed={"num_elements": "size"},
    aliases={"size": "num_elements"},
    roofline="memory_hbm",
    config="HBMBandwidthParams",
    size_column="total_bytes_mib",
)


def _collective(name: str, tier: Tier = "production", config: str = "") -> Tpums:
    return Tpums(name, name, tier, inert=INERT_FIELDS, size_column="shard_size_mib", config=config)


def _transfer(name: str) -> Tpums:
    """Host-device copies: GB/s per device only (TPUMS derives no per-chip figure for them)."""
    return Tpums(name, name, chip_bandwidth=False, config="HostDeviceParams")


for _entry in (
    _gemm("gemm"),
    _hbm("hbm"),
    _transfer("host_to_device"),
    _transfer("device_to_host"),
    Tpums(
        "device_to_device",
        "device_to_device",
        chip_bandwidth=False,
        config="DeviceToDeviceParams",
        enums={"direction": ("uni", "bi")},
        device_matrix=True,
    ),
    _collective("all_gather", config="CollectivesParams"),
    _collective("all_reduce", config="AllReduceParams"),
    _collective("all_to_all", config="CollectivesParams"),
    _collective("reduce_scatter", "experimental"),
    _gemm("gemm_throttling", tier="experimental", soak=True, config="GemmThrottlingParams"),
    _collective("ppermute", "experimental"),
    Tpums("ppermute_uni", "ppermute", "experimental", defaults={"direction": "uni"}),
    Tpums("ppermute_bidi", "ppermute", "experimental", defaults={"direction": "bidi"}),
    Tpums("attention_flashed", "attention_flashed", "experimental", rate="tflops"),
    Tpums("transformer_layer_moe", "transformer_layer_moe", "experimental", rate="tflops"),
    *(
        Tpums(name, name, "experimental")
        for name in ("rmsnorm", "swiglu", "sigmoid", "simple_add", "quantization", "rope")
    ),
    # the earlier names, still used by shipped files
    _gemm("gemm_generalized", tier="alias"),
    _hbm("hbm_bandwidth", tier="alias"),
):
    register_tpums(_entry)
