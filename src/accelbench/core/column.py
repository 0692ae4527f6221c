"""The note a results column declares on its dataclass field, which the README's reference prints:
`x_s: float | None = noted("what the name alone does not say")`."""

from __future__ import annotations

from dataclasses import Field, field
from typing import Any


def doc(text: str) -> dict[str, str]:
    return {"doc": text}


def noted(text: str, default: Any = None) -> Any:
    """A column's field with the note the README's column reference prints beside it."""
    return field(default=default, metadata=doc(text))


def doc_of(f: Field[Any]) -> str:
    return str(f.metadata.get("doc", ""))
