"""A command-line flag that a dialect or an output format owns, declared once as typed data: command
lines are assembled from them, and the owner reads its value back typed (`RunOptions.flag(FLAG)`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Flag(Generic[T]):
    option: str  # "--hw"
    help: str
    default: T
    aliases: tuple[str, ...] = ()  # other spellings ("--xprof-dir")
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    switch: bool = False  # a flag without a value (store_true)
    parse: Callable[[str], Any] | None = None  # the value's type (argparse's `type`)
    # the `microbench` subcommands that take it; () for one only its owner's own command line sets
    commands: tuple[str, ...] = ("run",)

    @property
    def dest(self) -> str:
        return self.option.lstrip("-").replace("-", "_")

    def add_to(self, parser: Any) -> None:
        how: dict[str, Any] = {"action": "store_true"}
        if not self.switch:
            how = {"choices": self.choices, "metavar": self.metavar, "type": self.parse}
        parser.add_argument(self.option, *self.aliases, dest=self.dest, help=self.help, **how)


class FlagValues(dict[str, Any]):
    """The declared flags' values of one run, by `dest`; a flag not given reads as its default."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        super().__init__({k: v for k, v in (values or {}).items() if v not in (None, False)})
