"""A case: one op on one backend with fully resolved parameters, run settings and outputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CHECK_MODES = ("strict", "flag", "off")
CACHE_POLICIES = ("cold", "warm")
CADENCES = ("blocked", "sustained")
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
        optional = (
            ("implementation", self.implementation),
            ("timer", self.run.timer),
            ("cache", self.run.cache),
            ("cadence", None if self.run.cadence == "blocked" else self.run.cadence),
            ("threads", self.run.threads),
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
