"""The TPU flags upstream's op_flags.yaml gives each benchmark: libtpu reads them once, when its
process starts, so a case carries them as its process's environment (`process_env`)."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from accelbench.benchmarks.base import TPUMS, V2, Benchmark, Upstream
from accelbench.core.case import Case
from accelbench.errors import UserError, visible


@dataclass(frozen=True)
class FlagSet:
    flags: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def process_env(self) -> tuple[tuple[str, str], ...]:
        return (("LIBTPU_INIT_ARGS", " ".join(self.flags)), *sorted(self.env.items()))


PACKAGED = os.path.join(os.path.dirname(__file__), "op_flags.yaml")  # upstream's form, its names


@functools.cache
def packaged() -> dict[str, FlagSet]:
    """The flag sets this project ships, keyed as upstream's file is."""
    return flag_sets(PACKAGED, shipped=True)


def process_env(benchmark: Benchmark[Any]) -> tuple[tuple[str, str], ...]:
    """The environment a benchmark's process starts with on a TPU host (a name op_flags.yaml lacks:
    the environment as it is)."""
    found = packaged().get(benchmark.flags or benchmark.name)
    return found.process_env() if found else ()


def flag_sets(path: str, shipped: bool = False) -> dict[str, FlagSet]:
    """--xla_flags_file_path: per benchmark name, flags or `{flags: [...], env: {...}}` (both of
    upstream's forms), replacing the packaged sets; a name no benchmark has is said."""
    from accelbench.config.yaml_reader import read_yaml

    data = read_yaml(path)
    if not isinstance(data, dict):
        raise UserError("must be a YAML mapping of benchmark name to flags", key=path)
    out = {}
    for name, entry in data.items():
        out[str(name)] = _flag_set(entry, f"{path}: {name}")
        if not shipped and str(name) not in (*TPUMS, *V2, *packaged()):
            print(
                visible(f"warning: {path}: {name}: names no benchmark: its flags are never used"),
                file=sys.stderr,
            )
    return out


def _flag_set(entry: Any, where: str) -> FlagSet:
    if isinstance(entry, dict):
        if extra := sorted(set(entry) - {"flags", "env"}):
            raise UserError(f"{extra[0]}: an entry holds flags and env only", key=where)
        flags, env = entry.get("flags") or [], entry.get("env") or {}
    else:
        flags, env = entry, {}
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise UserError("flags must be a list of strings", key=where)
    if not isinstance(env, dict):
        raise UserError("env must be a mapping", key=where)
    for key, value in env.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            kind = type(value).__name__
            raise UserError(f"env {key}: must be a string or a number, got a {kind}", key=where)
    return FlagSet(tuple(flags), {str(k): str(v) for k, v in env.items()})


def with_flags(cases: list[Case], sets: dict[str, FlagSet]) -> list[Case]:
    """Each case's TPU flags from the file, by its TPUMS name, else its jax-bench one, else none."""
    out = []
    for case in cases:
        origin = case.origin
        names = (origin.name, origin.benchmark.name) if isinstance(origin, Upstream) else ()
        chosen = next((sets[n] for n in names if n in sets), None)
        out.append(replace(case, process_env=chosen.process_env() if chosen else ()))
    return out
