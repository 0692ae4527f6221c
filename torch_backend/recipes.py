"""Recipe names of the torchao suite mapped to torchao's configs, with the device checks each needs."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from typing import Any

import torch

from microbench.errors import unsupported


def _sm(device: torch.device) -> tuple[int, int]:
    return torch.cuda.get_device_capability(device) if device.type == "cuda" else (0, 0)


def _float8(recipe: str, device: Any) -> None:
    if _sm(device) < (8, 9):
        sm = f" SM {'.'.join(map(str, _sm(device)))}" if device.type == "cuda" else ""
        raise unsupported(
            f"{recipe} needs a CUDA GPU with fp8 tensor cores (SM 8.9+), this is {device.type}{sm}"
        )


def _int4(tq: Any, match: re.Match[str], device: Any, k: int) -> Any:
    group = int(match.group(1))
    if device.type != "cuda":
        raise unsupported(
            f"torchao {_version()} has no int4 weight-only packing for {device.type} "
            "(tile_packed_to_4d needs CUDA)"
        )
    if k % group:
        raise unsupported(f"in features k={k} are not divisible by group size {group}")
    return tq.Int4WeightOnlyConfig(
        group_size=group,
        int4_packing_format="tile_packed_to_4d",
        int4_choose_qparams_algorithm="hqq" if match.group(2) else "tinygemm",
    )


def _gemlite(tq: Any, match: re.Match[str], device: Any, k: int) -> Any:
    if importlib.util.find_spec("gemlite") is None:
        raise unsupported("gemlitewo needs the gemlite package, which is not installed")
    config = getattr(tq, "GemliteUIntXWeightOnlyConfig", None)
    if config is None:
        raise unsupported(f"torchao {_version()} has no GemliteUIntXWeightOnlyConfig")
    return config(group_size=int(match.group(2)), bit_width=int(match.group(1)))


# recipe name -> (device check or None, torchao config); names with parameters are matched by pattern
FIXED: dict[str, tuple[Callable[[str, Any], None] | None, Callable[[Any], Any]]] = {
    "int8wo": (None, lambda tq: tq.Int8WeightOnlyConfig()),
    "int8dq": (None, lambda tq: tq.Int8DynamicActivationInt8WeightConfig()),
    "float8wo": (_float8, lambda tq: tq.Float8WeightOnlyConfig()),
    "float8dq-tensor": (
        _float8,
        lambda tq: tq.Float8DynamicActivationFloat8WeightConfig(granularity=tq.PerTensor()),
    ),
    "float8dq-row": (
        _float8,
        lambda tq: tq.Float8DynamicActivationFloat8WeightConfig(granularity=tq.PerRow()),
    ),
}
PATTERNS: dict[str, Callable[[Any, re.Match[str], Any, int], Any]] = {
    r"int4wo-(\d+)(-hqq)?": _int4,
    r"gemlitewo-(4|8)-(\d+)": _gemlite,
}


def torchao_config(recipe: str, device: Any, k: int, n: int) -> Any | None:
    """The torchao config for a recipe (None for baseline), or an `unsupported` CaseFailure saying why."""
    if recipe == "baseline":
        return None
    try:
        import torchao.quantization as tq
    except ImportError as error:
        raise unsupported(f"torchao is not installed ({error})") from None
    if recipe in FIXED:
        device_check, make = FIXED[recipe]
        if device_check:
            device_check(recipe, device)
        return make(tq)
    for pattern, make_matched in PATTERNS.items():
        match = re.fullmatch(pattern, recipe)
        if match:
            return make_matched(tq, match, device, k)
    raise unsupported(
        f"quantization recipe '{recipe}' is not known to this harness (torch_backend/recipes.py)"
    )


def _version() -> str:
    import torchao

    return torchao.__version__


def is_quantized(weight: torch.Tensor) -> bool:
    """torchao replaces a quantized weight by a tensor subclass; a plain tensor means nothing happened."""
    return type(weight) not in (torch.Tensor, torch.nn.Parameter)


def tensor_bytes(t: torch.Tensor) -> int:
    """Bytes a (possibly subclassed) tensor really stores: the sum over its inner tensors."""
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    if is_traceable_wrapper_subclass(t):
        names, _ = t.__tensor_flatten__()
        return sum(tensor_bytes(getattr(t, name)) for name in names)
    return t.numel() * t.element_size()


def weight_bytes(model: torch.nn.Module) -> int:
    return sum(tensor_bytes(p) for p in model.parameters())
