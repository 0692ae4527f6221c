"""The CSV column order, generated from the typed row (results.records) so every backend's rows line up."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields

from microbench.results.records import BODY_GROUPS, HEAD_GROUPS, TAIL_GROUPS, group_columns

IDENTITY = group_columns(HEAD_GROUPS)
STATS = group_columns(BODY_GROUPS[:1])
BODY = group_columns(BODY_GROUPS)
ENVIRONMENT = group_columns(TAIL_GROUPS)


def extras_columns(extras: Iterable[type | None]) -> list[str]:
    return [f.name for cls in extras if cls is not None for f in fields(cls)]


def header(param_names: Iterable[str], extras: Iterable[type | None] = ()) -> list[str]:
    """Stable ordered union: identity, params, statistics, timing, derived, roofline, pairing, extras,
    environment."""
    ordered: list[str] = []
    for name in (*IDENTITY, *param_names, *BODY, *extras_columns(extras), *ENVIRONMENT):
        if name not in ordered:
            ordered.append(name)
    return ordered
