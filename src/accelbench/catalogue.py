"""The op catalogue: what each op is (its spec and traits) and which backends implement it, how.
Op modules (``accelbench/ops``, ``torch_backend/ops``) register as they are imported; `discover` imports
them all and every backend's timer module, so the catalogue is complete whatever was imported first.
Nothing here imports a framework."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from accelbench.core.case import Case, RunSettings, declared_settings
from accelbench.core.param_kinds import PARAM_KINDS, Param
from accelbench.core.types import Prepared
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.platform.backends import BACKENDS, run_order
from accelbench.registry import register_once

Params = Any  # an op's typed parameters (OpParams)
Arrays = dict[str, np.ndarray]
# the op's parameters -> fn(*its input arrays, in make_inputs order) -> named outputs
ArrayBuild = Callable[[Any], Callable[..., dict[str, Any]]]
PreparedBuild = Callable[[Any, Case], Prepared]  # (the backend object, the case) -> ready to time
P = TypeVar("P", bound="OpParams")


@dataclass(frozen=True)
class Placement:
    """Where an op runs, as every backend reads it (a device index or PyTorch device name, spread over
    the local devices or not), and its inputs' seed."""

    device: int | str = 0
    sharding: str = "none"
    seed: int = 0
    rows: int | None = None  # the rows `sharding: split_m` splits (its m), where it has them


# the parameters that say where an op runs, by the Placement field each fills
PLACEMENT = {"device": "device", "sharding": "sharding", "seed": "seed", "m": "rows"}


class OpParams:
    """The base of an op's frozen parameter dataclass, its fields declared with `param`: read by
    attribute (`p.m`, typed), or by declaration where every op is treated alike (`as_dict`)."""

    trailing: ClassVar[bool] = False  # its fields come after those of the classes derived from it

    @classmethod
    @functools.cache
    def names(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.declared())

    @classmethod
    def declared_param(cls, name: str) -> Param:
        return next(p for p in cls.declared() if p.name == name)

    @classmethod
    @functools.cache
    def declared(cls) -> tuple[Param, ...]:
        """In field order, a `trailing` class's last (the placement every compute op has)."""
        trailing = {
            name
            for c in cls.__mro__
            if vars(c).get("trailing")
            for name in vars(c).get("__annotations__", {})
        }
        ordered = sorted(fields(cls), key=lambda f: f.name in trailing)  # type: ignore[arg-type]
        return tuple(replace(f.metadata["param"], name=f.name) for f in ordered)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}

    def value(self, name: str, default: Any = None) -> Any:
        """The value of a parameter named at run time (a chart's axis), `default` where it has none."""
        return self.as_dict().get(name, default)

    @property
    def placement(self) -> Placement:
        return Placement(**{PLACEMENT[k]: v for k, v in self.as_dict().items() if k in PLACEMENT})


@dataclass
class ReadParams(OpParams):
    """Parameters read back that no class of this version takes (an unknown op or value), by name."""

    read: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.read)


def params_of(case: Case, kind: type[P]) -> P:
    if not isinstance(case.params, kind):
        raise TypeError(
            f"case {case.op}: parameters {type(case.params).__name__}, not {kind.__name__}"
        )
    return case.params


def param(
    kind: str,
    default: Any = None,
    choices: Iterable[Any] = (),
    doc: str = "",
    aliases: tuple[str, ...] = (),
    each: tuple[Any, ...] = (),
) -> Any:
    declared = Param("", kind, default, tuple(choices), doc, aliases, each)
    return field(default=default, metadata={"param": declared})


# the parameter kind a run setting's rule reads as on a command line (core/case.py declares them)
SETTING_KINDS = {
    **dict.fromkeys(("seconds", "duration", "fraction"), "float"),
    **{"count": "int", "choice": "choice", "timer": "str"},
}


def case_choice_params(default_backend: str | None = None) -> tuple[Param, ...]:
    """What a one-off command line or a dialect's entry may choose besides the op's parameters."""
    return (
        Param(
            "backend",
            "str",
            default_backend,
            doc="jax, torch (a list in YAML): the PyTorch twin too",
        ),
        Param("implementation", "str", None, doc="one of the op's registered implementations"),
    )


def run_setting_params(leave_out: Iterable[str] = ()) -> tuple[Param, ...]:
    """The run settings as parameters of a one-off command line or a dialect's keys."""
    return tuple(
        Param(
            f.name,
            SETTING_KINDS[f.metadata["rule"].kind],
            f.default,
            f.metadata["rule"].choices,
            f.metadata["doc"],
        )
        for f in declared_settings()
        if f.name not in leave_out
    )


