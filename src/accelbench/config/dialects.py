"""The config dialects' registry: what each dialect is to the rest of the program, declared once by its
package under `accelbench/dialects/`; its heavy parts `Lazy("module:attribute")`, which the command
line's help loads none of."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from accelbench.core.flags import Flag
from accelbench.errors import UserError
from accelbench.plugins import SINK_MODULES, discover_dialects
from accelbench.registry import register_once

DEFAULT_MAX_CASES = 5000
Data = dict[str, Any]  # a config file's top level


class Lazy:
    """A "module:attribute", imported on first use; it calls and answers attributes as that does."""

    def __init__(self, ref: str) -> None:
        self.ref = ref

    @functools.cached_property
    def target(self) -> Any:
        module, _, name = self.ref.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.target(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


def resolved(value: Any) -> Any:
    return value.target if isinstance(value, Lazy) else value


@dataclass(frozen=True)
class Command:
    """A dialect's own command line: `microbench NAME ARGS` runs `module.main(ARGS) -> exit code`."""

    name: str
    module: str
    summary: str

    def main(self, argv: Sequence[str]) -> int:
        return int(importlib.import_module(self.module).main(list(argv)))


@dataclass(frozen=True)
class Listing:
    """`microbench list --OPTION`: the dialect's names as records (dataclasses with a `name`, for
    `--json`) or a table of `columns` (on the console and between the markers of `doc_page`)."""

    option: str
    help: str
    records: Callable[[], list[Any]] | Lazy
    title: str
    columns: tuple[str, ...]
    cells: Callable[[Any], tuple[str, ...]] | Lazy
    doc_page: str = ""  # from the repository root: docs/<dialect>.md

    def rows(self) -> list[tuple[str, ...]]:
        return [self.cells(r) for r in self.records()]


@dataclass(frozen=True)
class OneOff:
    """`run --run NAME --field value`: NAME's fields (None: not the dialect's), and its cases."""

    fields: Callable[[str], tuple[Any, ...] | None] | Lazy  # the op's or benchmark's Params
    plan: Callable[[str, Any, Any], list[Any]] | Lazy  # (name, its Point, a PlanRequest) -> cases


@dataclass(frozen=True)
class RunAlias:
    """A subcommand that is `run --config FILE` with a dialect flag required under another spelling."""

    name: str
    summary: str
    example: str
    flag: Flag[Any]
    option: str


@dataclass(frozen=True)
class Dialect:
    name: str
    schema: Any  # its files' pydantic model (a Lazy naming it)
    recognise: Callable[[Data], bool]  # is this file written in the dialect?
    plan: Callable[[Any, Any], list[Any]] | Lazy  # (its model, a PlanRequest) -> cases
    order: int  # asked in this order whether a file is theirs
    # renames keys of the dialect's earlier versions: (upgraded data, one warning per key)
    upgrade: Callable[[Data], tuple[Data, list[str]]] | Lazy = lambda data: (data, [])
    looks_like: str = ""  # what a file of this dialect has, for the error when none recognises it
    flags: tuple[Flag[Any], ...] = ()  # `microbench run` flags it reads: refused for other files
    sink_flags: tuple[Flag[Any], ...] = ()  # flags its output formats read (any run may give them)
    sinks: tuple[str, ...] = ()  # modules of the output formats it brings
    command: Command | None = None
    listing: Listing | None = None
    one_off: OneOff | None = None
    aliases: tuple[RunAlias, ...] = ()
    # its own name tables (scoped by tests with the rest)
    registries: Callable[[], tuple[dict[Any, Any], ...]] | Lazy = tuple
    # a file of the dialect's family that is not a config (a suite file): the line that says so
    explains: Callable[[Data], str | None] = lambda data: None
    # a case's benchmark and fields in the dialect's own names (`validate --json`); None: its op's
    case_fields: Callable[[Any], tuple[str, dict[str, Any]]] | Lazy | None = None

    @property
    def title(self) -> str:  # as its users spell it (jax-bench)
        return self.name.replace("_", "-")


DIALECTS: dict[str, Dialect] = {}


def register_dialect(dialect: Dialect) -> Dialect:
    SINK_MODULES.extend(m for m in dialect.sinks if m not in SINK_MODULES)
    return register_once(DIALECTS, dialect.name, dialect, "dialect")


def dialects() -> list[Dialect]:
    """Every registered dialect, in the order files are matched."""
    discover_dialects()
    return sorted(DIALECTS.values(), key=lambda d: d.order)


def dialect_flags() -> list[Flag[Any]]:
    seen: dict[str, Flag[Any]] = {}
    for dialect in dialects():
        for flag in dialect.flags:
            seen.setdefault(flag.dest, flag)
    return list(seen.values())


def get_dialect(name: str) -> Dialect:
    discover_dialects()
    return DIALECTS[name]


def detect_dialect(data: Data) -> Dialect:
    known = dialects()
    for dialect in known:
        if dialect.recognise(data):
            return dialect
    for dialect in known:
        if said := dialect.explains(data):
            raise UserError(said, key="(top level)")
    keys = ", ".join(map(str, data)) or "nothing"
    expected = ", ".join(d.looks_like for d in known)
    raise UserError(f"not a benchmark config: expected {expected}; found {keys}", key="(top level)")
