"""Canonical dtype names shared by both backends, with sizes and numpy twins."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from accelbench.errors import UserError, did_you_mean


@dataclass(frozen=True)
class DType:
    name: str  # canonical name used in configs and CSV
    bits: int
    numpy: type  # numpy / ml_dtypes scalar type holding exactly these values
    peak_family: str  # column of the hardware peak table this dtype's math runs at

    @property
    def nbytes(self) -> float:
        return self.bits / 8

    @property
    def integer(self) -> bool:
        return np.issubdtype(np.dtype(self.numpy), np.integer)

    @property
    def max(self) -> float:
        info = np.iinfo(self.numpy) if self.integer else ml_dtypes.finfo(self.numpy)
        return float(info.max)


_TABLE = {
    "float64": DType("float64", 64, np.float64, "fp64"),
    "float32": DType("float32", 32, np.float32, "fp32"),
    "bfloat16": DType("bfloat16", 16, ml_dtypes.bfloat16, "bf16"),
    "float16": DType("float16", 16, np.float16, "fp16"),
    "float8_e4m3fn": DType("float8_e4m3fn", 8, ml_dtypes.float8_e4m3fn, "fp8"),
    "float8_e5m2": DType("float8_e5m2", 8, ml_dtypes.float8_e5m2, "fp8"),
    "float4_e2m1fn": DType("float4_e2m1fn", 4, ml_dtypes.float4_e2m1fn, "fp4"),
    "int8": DType("int8", 8, np.int8, "int8"),
}
ALIASES = {
    **dict.fromkeys(("float8", "fp8", "e4m3"), "float8_e4m3fn"),
    **dict.fromkeys(("fp32", "f32"), "float32"),
    "float4": "float4_e2m1fn",
    "bf16": "bfloat16",
    "fp16": "float16",
    "e5m2": "float8_e5m2",
}
CANONICAL = tuple(_TABLE)  # the names jax.numpy and the configs use
NAMES = CANONICAL + tuple(ALIASES)


def dtype(name: str) -> DType:
    """Look up a dtype by canonical name or alias ('float8' means e4m3fn, 'float4' means e2m1fn)."""
    key = str(name).removeprefix("torch.").removeprefix("jnp.")
    key = ALIASES.get(key, key)
    key = key if key in _TABLE else ALIASES.get(key.lower(), key.lower())  # 'FP8', 'BF16' as well
    if key not in _TABLE:
        raise UserError(f"unknown dtype '{name}'", suggestion=did_you_mean(str(name), NAMES))
    return _TABLE[key]


def of_array(array: np.ndarray) -> DType:
    return dtype(np.dtype(array.dtype).name)
