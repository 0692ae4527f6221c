"""The torchao suite's recipes, each declared once (`register_recipe(Recipe(...))`), and its sparsity
configs. Where the installed torchao no longer has a recipe's config, layout or kernel, or this device
cannot run it, the maker raises `unsupported` with the reason: a row never silently measures something
else. PyTorch is reached through `platform.frameworks`: declaring the recipes imports nothing heavy.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from accelbench.errors import unsupported
from accelbench.ops.torchao import (
    BASELINE,
    GROUP_SIZES,
    Recipe,
    recipe_of,
    register_recipe,
    sparsity_kind,
)
from accelbench.platform.frameworks import torch
from torch_backend.devices import capability


@dataclass(frozen=True)
class Target:
    """What a recipe is being applied to: the device and the model's dimensions and precision."""

    recipe: str
    device: torch.device
    k: int
    n: int
    dtype: torch.dtype
    model_type: str = "linear"


def torchao_version() -> str:
    import torchao

    return str(torchao.__version__)


FP8_CORES = ((8, 9), "fp8 tensor cores")


def needs_sm(target: Target, sm: tuple[int, int], what: str) -> None:
    if (has := capability(target.device)) < sm:
        where = f"cuda SM {has[0]}.{has[1]}" if target.device.type == "cuda" else target.device.type
        raise unsupported(
            f"{target.recipe} needs a CUDA GPU with {what} (SM {sm[0]}.{sm[1]}+), this is {where}"
        )


@dataclass(frozen=True)
class Removal:
    """What torchao removed, by which pull request (and when), and what took its place."""

    what: str
    removed_by: str = ""  # "pytorch/ao#3520 (merged 2025-12)"
    replaced_by: str = "nothing in torchao"

    def said(self) -> str:
        where = f"; removed by {self.removed_by}" if self.removed_by else ""
        return f"torchao {torchao_version()} no longer has {self.what}{where}; replaced by {self.replaced_by}"

    def refuse(self, tq: Any, match: re.Match[str], target: Target) -> Any:  # a removed one's maker
        raise unsupported(self.said())


