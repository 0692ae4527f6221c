"""Everything a `run` was asked on the command line, as one frozen object: the planner, the session
and every output sink read it, instead of keyword arguments threaded through calls."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from accelbench.core.flags import Flag, FlagValues

T = TypeVar("T")


@dataclass(frozen=True)
class RunOptions:
    output_dir: str = "results"  # where rows go when the config names no csv_path
    output_dir_given: bool = False  # said on the command line (a config's csv_path still wins)
    output: str | None = None  # -o FILE: every row to this one CSV
    resume: bool = False
    overwrite: bool = False
    max_cases: int | None = None
    max_dim: int | None = None  # every dimension clamped to this
    num_runs: int | None = None  # every case's num_runs
    settings: tuple[tuple[str, Any], ...] = ()  # run settings every case takes (--audit strict)
    columns: tuple[str, ...] = ()  # --columns: the summary's columns (results/display keys)
    sort: str | None = None  # --sort: the summary's order (a column key, `-key` descending)
    output_format: str = "table"  # --format: the summary as a table, csv, json or markdown
    backend: tuple[str, ...] = ()  # --backend: every benchmark on these backends
    name: str | None = None  # --name: the run's label in the run store (`microbench runs`, compare)
    one_off: tuple[str, ...] = ()  # --run NAME --field value ...: (NAME, the field arguments)
    only: tuple[str, ...] = ()  # shell patterns of ops or labels to run
    skip: tuple[str, ...] = ()
    isolate: bool = False  # each case in its own process
    timeout_s: float | None = None
    progress: bool = True
    verbosity: int = 0  # -1 quiet, 0 normal, 1 a line per case (-v), 2 the frameworks' logs too
    # the flags dialects and output formats declare (core/flags.py), by name
    flags: FlagValues = field(default_factory=FlagValues)

    def flag(self, flag: Flag[T]) -> T:
        return self.flags.get(flag.dest, flag.default)

    def with_flags(self, **values: Any) -> RunOptions:
        """The same options with these flags set (a command line of a dialect's own)."""
        return replace(self, flags=FlagValues({**self.flags, **values}))
