"""What every registry of the program does when a name is registered: keeps it, once."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def register_once(table: dict[str, T], name: str, item: T, what: str) -> T:
    """`item` under `name`; a second registration of a name is a bug, refused loudly."""
    if name in table:
        raise ValueError(f"{what} {name!r} registered twice")
    table[name] = item
    return item
