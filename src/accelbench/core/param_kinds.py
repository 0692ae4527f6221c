"""How a parameter's value is checked, by its kind (`Param` names it): a problem size (what
`--max-dim` clamps), a dtype, a choice, TPUMS's enum (in its words) or a plain typed value."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard

from accelbench.errors import UserError, did_you_mean
from accelbench.platform.dtypes import dtype as lookup_dtype


def real(value: Any) -> TypeGuard[float]:  # a number, not a boolean (YAML's true is no 1)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


MAX_DIM = 1 << 22  # a single dimension beyond 4M elements is a typo, not a benchmark
MAX_ELEMENTS = 1 << 40  # a flat element count (4 TiB of bytes) beyond any device's memory


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # a key of PARAM_KINDS
    default: Any = None
    choices: tuple[Any, ...] = ()
    doc: str = ""
    aliases: tuple[str, ...] = ()  # the Ironwood reference's spellings of it
    each: tuple[Any, ...] = ()  # swept over these values when a config leaves the parameter out
    minimum: float | None = None  # the least value, where a dialect states one (TPUMS's `min`)

    @property
    def required(self) -> bool:
        return self.default is None and PARAM_KINDS[self.kind].sizes_problem

    def validate(self, value: Any, where: str) -> Any:
        if self.minimum is not None and real(value) and value < self.minimum:
            raise UserError(f"{self.name} must be >= {self.minimum}, got {value}", key=where)
        return PARAM_KINDS[self.kind].validate(self, value, where)

    def clamped(self, value: Any, max_dim: int) -> Any:
        """The value --max-dim lets through (problem sizes only)."""
        clamp = PARAM_KINDS[self.kind].clamp
        return min(value, clamp(max_dim)) if clamp and isinstance(value, int) and value else value

    @property
    def default_value(self) -> Any:
        return lookup_dtype(self.default).name if self.kind.endswith("dtype") else self.default

    @property
    def python_type(self) -> type:
        """What its values are: its kind's type, or for a choice the one type of its choices."""
        kinds = {type(c) for c in self.choices}
        if self.kind == "choice" and len(kinds) == 1:
            return kinds.pop()
        return PARAM_KINDS[self.kind].python_type


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


def _named_dtype(param: Param, value: Any, where: str) -> Any:
    """A dtype as jax.numpy spells it (`bfloat16`): jax-bench looks it up there, so no short aliases."""
    canonical = _dtype(param, value, where)
    if value != canonical:
        raise UserError(
            f"dtype '{value}' is not a jax.numpy name (jax-bench reads '{canonical}')",
            key=where,
            suggestion=canonical,
        )
    return canonical


def _one_of(said: Callable[[Param, Any], str]) -> Callable[[Param, Any, str], Any]:
    """A value among the parameter's choices, or a one-line error in `said`'s words."""

    def check(param: Param, value: Any, where: str) -> Any:
        if value not in param.choices:
            raise UserError(
                said(param, value),
                key=where,
                suggestion=did_you_mean(str(value), map(str, param.choices)),
            )
        return value

    return check


_choice = _one_of(lambda p, v: f"'{v}' is not one of {', '.join(map(str, p.choices))}")
# a canonical value only, as TPUMS's enum fields take them (no other casing), in TPUMS's words
_enum = _one_of(lambda p, v: f"Invalid {p.name} '{v}'. Must be one of {list(p.choices)}.")


def _typed(kind: type | tuple[type, ...], what: str, convert: Callable[[Any], Any] = lambda v: v):
    def check(param: Param, value: Any, where: str) -> Any:
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
            raise UserError(f"must be {what}, got {value!r}", key=where)
        return convert(value)

    return check


def _number(param: Param, value: Any, where: str) -> float:
    """A finite number (`.nan` and `.inf` are YAML numbers that no field can take)."""
    number = float(_typed((int, float), "a number")(param, value, where))
    if not math.isfinite(number):
        raise UserError(f"must be a finite number, got {value!r}", key=where)
    return number


def _positive(param: Param, value: Any, where: str) -> float:
    number = _number(param, value, where)
    if number <= 0:
        raise UserError(f"must be a number above 0, got {value!r}", key=where)
    return number


def _names(param: Param, value: Any, where: str) -> str:
    """Names joined by commas (a mesh's axes: `dcn,ici`): each a word, none twice."""
    names = [
        n.strip() for n in _typed(str, "names joined by commas")(param, value, where).split(",")
    ]
    if not all(n.isidentifier() for n in names) or len(set(names)) < len(names):
        raise UserError(
            f"must be distinct names joined by commas (like dcn,ici), got {value!r}", key=where
        )
    return ",".join(names)


@dataclass(frozen=True)
class ParamKind:
    """What a parameter's kind means: its check, and for a problem size the cap `--max-dim D` sets."""

    validate: Callable[[Param, Any, str], Any]
    clamp: Callable[[int], int] | None = None  # D -> the cap; None: not a problem size
    python_type: type = str  # what a value is (a choice's: its choices'), as a row reads it back
    names: bool = True  # a value away from its default names the case in tables (not a path's)

    @property
    def sizes_problem(self) -> bool:
        return self.clamp is not None


PARAM_KINDS: dict[str, ParamKind] = {
    "dim": ParamKind(_dim, lambda d: d, int),  # one dimension: at most D
    "elements": ParamKind(_elements, lambda d: d * d, int),  # a flat element count: at most D*D
    "mib": ParamKind(_dim, lambda d: max(1, d * d * 4 >> 20), int),  # D*D fp32 values, >= 1 MiB
    "dtype": ParamKind(_dtype),
    "jnp_dtype": ParamKind(_named_dtype),  # the jax-bench dialect's: full names only
    "choice": ParamKind(_choice),
    "enum": ParamKind(_enum),  # a choice in TPUMS's words: canonical values only
    "int": ParamKind(_typed(int, "an integer"), python_type=int),
    "float": ParamKind(_number, python_type=float),
    "positive": ParamKind(_positive, python_type=float),  # a finite number above 0
    "names": ParamKind(_names),
    "bool": ParamKind(_typed(bool, "true or false"), python_type=bool),
    "str": ParamKind(_typed(str, "a string")),
    "path": ParamKind(_typed(str, "a path"), names=False),  # where a file goes
    "mapping": ParamKind(_typed(dict, "a mapping"), python_type=dict),
}