class Headline(str, Enum):  # whose time is a row's headline
    ONE_DEVICE = "one_device"
    # every device timed; per iteration, the slowest (collectives)
    SLOWEST_DEVICE = "slowest_device"


@dataclass(frozen=True)
class RunOverride:
    """Run settings an op's parameters fix (a gap strategy is a cadence and a cache policy)."""

    cache: str | None = None
    cadence: str | None = None

    def apply(self, run: RunSettings) -> RunSettings:
        return replace(run, cache=self.cache or run.cache, cadence=self.cadence or run.cadence)


RunOverrides = Callable[[Any], RunOverride]  # the op's parameters -> what they fix


@dataclass(frozen=True)
class Traits:
    """How an op is run and reported beyond its math, as named facts (tritonbench's operator attributes)."""

    headline: Headline = Headline.ONE_DEVICE
    # the global id of the device whose time is the headline (a transfer's receiver), not the slowest
    timed_device: Callable[[Any], int] | None = None
    roofline: bool = True  # False: interconnect traffic, which the HBM and FLOP peaks do not bound
    auto_timer: Mapping[str, str] = field(default_factory=dict)  # backend -> what `auto` means here
    run_overrides: RunOverrides | None = None  # run settings its parameters fix (cadence, cache)
    monitor_gpu: bool = False  # clocks, temperature and power sampled along the case
    donated_input: str | None = None  # updated in place; each result feeds the next iteration
    default_implementations: tuple[str, ...] = ()  # run when a config names none (empty: all)
    internal: bool = False  # the harness's own test op: runs, but `list` does not offer it
    compiler_options: bool = False  # its PyTorch preparation may set global compiler options
    audit_expects: tuple[str, ...] = ()  # audit findings its work is made of (a transfer's copies)


@dataclass(frozen=True)
class OpSpec(Generic[P]):
    """What an op is, independent of the framework that runs it; `params` derive from `typed`."""

    name: str
    doc: str
    typed: type[P]
    flops: Callable[[P], float]
    bytes: Callable[[P], float]
    suite: str = "compute"
    peak_dtype: Callable[[P], str] = lambda p: "bf16"
    make_inputs: Callable[[P, np.random.Generator], Arrays] | None = None
    reference: Callable[[Arrays, P, np.ndarray], Arrays] | None = None
    output_rows: Callable[[P], int] | None = None
    tolerance_floor: Callable[[P], float] = lambda p: 0.0
    constraint: Callable[[P], str | None] = lambda p: None  # why params cannot run, if so
    row_extras: type | None = None  # the dataclass of the suite's columns this op's rows carry
    traits: Traits = Traits()

    @property
    def params(self) -> tuple[Param, ...]:
        return self.typed.declared()

    def made(self, values: Mapping[str, Any]) -> P:  # of checked values
        return self.typed(**values)

    def check_constraints(self, params: Params, where: str) -> None:
        problem = self.constraint(params)
        if problem:
            raise UserError(f"op '{self.name}': {problem}", key=where)

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.typed.names()

    @property
    def dimensions(self) -> tuple[str, ...]:
        """The parameters that size the problem (what a shape label shows, what a sweep varies)."""
        return tuple(p.name for p in self.params if PARAM_KINDS[p.kind].sizes_problem)

    def shape(self, params: Params, named: bool = False) -> str:
        """'1024x512x256' (or 'm=1024 k=512 n=256') from the op's dimensions."""
        values = params.as_dict()
        dims = [(d, values[d]) for d in self.dimensions if values.get(d) not in (None, "", 0)]
        return (" " if named else "x").join(f"{k}={v}" if named else str(v) for k, v in dims)

    @property
    def backends(self) -> tuple[str, ...]:
        return backends_of(self.name)

    def resolve(self, given: Mapping[str, Any], where: str, also_known: Iterable[str] = ()) -> P:
        """Names and values checked against the parameters, defaults filled in."""
        canonical = {alias: p.name for p in self.params for alias in p.aliases}
        named: dict[str, tuple[str, Any]] = {}  # (the key as the config wrote it: errors name it)
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
            named[target] = (name, value)
        resolved: dict[str, Any] = {}
        for param in self.params:
            if param.name in named:
                spelled, value = named[param.name]
                resolved[param.name] = param.validate(value, key_path(where, spelled))
            elif param.required:
                raise UserError(f"op '{self.name}' needs parameter '{param.name}'", key=where)
            else:
                resolved[param.name] = param.default_value
        return self.made(resolved)


