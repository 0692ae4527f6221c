"""The recipes torchao's own benchmarks lead with today (torchao 0.18), each declared once as a `Recipe`,
and the model-level names of torchao's perf script as aliases of them. Each maker states what it needs
before torchao is asked; an emulated path is a recipe of its own (`mxfp8-emulated`), so a row says by
its name that it was emulated.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from accelbench.errors import unsupported
from accelbench.ops.torchao import Alias, Recipe, register_alias, register_recipe
from accelbench.platform.frameworks import torch
from torch_backend.recipes import FP8_CORES, MSLK, Target, needs_package, needs_sm, torchao_version

BLACKWELL = ((10, 0), "Blackwell-class MX/NVFP4 tensor cores")
CALIBRATED_ON = ("linear",)  # model types whose linear layers see the model's input as it is drawn
BLOCK = 128  # blockwise float8: activations in 1x128 blocks, weights in 128x128


def kernel_preference(name: str) -> Any:
    from torchao.quantization.quantize_.common import KernelPreference

    return KernelPreference(name)


def _mx(element: str, emulated: bool) -> Any:
    """MX dynamic quantization of activations and weights, one 8-bit scale per 32 elements."""

    def make(tq: Any, match: re.Match[str], target: Target) -> Any:
        from torchao.prototype.mx_formats import MXDynamicActivationMXWeightConfig

        if not emulated:
            needs_sm(target, *BLACKWELL)
        dtype = getattr(torch, element)
        return MXDynamicActivationMXWeightConfig(
            activation_dtype=dtype,
            weight_dtype=dtype,
            kernel_preference=kernel_preference("emulated" if emulated else "auto"),
        )

    return make


def _nvfp4(tq: Any, match: re.Match[str], target: Target) -> Any:
    from torchao.prototype.mx_formats import NVFP4DynamicActivationNVFP4WeightConfig

    needs_sm(target, *BLACKWELL)
    return NVFP4DynamicActivationNVFP4WeightConfig()


def _nvfp4wo(tq: Any, match: re.Match[str], target: Target) -> Any:
    from torchao.prototype.mx_formats import NVFP4WeightOnlyConfig

    return NVFP4WeightOnlyConfig()


def _float8_block(kernel: str) -> Any:
    def make(tq: Any, match: re.Match[str], target: Target) -> Any:
        from torchao.quantization.granularity import PerBlock

        needs_sm(target, *FP8_CORES)
        if target.k % BLOCK or target.n % BLOCK:
            raise unsupported(
                f"{target.recipe} quantizes in {BLOCK}-wide blocks: k={target.k} and n={target.n} "
                f"must be multiples of {BLOCK}"
            )

        def config() -> Any:
            return tq.Float8DynamicActivationFloat8WeightConfig(
                granularity=[PerBlock([1, BLOCK]), PerBlock([BLOCK, BLOCK])],
                kernel_preference=kernel_preference(kernel),
            )

        # a kernel preference torchao may not implement for this matmul: asked first
        return config() if kernel == "auto" else _probed(tq, config, target)

    return make


def _probed(tq: Any, config: Callable[[], Any], target: Target) -> Any:
    """The config, tried on one 128x128 linear under inference mode, as a case calls its model: a kernel
    choice torchao does not implement is `unsupported` in torchao's words, before any model is built."""
    probe = torch.nn.Linear(BLOCK, BLOCK, bias=False, device=target.device, dtype=target.dtype)
    try:
        made = config()
        tq.quantize_(probe, made)
        with torch.inference_mode():
            probe(torch.ones(BLOCK, BLOCK, device=target.device, dtype=target.dtype))
        return made
    except Exception as error:
        said = str(error).splitlines()[0][:160] if str(error) else ""
        raise unsupported(
            f"torchao {torchao_version()} does not run {target.recipe} here: "
            f"{type(error).__name__}: {said}"
        ) from None


def _int4_fp8(tq: Any, match: re.Match[str], target: Target) -> Any:
    needs_sm(target, (9, 0), "fp8 x int4 kernels (sm90)")
    needs_package(target, "mslk", MSLK)
    return tq.Float8DynamicActivationInt4WeightConfig(
        int4_packing_format=match.group(1) or "preshuffled"
    )


def _calibrated_scale(target: Target, largest: float) -> Any:
    """A static activation scale, calibrated as a user would: the largest magnitude of a calibration
    batch drawn as the model's inputs are (standard normal), over the format's largest value."""
    if target.model_type not in CALIBRATED_ON:
        raise unsupported(
            f"{target.recipe}'s one activation scale is calibrated on the model's input; the inner "
            f"activations of a {target.model_type} differ (run it on model_type: linear)"
        )
    generator = torch.Generator(device=target.device).manual_seed(0)
    batch = torch.randn(
        1024, target.k, generator=generator, device=target.device, dtype=target.dtype
    )
    return (batch.abs().amax().float() / largest).reshape(1, 1)


