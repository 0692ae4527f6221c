"""The op catalogue: each op's parameters, FLOP/byte models, inputs and reference.

Backends implement ops by name; a spec names the backends that implement it so
`microbench list` works without importing any framework.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from microbench.errors import UserError, did_you_mean

Params = Mapping[str, Any]
Arrays = dict[str, np.ndarray]

MAX_DIM = 1 << 22  # a single dimension beyond 4M elements is a typo, not a benchmark


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "dim" | "dtype" | "choice" | "int" | "float" | "bool" | "str"
    default: Any = None
    choices: tuple[Any, ...] = ()
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is None and self.kind == "dim"


@dataclass(frozen=True)
class OpSpec:
    """What an op is, independent of the framework that runs it."""

    name: str
    suite: str
    doc: str
    params: tuple[Param, ...]
    backends: tuple[str, ...]
    flops: Callable[[Params], float]
    bytes: Callable[[Params], float]
    peak_dtype: Callable[[Params], str] = lambda p: "bf16"
    make_inputs: Callable[[Params, np.random.Generator], Arrays] | None = None
    reference: Callable[[Arrays, Params, np.ndarray], Arrays] | None = None
    output_rows: Callable[[Params], int] | None = None
    tolerance_floor: Callable[[Params], float] = lambda p: 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


_SPECS: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    if spec.name in _SPECS:
        raise ValueError(f"op {spec.name!r} registered twice")
    _SPECS[spec.name] = spec
    return spec


def _load_catalogue() -> None:
    # Importing the spec modules registers their ops.
    from microbench.ops import compute, elementwise, faults, fusion, quantization  # noqa: F401


def all_specs() -> dict[str, OpSpec]:
    if not _SPECS:
        _load_catalogue()
    return dict(_SPECS)


def get_spec(name: str) -> OpSpec:
    specs = all_specs()
    if name not in specs:
        raise UserError(f"unknown op '{name}'", suggestion=did_you_mean(name, specs))
    return specs[name]
