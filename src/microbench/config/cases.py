"""A case: one op on one backend with fully resolved parameters, run settings and outputs."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from microbench.catalogue import shape_label
from microbench.errors import UserError, did_you_mean, key_path

RUN_KEYS = ("num_runs", "warmup", "timeout_s", "check", "timer", "cache", "cadence", "threads")
CHECK_MODES = ("strict", "flag", "off")
TIMERS = ("auto", "xprof", "cupti", "cuda_graph", "cuda_events", "wall")
CACHE_POLICIES = ("cold", "warm")
CADENCES = ("blocked", "sustained")


@dataclass(frozen=True)
class RunSettings:
    num_runs: int = 20
    warmup: int = 3
    timeout_s: float | None = None
    check: str = "strict"  # strict: a wrong result is not timed; flag: timed but flagged; off
    timer: str = "auto"  # which timer; auto picks per backend and platform (docs/method.md)
    cache: str = "cold"  # cold: L2 (or the CPU's last-level cache) flushed before every iteration
    cadence: str = (
        "blocked"  # blocked: each iteration waits for its outputs; sustained: back to back
    )
    threads: int | None = None  # CPU threads for the framework's host ops (None: its default)


@dataclass(frozen=True)
class Outputs:
    csv_path: str
    trace_dir: str | None = None
    xla_dump_dir: str | None = None
    xlml_metrics_dir: str | None = None


@dataclass(frozen=True)
class Case:
    op: str
    backend: str
    params: dict[str, Any]
    run: RunSettings
    outputs: Outputs
    benchmark: str
    config_id: str = ""
    implementation: str | None = None  # a registered implementation of the op on this backend
    pair_key: str = field(default="", compare=False)

    @property
    def id(self) -> str:
        """Stable across runs: the op, backend, parameters and run settings, nothing else."""
        ident = {
            "op": self.op,
            "backend": self.backend,
            "params": self.params,
            "num_runs": self.run.num_runs,
            "warmup": self.run.warmup,
            **{
                k: v
                for k, v in (
                    ("implementation", self.implementation),
                    ("timer", self.run.timer),
                    ("cache", self.run.cache),
                    ("cadence", None if self.run.cadence == "blocked" else self.run.cadence),
                    ("threads", self.run.threads),
                )
                if v not in (None, "auto")
            },
        }
        return hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[
            :12
        ]

    @property
    def label(self) -> str:
        return "-".join(
            p for p in (self.op, self.backend, shape_label(self.params), self.id[:6]) if p
        )


def _count(value: Any, low: int, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UserError(f"must be an integer >= {low}, got {value!r}", key=key_path(where, key))
    return value


def _seconds(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UserError(f"must be a positive number, got {value!r}", key=key_path(where, key))
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
    "timer": lambda v, where: _choice(v, "timer", where, TIMERS),
    "cache": lambda v, where: _choice(v, "cache", where, CACHE_POLICIES),
    "cadence": lambda v, where: _choice(v, "cadence", where, CADENCES),
    "threads": lambda v, where: _count(v, 1, "threads", where),
}


def run_settings(base: RunSettings, given: dict[str, Any], where: str) -> RunSettings:
    """`base` updated with whichever run settings `given` holds."""
    updates: dict[str, Any] = {
        key: RUN_SETTING_CHECKS[key](given[key], where) for key in RUN_KEYS if key in given
    }
    return replace(base, **updates)


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