def _float8_static(tq: Any, match: re.Match[str], target: Target) -> Any:
    if target.device.type == "cuda":
        needs_sm(target, *FP8_CORES)
    return tq.Float8StaticActivationFloat8WeightConfig(
        act_quant_scale=_calibrated_scale(target, torch.finfo(torch.float8_e4m3fn).max),
        granularity=tq.PerTensor(),
    )


def _int8_static(tq: Any, match: re.Match[str], target: Target) -> Any:
    return tq.Int8StaticActivationInt8WeightConfig(
        act_quant_scale=_calibrated_scale(target, 127.0), granularity=tq.PerTensor()
    )


def _mx_pair(name: str, element: str, bits: int, peak: str) -> tuple[Recipe, Recipe]:
    """An MX format's recipe on Blackwell-class tensor cores, and its emulated twin (any device)."""
    config = f"MXDynamicActivationMXWeightConfig({element}"
    native = Recipe(
        name,
        bits=bits,
        group=32,
        scale_bits=8,
        peak=peak,
        make=_mx(element, emulated=False),
        config=f"{config})",
        needs="CUDA SM 10.0+",
        doc=f"{peak} activations and weights, an 8-bit scale per 32 elements",
    )
    return native, dataclasses.replace(
        native,
        name=f"{name}-emulated",
        peak=None,
        make=_mx(element, emulated=True),
        config=f"{config}, kernel_preference=EMULATED)",
        needs="any device",
        doc=f"{name}'s numerics in high precision: its accuracy, not its speed",
    )


for _recipe in (
    *_mx_pair("mxfp8", "float8_e4m3fn", 8, "fp8"),
    *_mx_pair("mxfp4", "float4_e2m1fn_x2", 4, "fp4"),
    Recipe(
        "nvfp4",
        bits=4,
        group=16,
        scale_bits=8,
        peak="fp4",
        make=_nvfp4,
        config="NVFP4DynamicActivationNVFP4WeightConfig()",
        needs="CUDA SM 10.0+",
        doc="fp4 activations and weights, an fp8 scale per 16 elements and one per tensor",
    ),
    Recipe(
        "nvfp4wo",
        bits=4,
        group=16,
        scale_bits=8,
        make=_nvfp4wo,
        config="NVFP4WeightOnlyConfig()",
        needs="any device",
        doc="NVFP4 weights, high-precision activations",
    ),
    Recipe(
        "float8dq-block",
        peak="fp8",
        group=BLOCK * BLOCK,
        make=_float8_block("auto"),
        config="Float8DynamicActivationFloat8WeightConfig([PerBlock([1,128]), PerBlock([128,128])])",
        needs="CUDA SM 8.9+; k, n multiples of 128",
        doc="DeepSeek-V3-style blockwise fp8, torchao's kernel choice",
    ),
    Recipe(
        "float8dq-block-triton",
        peak="fp8",
        group=BLOCK * BLOCK,
        make=_float8_block("triton"),
        config="the same, kernel_preference=TRITON",
        needs="CUDA SM 8.9+; k, n multiples of 128",
        doc="blockwise fp8 on torchao's Triton kernels",
    ),
    Recipe(
        "float8dq-block-torch",
        peak="fp8",
        group=BLOCK * BLOCK,
        make=_float8_block("torch"),
        config="the same, kernel_preference=TORCH",
        needs="CUDA SM 8.9+; k, n multiples of 128",
        doc="blockwise fp8 on PyTorch's own scaled matmul",
    ),
    Recipe(
        "int4wo-fp8a",
        r"int4wo-fp8a(?:-(plain|preshuffled))?",
        ("int4wo-fp8a", "int4wo-fp8a-plain"),
        bits=4,
        group=128,
        peak="fp8",
        make=_int4_fp8,
        config="Float8DynamicActivationInt4WeightConfig(int4_packing_format)",
        needs="CUDA SM 9.0+, the mslk package",
        doc="int4 weights (group 128), fp8 row-wise activations; preshuffled or plain packing",
    ),
    Recipe(
        "float8-static",
        peak="fp8",
        make=_float8_static,
        config="Float8StaticActivationFloat8WeightConfig(act_quant_scale, PerTensor())",
        needs="CUDA SM 8.9+ (CPU emulates); model_type linear",
        doc="fp8 with one activation scale calibrated beforehand",
    ),
    Recipe(
        "int8-static",
        peak="int8",
        make=_int8_static,
        config="Int8StaticActivationInt8WeightConfig(act_quant_scale, PerTensor())",
        needs="model_type linear",
        doc="int8 with one activation scale calibrated beforehand",
    ),
):
    register_recipe(_recipe)

for _alias in (
    Alias("float8_rowwise", "float8dq-row"),
    Alias("int8_rowwise", "int8dq"),
    Alias("int8_rowwise_weight_only", "int8wo"),
    Alias("int4_groupwise_weight_float8_rowwise_activation", "int4wo-fp8a"),
    Alias("int4_groupwise_hqq_weight_only", "int4wo-128-hqq", "group size 128, torchao's default"),
):
    register_alias(_alias)
