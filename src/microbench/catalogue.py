"""The op catalogue: what each op is (its spec) and which backends implement it.

An op family's module (``microbench/ops/<family>.py``) registers its specs with `register` and its
implementations with the `implementation` decorator; PyTorch implementations register the same way from
``torch_backend/ops``. `discover` imports every module of those packages, so the catalogue is complete
whatever was imported first. Nothing here imports a framework.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from microbench.errors import UserError, did_you_mean, key_path
from microbench.platform.backends import BACKENDS, run_order
from microbench.platform.dtypes import dtype as lookup_dtype

Params = Mapping[str, Any]
Arrays = dict[str, np.ndarray]
F = TypeVar("F", bound=Callable[..., Any])

MAX_DIM = 1 << 22  # a single dimension beyond 4M elements is a typo, not a benchmark
MAX_ELEMENTS = 1 << 40  # a flat element count (4 TiB of bytes) beyond any device's memory


def _dim(param: Param, value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"must be a positive integer, got {value!r}", key=where)
    if value <= 0:
        raise UserError(f"must be positive, got {value}", key=where)
    if value > MAX_DIM:
        raise UserError(f"{value} is absurdly large for one dimension (limit {MAX_DIM})", key=where)
    return value


def _elements(param: Param, value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UserError(f"must be a positive integer, got {value!r}", key=where)
    if value > MAX_ELEMENTS:
        raise UserError(f"{value} elements is beyond any device (limit 2^40)", key=where)
    return value


def _dtype(param: Param, value: Any, where: str) -> Any:
    try:
        canonical = lookup_dtype(value).name
    except UserError as error:
        raise UserError(error.message, key=where, suggestion=error.suggestion) from None
    allowed = {lookup_dtype(c).name for c in param.choices} if param.choices else None
    if allowed and canonical not in allowed:
        raise UserError(
            f"dtype '{value}' is not supported by this op (choose from {', '.join(param.choices)})",
            key=where,
        )
    return canonical


def _choice(param: Param, value: Any, where: str) -> Any:
    if value not in param.choices:
        raise UserError(
            f"'{value}' is not one of {', '.join(map(str, param.choices))}",
            key=where,
            suggestion=did_you_mean(str(value), map(str, param.choices)),
        )
    return value


def _typed(kind: type | tuple[type, ...], what: str, convert: Callable[[Any], Any] = lambda v: v):
    def check(param: Param, value: Any, where: str) -> Any:
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
            raise UserError(f"must be {what}, got {value!r}", key=where)
        return convert(value)

    return check


# How a parameter's value is checked and normalised, by the parameter's kind.
VALIDATORS: dict[str, Callable[[Param, Any, str], Any]] = {
    "dim": _dim,
    "elements": _elements,  # a flat element count; --max-dim D clamps it to D*D
    "dtype": _dtype,
    "choice": _choice,
    "int": _typed(int, "an integer"),
    "float": _typed((int, float), "a number", float),
    "bool": _typed(bool, "true or false"),
    "str": _typed(str, "a string"),
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # a key of VALIDATORS
    default: Any = None
    choices: tuple[Any, ...] = ()
    doc: str = ""
    aliases: tuple[str, ...] = ()  # the Ironwood reference's spellings of it
    each: tuple[Any, ...] = ()  # swept over these values when a config leaves the parameter out

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("dim", "elements")

    def validate(self, value: Any, where: str) -> Any:
        return VALIDATORS[self.kind](self, value, where)

    @property
    def default_value(self) -> Any:
        return lookup_dtype(self.default).name if self.kind == "dtype" else self.default


@dataclass(frozen=True)
class OpSpec:
    """What an op is, independent of the framework that runs it."""

    name: str
    suite: str
    doc: str
    params: tuple[Param, ...]
    flops: Callable[[Params], float]
    bytes: Callable[[Params], float]
    peak_dtype: Callable[[Params], str] = lambda p: "bf16"
    make_inputs: Callable[[Params, np.random.Generator], Arrays] | None = None
    reference: Callable[[Arrays, Params, np.ndarray], Arrays] | None = None
    output_rows: Callable[[Params], int] | None = None
    tolerance_floor: Callable[[Params], float] = lambda p: 0.0
    constraint: Callable[[Params], str | None] = lambda p: (
        None
    )  # why these params cannot run, if so
    row_extras: type | None = (
        None  # the dataclass of the suite-specific columns this op's rows carry
    )
    extra: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def check_constraints(self, params: Params, where: str) -> None:
        problem = self.constraint(params)
        if problem:
            raise UserError(f"op '{self.name}': {problem}", key=where)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def backends(self) -> tuple[str, ...]:
        """The backends with an implementation of this op, in run order."""
        return backends_of(self.name)

    def resolve(
        self, given: Mapping[str, Any], where: str, also_known: Iterable[str] = ()
    ) -> dict[str, Any]:
        """Check names and values against the parameters and fill in defaults."""
        canonical = {alias: p.name for p in self.params for alias in p.aliases}
        named: dict[str, Any] = {}
        spelled: dict[str, str] = {}  # errors name the key as the config wrote it
        for name, value in given.items():
            if name not in self.param_names and name not in canonical:
                raise UserError(
                    f"unknown parameter '{name}' for op '{self.name}'",
                    key=key_path(where, name),
                    suggestion=did_you_mean(name, (*self.param_names, *canonical, *also_known)),
                )
            target = canonical.get(name, name)
            if target in named:
                raise UserError(
                    f"parameter '{target}' is given twice (as '{name}' too)",
                    key=key_path(where, name),
                )
            named[target], spelled[target] = value, name
        given = named
        resolved: dict[str, Any] = {}
        for param in self.params:
            if param.name in given:
                resolved[param.name] = param.validate(
                    given[param.name], key_path(where, spelled[param.name])
                )
            elif param.required:
                raise UserError(f"op '{self.name}' needs parameter '{param.name}'", key=where)
            else:
                resolved[param.name] = param.default_value
        return resolved


@dataclass(frozen=True)
class Implementation:
    """One way a backend runs an op. `build`'s signature is the backend's business (docs/architecture.md)."""

    op: str
    backend: str
    name: str
    build: Callable[..., Any]


_SPECS: dict[str, OpSpec] = {}
_IMPLEMENTATIONS: dict[tuple[str, str], dict[str, Implementation]] = {}
_discovered = False


def register(spec: OpSpec) -> OpSpec:
    if spec.name in _SPECS:
        raise ValueError(f"op {spec.name!r} registered twice")
    _SPECS[spec.name] = spec
    return spec


def implementation(
    ops: str | Iterable[str], backend: str, name: str = "default"
) -> Callable[[F], F]:
    """Register the decorated function as `backend`'s implementation `name` of one or more ops."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}")

    def decorate(build: F) -> F:
        for op in [ops] if isinstance(ops, str) else list(ops):
            table = _IMPLEMENTATIONS.setdefault((op, backend), {})
            if name in table:
                raise ValueError(f"{backend} implementation {name!r} of op {op!r} registered twice")
            table[name] = Implementation(op, backend, name, build)
        return build

    return decorate


