"""Run settings as a config gives them (checked, one line per problem) and what a planner is asked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from accelbench.core.case import Rule, RunSettings, content_id, declared_settings
from accelbench.core.flags import Flag, FlagValues
from accelbench.core.param_kinds import real
from accelbench.errors import UserError, did_you_mean, key_path
from accelbench.measure.timers import timer_names

T = TypeVar("T")


# a numeric kind: whether a value is within its rule (NaN and infinity never are), what it must be
BOUNDS: dict[str, tuple[Callable[[Rule, Any], bool], Callable[[Rule], str]]] = {
    "count": (
        lambda r, v: isinstance(v, int) and real(v) and r.low <= v <= r.high,
        lambda r: f"an integer from {int(r.low)} to {int(r.high):,}",
    ),
    "seconds": (
        lambda r, v: real(v) and 0 < v <= r.high,
        lambda r: f"a positive number of seconds up to {r.high:g}",
    ),
    "duration": (
        lambda r, v: real(v) and 0 <= v <= r.high,
        lambda r: f"a number of seconds from 0 to {r.high:g}",
    ),
    "fraction": (
        lambda r, v: real(v) and 0 < v < 1,
        lambda r: f"between 0 and 1{f': a fraction of {r.of}' if r.of else ''}",
    ),
}


def _bounded(rule: Rule, value: Any, key: str, where: str) -> Any:
    within, wanted = BOUNDS[rule.kind]
    if not within(rule, value):
        raise UserError(f"must be {wanted(rule)}, got {value!r}", key=key_path(where, key))
    return value if rule.kind == "count" else float(value)


def _choice(rule: Rule, value: Any, key: str, where: str) -> str:
    choices = timer_names() if rule.kind == "timer" else rule.choices
    if isinstance(value, bool):  # YAML 1.1 reads a bare off/on (no/yes) as a boolean
        value = {False: "off", True: "on"}[value]
    if value not in choices:
        raise UserError(
            f"must be one of {', '.join(choices)}, got {value!r}",
            key=key_path(where, key),
            suggestion=did_you_mean(str(value), choices),
        )
    return str(value)


# How a rule's kind checks a value (key: the setting's name, where: the key path above it).
CHECKS: dict[str, Callable[[Rule, Any, str, str], Any]] = {
    **dict.fromkeys(BOUNDS, _bounded),
    "choice": _choice,
    "timer": _choice,
}
# every run setting a config may give, in declaration order (core/case.py declares them)
RUN_KEYS = tuple(f.name for f in declared_settings())
RULES: dict[str, Rule] = {f.name: f.metadata["rule"] for f in declared_settings()}


def check_setting(key: str, value: Any, where: str, at: str | None = None) -> Any:
    """A run setting's value as its rule takes it (`at`: the key that gave it, if not `where.key`)."""
    rule = RULES[key]
    try:
        return CHECKS[rule.kind](rule, value, key, where)
    except UserError as error:
        if at is not None:
            error.key = at
        raise


def run_settings(base: RunSettings, given: dict[str, Any], where: str) -> RunSettings:
    run = replace(base, **{k: check_setting(k, given[k], where) for k in RUN_KEYS if k in given})
    if "input_sets" in given and run.inputs != "rotate":
        raise UserError(
            "input_sets counts the sets `inputs: rotate` cycles through; add inputs: rotate or drop it",
            key=key_path(where, "input_sets"),
        )
    return run


def checked_run(run: RunSettings, where: str) -> RunSettings:
    """The settings a case ends with hold together (sustained iterations give one mean per round, and
    67 samples of 3 values would make any precision interval look tight)."""
    if run.target_precision is not None and run.cadence == "sustained":
        raise UserError(
            "target_precision needs one sample per iteration, and cadence: sustained (collectives "
            "run sustained) gives one mean per round: use cadence: blocked, or drop target_precision",
            key=key_path(where, "target_precision"),
        )
    if run.soak_chunk and (not run.min_duration_s or run.target_precision is not None):
        raise UserError(
            "a soak in phases lasts min_duration_s (above 0), whatever the precision: give "
            "min_duration_s, and no target_precision",
            key=key_path(where, "soak_chunk"),
        )
    return run


@dataclass(frozen=True)
class PlanRequest:
    """What a dialect's planner needs besides its validated config."""

    config_id: str
    default_csv: str
    max_cases: int
    max_dim: int | None = None  # every dimension clamped to this (equal cases merged)
    config_dir: str = "."  # the config's folder (a relative csv_shapes path is looked up there too)
    backend: list[str] | None = None  # --backend: every benchmark on these backends
    # devices the run will see (starts JAX: asked only by entries that span every device)
    device_count: Callable[[], int] = lambda: 1
    warnings: list[str] = field(default_factory=list)  # said once planning is done
    flags: FlagValues = field(default_factory=FlagValues)  # the dialects' own flags, as given

    def flag(self, flag: Flag[T]) -> T:
        return self.flags.get(flag.dest, flag.default)


def pair_key(op: str, params: Any) -> str:
    """What the same op on the same inputs shares across backends: their outputs are compared."""
    return content_id([op, params.as_dict()])
