"""What every dialect's planner does last: one case of an op per backend and implementation."""

from __future__ import annotations

from typing import Any

from accelbench.catalogue import OpSpec, implementations
from accelbench.config.settings import pair_key
from accelbench.core.case import Case
from accelbench.errors import UserError, did_you_mean, key_path


def implementations_to_run(
    spec: OpSpec, backend: str, requested: str | list[str] | None, where: str
) -> list[str | None]:
    """The requested implementations of the op on the backend, else its defaults (else all)."""
    registered = list(implementations(spec.name, backend))
    if not registered:  # --backend on an op without it: the planner refuses it if --only keeps it
        return [None]
    if requested is None:
        defaults = [n for n in spec.traits.default_implementations if n in registered]
        return list(defaults or registered)
    names = [requested] if isinstance(requested, str) else list(requested)
    chosen = [n for n in names if n in registered]
    if chosen:
        return list(chosen)
    if len(registered) == 1:  # one way to run it (JAX's jit): the names were another backend's
        return list(registered)
    raise UserError(
        f"op '{spec.name}' has no {backend} implementation '{names[0]}' (registered: {', '.join(registered)})",
        key=key_path(where, "implementation"),
        suggestion=did_you_mean(names[0], registered),
    )


def lacking(spec: OpSpec, backend: str) -> str:
    return f"op '{spec.name}' has no {backend} implementation (implemented in: {', '.join(spec.backends)})"


def within_cap(count: int, cap: int, where: str, hint: str = " or 'max_cases:'") -> None:
    """A config past its case cap is refused where it went past, before it runs."""
    if count > cap:
        raise UserError(
            f"the config expands to more than {cap} cases; raise the cap with --max-cases{hint} if "
            "this is intended",
            key=where,
        )


def cases_per_implementation(
    spec: OpSpec, backends: list[str], requested: str | list[str] | None, where: str, **fields: Any
) -> list[Case]:
    """One case of the op per backend and implementation, sharing the other fields."""
    return [
        Case(
            op=spec.name,
            backend=backend,
            implementation=impl,
            pair_key=pair_key(spec.name, fields["params"]),
            **fields,
        )
        for backend in backends
        for impl in implementations_to_run(spec, backend, requested, where)
    ]