B = TypeVar("B")


@dataclass(frozen=True)
class Registered(Generic[B]):
    op: str
    backend: str
    name: str
    build: B


class ArrayImplementation(Registered[ArrayBuild]):
    """A pure function of the op's input arrays: the backend draws, places, compiles and times it."""


class PreparedImplementation(Registered[PreparedBuild]):
    """An implementation that prepares itself: inputs, call, check and extras (transfers, suites)."""


Implementation = ArrayImplementation | PreparedImplementation


# op specs by name, implementations by (op, backend, name): scoped as every registry (registrations)
SPECS: dict[str, OpSpec] = {}
IMPLEMENTATIONS: dict[tuple[str, str, str], Implementation] = {}
_discovered = False


def register(spec: OpSpec) -> OpSpec:
    return register_once(SPECS, spec.name, spec, "op")


def add_implementation(impl: Implementation, replace: bool = False) -> None:
    """`replace` swaps a registered one (tests injecting a fault)."""
    if impl.backend not in BACKENDS:
        raise ValueError(f"unknown backend {impl.backend!r}")
    key = (impl.op, impl.backend, impl.name)
    if key in IMPLEMENTATIONS and not replace:
        raise ValueError(
            f"{impl.backend} implementation {impl.name!r} of op {impl.op!r} registered twice"
        )
    IMPLEMENTATIONS[key] = impl


def discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    packages = (
        "accelbench.ops",
        *(b.implementations for b in BACKENDS.values()),
        *(b.timers for b in BACKENDS.values() if b.timers),
    )
    for package_name in dict.fromkeys(packages):
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(getattr(package, "__path__", []), package_name + "."):
            importlib.import_module(module.name)


def all_specs() -> dict[str, OpSpec]:
    discover()
    return dict(SPECS)


def get_spec(name: str) -> OpSpec:
    specs = all_specs()
    if name not in specs:
        raise UserError(f"unknown op '{name}'", suggestion=did_you_mean(name, specs))
    return specs[name]


def backends_of(op: str) -> tuple[str, ...]:
    discover()
    return tuple(sorted({b for (o, b, _) in IMPLEMENTATIONS if o == op}, key=run_order))


def implementations(op: str, backend: str) -> dict[str, Implementation]:
    discover()
    return {n: i for (o, b, n), i in IMPLEMENTATIONS.items() if (o, b) == (op, backend)}


def array_implementation(
    ops: str | Iterable[str], backend: str, name: str = "default"
) -> Callable[[ArrayBuild], ArrayBuild]:
    """Register `build(params) -> fn(*arrays) -> {name: array}` as `backend`'s `name` of the ops."""
    return _registers(ArrayImplementation, ops, backend, name)


def implementation(
    ops: str | Iterable[str], backend: str, name: str = "default"
) -> Callable[[PreparedBuild], PreparedBuild]:
    """Register `build(backend, case) -> Prepared` as `backend`'s `name` of the ops."""
    return _registers(PreparedImplementation, ops, backend, name)


def _registers(kind: Any, ops: str | Iterable[str], backend: str, name: str) -> Any:
    def decorate(build: Any) -> Any:
        for op in [ops] if isinstance(ops, str) else ops:
            add_implementation(kind(op, backend, name, build))
        return build

    return decorate


def get_implementation(op: str, backend: str, name: str | None = None) -> Implementation:
    """The named implementation, or the backend's only/default one when no name is given."""
    table = implementations(op, backend)
    if not table:
        raise KeyError(f"no {backend} implementation of {op}")
    if name is None:
        return table.get("default") or next(iter(table.values()))
    return table[name]


Kind = TypeVar("Kind", ArrayImplementation, PreparedImplementation)


def implementation_of(kind: type[Kind], op: str, backend: str, name: str | None = None) -> Kind:
    """`get_implementation`, for a backend that runs only one kind of registration."""
    impl = get_implementation(op, backend, name)
    if not isinstance(impl, kind):
        raise TypeError(
            f"{backend} implementation {impl.name!r} of {op!r} is a {type(impl).__name__}, "
            f"not a {kind.__name__}"
        )
    return impl