def needs_package(target: Target, module: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise unsupported(f"{target.recipe} needs the {module} package ({install}), not installed")


def _int8dq_prefill(tq: Any, match: re.Match[str], target: Target) -> Any:
    if "weight_only_decode" not in {
        f.name for f in fields(tq.Int8DynamicActivationInt8WeightConfig)
    }:
        raise unsupported(
            f"torchao {torchao_version()}'s Int8DynamicActivationInt8WeightConfig has no weight_only_decode"
        )
    return tq.Int8DynamicActivationInt8WeightConfig(weight_only_decode=True)


def _intx(tq: Any, match: re.Match[str], target: Target) -> Any:
    """int8 dynamic activation, 1-8-bit weight in torchao's packed CPU (KleidiAI/lowbit) kernels."""
    from torchao.quantization.granularity import PerAxis, PerGroup
    from torchao.quantization.quant_primitives import MappingType

    bits, group, asym = int(match.group(1)), int(match.group(2)), match.group(3)
    if target.dtype != torch.float32:
        raise unsupported(f"{target.recipe} needs high_precision_dtype torch.float32")
    if not 1 <= bits <= 8:
        raise unsupported(f"{target.recipe}: weight bits must be 1..8, got {bits}")
    return tq.Int8DynamicActivationIntxWeightConfig(
        weight_dtype=getattr(torch, f"int{bits}"),
        weight_granularity=PerGroup(group) if group > 0 else PerAxis(0),
        weight_mapping_type=MappingType.ASYMMETRIC if asym else MappingType.SYMMETRIC,
        intx_packing_format="opaque_torchao_auto",
    )


def _float8wo(tq: Any, match: re.Match[str], target: Target) -> Any:
    needs_sm(target, *FP8_CORES)
    return tq.Float8WeightOnlyConfig()


def _float8dq(granularity: str) -> Callable[..., Any]:
    def make(tq: Any, match: re.Match[str], target: Target) -> Any:
        needs_sm(target, *FP8_CORES)
        return tq.Float8DynamicActivationFloat8WeightConfig(granularity=getattr(tq, granularity)())

    return make


MSLK = "pip install mslk: torchao's int4 and fp8 x int4 CUDA kernels"


def _int4(tq: Any, match: re.Match[str], target: Target) -> Any:
    """int4 weight-only in one of torchao's packings (tile_packed_to_4d, the tinygemm layout, unless
    the name says another: plain and preshuffled run mslk's kernels)."""
    group, packing = int(match.group(1)), match.group(3) or "tile_packed_to_4d"
    if target.device.type != "cuda":
        raise unsupported(
            f"torchao {torchao_version()} has no int4 weight-only packing for {target.device.type} "
            f"({packing} needs CUDA)"
        )
    if packing in ("plain", "preshuffled"):
        needs_package(target, "mslk", MSLK)
    if target.k % group:
        raise unsupported(f"in features k={target.k} are not divisible by group size {group}")
    return tq.Int4WeightOnlyConfig(
        group_size=group,
        int4_packing_format=packing,
        int4_choose_qparams_algorithm="hqq" if match.group(2) else "tinygemm",
    )


def _gemlite(tq: Any, match: re.Match[str], target: Target) -> Any:
    """gemlite's bit-packed weights on its Triton kernels: torchao 0.17+'s prototype UIntxWeightOnlyConfig,
    or an earlier torchao's GemliteUIntXWeightOnlyConfig (deleted by pytorch/ao#4144, merged 2026-03)."""
    needs_package(target, "gemlite", "pip install gemlite")
    if target.device.type != "cuda" or target.dtype not in (torch.float16, torch.bfloat16):
        raise unsupported(
            f"{target.recipe} runs gemlite's Triton kernels on float16 or bfloat16 weights on CUDA; "
            f"this is {target.dtype} on {target.device.type}"
        )
    bits, group = int(match.group(1)), int(match.group(2))
    size = group if bits == 4 else None  # 8-bit weights are per channel
    try:
        from torchao.prototype.quantization.quant_api import UIntxWeightOnlyConfig
    except ImportError:
        return tq.GemliteUIntXWeightOnlyConfig(group_size=size, bit_width=bits)
    return UIntxWeightOnlyConfig(group_size=size, bit_width=bits)


FP6 = Removal(
    "FPx weight-only (FPXWeightOnlyConfig, its fp6_llm kernels)",
    "pytorch/ao#3520 (merged 2025-12; absent from 0.16 on)",
)


def _fp6(tq: Any, match: re.Match[str], target: Target) -> Any:
    config = getattr(tq, "FPXWeightOnlyConfig", None)
    if config is None:
        raise unsupported(FP6.said())
    return config(3, 2)


def _uintx(tq: Any, match: re.Match[str], target: Target) -> Any:
    """Unsigned b-bit weights with a zero point are asymmetric intx weights in torchao's current API."""
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quant_primitives import MappingType

    bits, group = int(match.group(1)), int(match.group(2))
    if match.group(3):
        raise unsupported(
            f"torchao {torchao_version()} has no HQQ with zero points for intx weights (only hqq_scale_only)"
        )
    if not 1 <= bits <= 8:
        raise unsupported(f"{target.recipe}: weight bits must be 1..8, got {bits}")
    if target.k % group:
        raise unsupported(f"in features k={target.k} are not divisible by group size {group}")
    return tq.IntxWeightOnlyConfig(
        weight_dtype=getattr(torch, f"int{bits}"),
        granularity=PerGroup(group),
        mapping_type=MappingType.ASYMMETRIC,
    )


MARLIN = "Marlin layouts (int4 weight-only in the 2:4 MarlinSparseLayout)"
MARLIN_QQQ_GONE = Removal(
    "Marlin QQQ (MarlinQQQLayout, its kernel)",
    "pytorch/ao#3612 (merged 2026-01; absent from 0.16 on)",
)


def _plain_2_4(tq: Any, target: Target) -> Any:
    from torchao.sparsity.sparse_api import SemiSparseWeightConfig

    needs_sm(dataclasses.replace(target, recipe="2:4 sparsity"), (8, 0), "2:4 sparse tensor cores")
    return SemiSparseWeightConfig()


def _float8_row_2_4(tq: Any, target: Target) -> Any:
    from torchao.quantization.quantize_.workflows.float8.float8_packing_format import (
        Float8PackingFormat,
    )

    with_2_4 = dataclasses.replace(target, recipe="float8dq-row with 2:4 sparsity")
    needs_sm(with_2_4, (9, 0), "CUTLASS fp8 2:4 kernels (sm90a)")
    return tq.Float8DynamicActivationFloat8WeightConfig(
        granularity=tq.PerRow(), packing_format=Float8PackingFormat.SPARSE_2D_DATA_2D_METADATA
    )


def _no_2_4(why: str) -> Callable[[Any, Target], Any]:
    def refuse(tq: Any, target: Target) -> Any:
        raise unsupported(f"torchao {torchao_version()}{why}")

    return refuse


ROCM_ONLY_2_4 = _no_2_4(
    "'s per-tensor fp8 2:4 layout (sparse_1d_data_1d_metadata) runs on hipSPARSELt only (ROCm); "
    "use float8dq-row for CUDA"
)
INT8_NO_2_4 = _no_2_4(
    "'s Int8DynamicActivationInt8WeightConfig has no 2:4 layout: SemiSparseLayout was removed by "
    "pytorch/ao#4148 (merged 2026-03, absent from 0.17 on); replaced by float8dq-row with 2:4 "
    "(Float8DynamicActivationFloat8WeightConfig, packing_format SPARSE_2D_DATA_2D_METADATA)"
)


FLOAT8DQ = Recipe(
    "float8dq",
    config="Float8DynamicActivationFloat8WeightConfig(PerTensor())",
    needs="CUDA SM 8.9+",
    doc="fp8 weights and activations, one scale per tensor",
    peak="fp8",
    make=_float8dq("PerTensor"),
    make_2_4=ROCM_ONLY_2_4,
)
MARLIN_RECIPE = Recipe(
    "marlin",
    config="none: removed",
    needs="-",
    doc="int4 weights in the 2:4 Marlin layout (removed)",
    bits=4,
    make=Removal(MARLIN, replaced_by="int4wo (Int4WeightOnlyConfig) without sparsity").refuse,
    make_2_4=_no_2_4(f" no longer has {MARLIN}"),
)

for _recipe in (
    Recipe(
        "baseline",
        config="the high-precision model (no config)",
        needs="any device",
        doc="what every recipe is measured against",
        bits=None,
        make_2_4=_plain_2_4,
    ),
    Recipe(
        "int8wo",
        config="Int8WeightOnlyConfig()",
        needs="any device",
        doc="int8 weights, high-precision activations",
        make=lambda tq, match, target: tq.Int8WeightOnlyConfig(),
    ),
    Recipe(
        "int8dq",
        config="Int8DynamicActivationInt8WeightConfig()",
        needs="any device",
        doc="int8 weights and dynamically quantized int8 activations",
        peak="int8",
        make=lambda tq, match, target: tq.Int8DynamicActivationInt8WeightConfig(),
        make_2_4=INT8_NO_2_4,
    ),
    Recipe(
        "int8dq_prefill_wo_decode",
        config="Int8DynamicActivationInt8WeightConfig(weight_only_decode=True)",
        needs="a torchao that has weight_only_decode",
        doc="int8dq for prefill, weight-only for decode",
        peak="int8",
        make=_int8dq_prefill,
        make_2_4=INT8_NO_2_4,
    ),
    Recipe(
        "int8_dynamic_activation_intx_weight",
        r"int8_dynamic_activation_intx_weight-(\d+)-(-?\d+)(?:-(.*))?",
        ("int8_dynamic_activation_intx_weight-4-32-asym",),
        bits_at=1,
        group_at=2,
        groups=(-1, 0, *GROUP_SIZES),  # -1 and 0 both mean per channel
        config="Int8DynamicActivationIntxWeightConfig(opaque_torchao_auto)",
        needs="high_precision_dtype float32 (CPU kernels)",
        doc="1-8-bit grouped weights, int8 activations, packed CPU kernels",
        make=_intx,
    ),
    Recipe(
        "float8wo",
        config="Float8WeightOnlyConfig()",
        needs="CUDA SM 8.9+",
        doc="fp8 weights, high-precision activations",
        make=_float8wo,
    ),
    FLOAT8DQ,
    dataclasses.replace(FLOAT8DQ, name="float8dq-tensor", doc="the same as float8dq"),
    Recipe(
        "float8dq-row",
        config="Float8DynamicActivationFloat8WeightConfig(PerRow())",
        needs="CUDA SM 8.9+",
        doc="fp8 weights and activations, one scale per row",
        peak="fp8",
        make=_float8dq("PerRow"),
        make_2_4=_float8_row_2_4,
    ),
    Recipe(
        "int4wo",
        r"int4wo-(\d+)(-hqq)?(?:-(plain|preshuffled|plain_int32|tile_packed_to_4d))?",
        ("int4wo-128", "int4wo-128-hqq", "int4wo-128-plain", "int4wo-128-preshuffled"),
        bits=4,
        group_at=1,
        config="Int4WeightOnlyConfig(group_size, int4_packing_format)",
        needs="CUDA; plain and preshuffled: the mslk package",
        doc="int4 grouped weights (tinygemm or HQQ parameters) in the named packing",
        make=_int4,
    ),
    Recipe(
        "gemlitewo",
        r"gemlitewo-(4|8)-(\d+)",
        ("gemlitewo-4-64",),
        bits_at=1,
        group_at=2,
        config="prototype UIntxWeightOnlyConfig(bit_width, group_size) (before pytorch/ao#4144: "
        "GemliteUIntXWeightOnlyConfig)",
        needs="the gemlite package; CUDA; fp16 or bf16",
        doc="4- or 8-bit weights on gemlite kernels",
        make=_gemlite,
    ),
    MARLIN_RECIPE,
    dataclasses.replace(
        MARLIN_RECIPE, name="marlin-qqq", doc="Marlin QQQ (removed)", make=MARLIN_QQQ_GONE.refuse
    ),
    Recipe(
        "int8adq-int4w-symm",
        config="none: removed",
        needs="-",
        doc="int8 activations, int4 CUTLASS weights (removed)",
        bits=4,
        make=Removal(
            "the CUTLASS int4-packed layout for int8 activation + int4 weight",
            replaced_by="its prototype Int8DynamicActivationInt4WeightConfig, a grouped, "
            "asymmetric CPU kernel",
        ).refuse,
    ),
    Recipe(
        "fp6",
        config="none: removed (FPXWeightOnlyConfig)",
        needs="-",
        doc="fp6 weights (removed)",
        bits=6,
        make=_fp6,
    ),
    Recipe(
        "uintx",
        r"uintx-(\d+)-(\d+)(-hqq)?",
        ("uintx-4-64",),
        bits_at=1,
        group_at=2,
        config="IntxWeightOnlyConfig(ASYMMETRIC, PerGroup)",
        needs="k a multiple of the group",
        doc="b-bit asymmetric grouped weights",
        make=_uintx,
    ),
):
    register_recipe(_recipe)


def _semi_sparse(tq: Any, target: Target) -> Any:
    """The 2:4 config of a recipe (plain 2:4 for baseline): each recipe declares its own."""
    known = recipe_of(target.recipe)
    make = known[0].make_2_4 if known else None
    if make is None:
        raise unsupported(f"torchao {torchao_version()} has no 2:4 layout for {target.recipe}")
    return make(tq, target)


def _block_sparse(tq: Any, target: Target) -> Any:
    try:
        from torchao.sparsity.sparse_api import BlockSparseWeightConfig
    except ImportError:
        raise unsupported(
            Removal(
                "block sparsity (BlockSparseWeightConfig; its BlockSparseLayout was removed by "
                "pytorch/ao#4143, merged 2026-03)"
            ).said()
        ) from None

    if target.device.type != "cuda":
        raise unsupported(
            f"block sparsity runs torchao's Triton BSR kernels, which need CUDA; this is "
            f"{target.device.type}"
        )
    return BlockSparseWeightConfig(blocksize=64)


SPARSE_MAKERS: dict[str, Callable[[Any, Target], Any]] = {
    "semi-sparse": _semi_sparse,
    "block": _block_sparse,
}


def torchao_config(target: Target, sparsity: str = "none") -> Any | None:
    """The torchao config of a recipe and sparsity (None: the plain baseline), or `unsupported`."""
    if target.recipe == BASELINE and sparsity == "none":
        return None
    try:
        import torchao.quantization as tq
    except ImportError as error:
        raise unsupported(f"torchao is not installed ({error})") from None
    if (kind := sparsity_kind(sparsity)) is not None:
        return SPARSE_MAKERS[kind](tq, target)
    if (known := recipe_of(target.recipe)) is not None and known[0].make is not None:
        return known[0].make(tq, known[1], target)
    raise unsupported(
        f"quantization recipe '{target.recipe}' is not known to this harness (torch_backend/recipes.py)"
    )


def is_quantized(weight: torch.Tensor) -> bool:
    """torchao replaces a quantized weight by a tensor subclass; a plain tensor means nothing happened."""
    return type(weight) not in (torch.Tensor, torch.nn.Parameter)


def is_sparse(weight: torch.Tensor) -> bool:
    """A 2:4 or block-sparse weight is a sparse tensor subclass (torch's or torchao's)."""
    return "Sparse" in type(weight).__name__ or weight.layout != torch.strided


def tensor_bytes(t: torch.Tensor) -> int:
    """Bytes a (possibly subclassed) tensor really stores: the sum over its inner tensors."""
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    if is_traceable_wrapper_subclass(t):
        names, _ = t.__tensor_flatten__()
        return sum(tensor_bytes(getattr(t, name)) for name in names)
    return t.numel() * t.element_size()


def weight_bytes(model: torch.nn.Module) -> int:
    return sum(tensor_bytes(p) for p in model.parameters())
