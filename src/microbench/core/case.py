"""A case: one op on one backend with fully resolved parameters, run settings and outputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from microbench.platform.system_presets import HardwareStats

CHECK_MODES = ("strict", "flag", "off")
CACHE_POLICIES = ("cold", "warm")
CADENCES = ("blocked", "sustained")
INPUT_POLICIES = ("fixed", "rotate")
SHAPE_KEYS = ("m", "k", "n")


def shape_label(
    params: Mapping[str, Any], keys: Iterable[str] = SHAPE_KEYS, named: bool = False
) -> str:
    """'1024x512x256' (or 'm=1024xk=512xn=256') from whichever of the shape keys are present."""
    parts = [(k, params[k]) for k in keys if params.get(k) not in (None, "")]
    return "x".join(f"{k}={v}" if named else str(v) for k, v in parts)


@dataclass(frozen=True)
class RunSettings:
    num_runs: int = 20
    warmup: int = 3
    timeout_s: float | None = None
    check: str = "strict"  # strict: a wrong result is not timed; flag: timed but flagged; off
    timer: str = "auto"  # a registered timer; auto picks per backend and platform (docs/method.md)
    cache: str = "cold"  # cold: L2 (or the CPU's last-level cache) flushed before every iteration
    cadence: str = (
        "blocked"  # blocked: each iteration waits for its outputs; sustained: back to back
    )
    threads: int | None = None  # CPU threads for the framework's host ops (None: its default)
    # keep timing until this long has passed, num_runs or not (a power or thermal soak); warm-up then
    # lasts at least min(1 s, min_duration_s / 5), as in the jax-bench harness
    min_duration_s: float = 0.0
    # adaptive stopping: past num_runs (the floor), time in rounds until the median's 95% confidence
    # interval is within +-target_precision of it, or max_runs iterations or max_time_s of timing
    target_precision: float | None = None
    max_runs: int = 10_000
    max_time_s: float = 10.0
    # fixed: one input set, every iteration; rotate: input_sets sets cycled through the iterations
    inputs: str = "fixed"
    input_sets: int = 4
    # jax-bench's columns: the host clock of an untraced, blocked loop, timed besides the device timer
    host_loop: bool = False


@dataclass(frozen=True)
class Outputs:
    csv_path: str
    trace_dir: str | None = None
    xla_dump_dir: str | None = None
    xlml_metrics_dir: str | None = None


@dataclass(frozen=True)
class Origin:
    """A case as the harness whose config named it knows it (the jax-bench dialect): that harness's
    benchmark name and fields, in its order (then this project's own fields), the roofline peaks the
    config gave, the conditions it is measured under and a collective's group size as that harness
    counts it. Its outputs in that harness's format are written from this."""

    benchmark: str
    fields: tuple[tuple[str, Any], ...]
    hardware: HardwareStats | None = None
    conditions: str = "upstream"
    group_size: int = 1


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
    origin: Origin | None = field(default=None, compare=False)
    # environment the case's process must start with (libtpu reads its flags once, at start-up)
    process_env: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # the same case asked for again (a jax-bench file under upstream's conditions runs it again)
    occurrence: int = 0

    @property
    def id(self) -> str:
        """Stable across runs: the op, backend, parameters and run settings, nothing else."""
        optional = (
            ("implementation", self.implementation),
            ("timer", self.run.timer),
            ("cache", self.run.cache),
            ("cadence", None if self.run.cadence == "blocked" else self.run.cadence),
            ("threads", self.run.threads),
            ("min_duration_s", self.run.min_duration_s or None),
            ("target_precision", self.run.target_precision),
            ("occurrence", self.occurrence or None),
            ("host_loop", self.run.host_loop or None),
            *(
                (("inputs", "rotate"), ("input_sets", self.run.input_sets))
                if self.run.inputs == "rotate"
                else ()
            ),
            *(
                (("max_runs", self.run.max_runs), ("max_time_s", self.run.max_time_s))
                if self.run.target_precision is not None
                else ()
            ),
        )
        ident = {
            "op": self.op,
            "backend": self.backend,
            "params": self.params,
            "num_runs": self.run.num_runs,
            "warmup": self.run.warmup,
            **{k: v for k, v in optional if v not in (None, "auto")},
        }
        blob = json.dumps(ident, sort_keys=True, default=str).encode()
        return hashlib.sha1(blob).hexdigest()[:12]

    @property
    def label(self) -> str:
        parts = (self.op, self.backend, shape_label(self.params), self.id[:6])
        return "-".join(p for p in parts if p)
