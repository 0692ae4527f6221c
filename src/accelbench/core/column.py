"""The note a results column declares on its dataclass field, which the README's reference prints:
`x_s: float | None = field(default=None, metadata=doc("what the name alone does not say"))`."""

from __future__ import annotations

from dataclasses import Field
from typing import Any


def doc(text: str) -> dict[str, str]:
    return {"doc": text}


def doc_of(f: Field[Any]) -> str:
    return str(f.metadata.get("doc", ""))