def discover() -> None:
    """Import every op module (ours and each backend's implementation package) exactly once."""
    global _discovered
    if _discovered:
        return
    packages = dict.fromkeys(["microbench.ops", *(b.implementations for b in BACKENDS.values())])
    for package_name in packages:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__, package_name + "."):
            importlib.import_module(module.name)
    _discovered = True


def all_specs() -> dict[str, OpSpec]:
    discover()
    return dict(_SPECS)


def get_spec(name: str) -> OpSpec:
    specs = all_specs()
    if name not in specs:
        raise UserError(f"unknown op '{name}'", suggestion=did_you_mean(name, specs))
    return specs[name]


def backends_of(op: str) -> tuple[str, ...]:
    discover()
    return tuple(sorted({b for (o, b) in _IMPLEMENTATIONS if o == op}, key=run_order))


def implementations(op: str, backend: str) -> dict[str, Implementation]:
    discover()
    return dict(_IMPLEMENTATIONS.get((op, backend), {}))


def get_implementation(op: str, backend: str, name: str | None = None) -> Implementation:
    """The named implementation, or the backend's only/default one when no name is given."""
    table = implementations(op, backend)
    if not table:
        raise KeyError(f"no {backend} implementation of {op}")
    if name is None:
        return table.get("default") or next(iter(table.values()))
    return table[name]
