"""Run settings as a config gives them (checked, one line per problem) and what a planner is asked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from microbench.core.case import CACHE_POLICIES, CADENCES, CHECK_MODES, INPUT_POLICIES, RunSettings
from microbench.errors import UserError, did_you_mean, key_path
from microbench.limits import (
    MAX_INPUT_SETS,
    MAX_ITERATIONS,
    MAX_SECONDS,
    MAX_SOAK_S,
    MAX_THREADS,
)
from microbench.measure.timers import timer_names

RUN_KEYS = (
    "num_runs",
    "warmup",
    "timeout_s",
    "check",
    "timer",
    "cache",
    "cadence",
    "threads",
    "min_duration_s",
    "target_precision",
    "max_runs",
    "max_time_s",
    "inputs",
    "input_sets",
)


def _count(value: Any, low: int, key: str, where: str, high: int = MAX_ITERATIONS) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UserError(
            f"must be an integer from {low} to {high:,}, got {value!r}", key=key_path(where, key)
        )
    return value


def _seconds(value: Any, key: str, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value <= MAX_SECONDS  # NaN and infinity fail this too
    ):
        raise UserError(
            f"must be a positive number of seconds up to {MAX_SECONDS:g}, got {value!r}",
            key=key_path(where, key),
        )
    return float(value)


def _duration(value: Any, key: str, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 <= value <= MAX_SOAK_S
    ):
        raise UserError(
            f"must be a number of seconds from 0 to {MAX_SOAK_S:g}, got {value!r}",
            key=key_path(where, key),
        )
    return float(value)


def _fraction(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise UserError(
            f"must be a fraction of the median between 0 and 1 (0.01: within 1%), got {value!r}",
            key=key_path(where, key),
        )
    return float(value)


def _choice(value: Any, key: str, where: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UserError(
            f"must be one of {', '.join(choices)}, got {value!r}",
            key=key_path(where, key),
            suggestion=did_you_mean(str(value), choices),
        )
    return str(value)


def _check_mode(value: Any, key: str, where: str) -> str:
    value = "off" if value is False else value  # YAML 1.1 reads a bare `off` as false
    if value not in CHECK_MODES:
        raise UserError(
            f"must be strict, flag or off, got {value!r}",
            key=key_path(where, key),
            suggestion=did_you_mean(str(value), CHECK_MODES),
        )
    return str(value)


# How each run setting found among a case's keys is checked.
RUN_SETTING_CHECKS = {
    "num_runs": lambda v, where: _count(v, 1, "num_runs", where),
    "warmup": lambda v, where: _count(v, 0, "warmup", where),
    "timeout_s": lambda v, where: _seconds(v, "timeout_s", where),
    "check": lambda v, where: _check_mode(v, "check", where),
    "timer": lambda v, where: _choice(v, "timer", where, timer_names()),
    "cache": lambda v, where: _choice(v, "cache", where, CACHE_POLICIES),
    "cadence": lambda v, where: _choice(v, "cadence", where, CADENCES),
    "threads": lambda v, where: _count(v, 1, "threads", where, MAX_THREADS),
    "min_duration_s": lambda v, where: _duration(v, "min_duration_s", where),
    "target_precision": lambda v, where: _fraction(v, "target_precision", where),
    "max_runs": lambda v, where: _count(v, 1, "max_runs", where),
    "max_time_s": lambda v, where: _seconds(v, "max_time_s", where),
    "inputs": lambda v, where: _choice(v, "inputs", where, INPUT_POLICIES),
    "input_sets": lambda v, where: _count(v, 2, "input_sets", where, MAX_INPUT_SETS),
}


def run_settings(base: RunSettings, given: dict[str, Any], where: str) -> RunSettings:
    """`base` updated with whichever run settings `given` holds."""
    updates: dict[str, Any] = {
        key: RUN_SETTING_CHECKS[key](given[key], where) for key in RUN_KEYS if key in given
    }
    run = replace(base, **updates)
    if "input_sets" in given and run.inputs != "rotate":
        raise UserError(
            "input_sets counts the sets `inputs: rotate` cycles through; add inputs: rotate or drop it",
            key=key_path(where, "input_sets"),
        )
    return run


def checked_run(run: RunSettings, where: str) -> RunSettings:
    """The settings a case ends with (an op's own overrides applied) hold together: a precision target
    needs independent samples, and sustained iterations give one mean per round (67 samples of 3
    values would make any interval look tight)."""
    if run.target_precision is not None and run.cadence == "sustained":
        raise UserError(
            "target_precision needs one sample per iteration, and cadence: sustained (collectives "
            "run sustained) gives one mean per round: use cadence: blocked, or drop target_precision",
            key=key_path(where, "target_precision"),
        )
    return run


@dataclass(frozen=True)
class PlanRequest:
    """What a dialect's planner needs besides its validated config."""

    config_id: str
    default_csv: str
    max_cases: int
    max_dim: int | None = (
        None  # every dimension clamped to this (cases equal after clamping merged)
    )
    output_path: str | None = None  # the reference's --output_path: trace and HLO dirs under it
    config_dir: str = "."  # the config's folder (a relative csv_shapes path is looked up there too)
    system: str | None = None  # --hw: a hardware preset for entries that name none
    xprof_dir: str | None = None  # --xprof_dir: where kept traces go
    conditions: str | None = None  # --conditions: jax-bench files under upstream's or strict ones
    backend: list[str] | None = None  # --backend: every benchmark on these backends
    # devices the run will see (starts JAX: asked only by entries that span every device)
    device_count: Callable[[], int] = lambda: 1
    warnings: list[str] = field(default_factory=list)  # said once planning is done


def pair_key(op: str, params: dict[str, Any]) -> str:
    """What the same op on the same inputs shares across backends: their outputs are compared."""
    return hashlib.sha1(json.dumps([op, params], sort_keys=True).encode()).hexdigest()[:12]
