"""Input sets for `inputs: rotate` (every backend's array path): sets from consecutive seeds, cycled
through the iterations so no cache (the L2, a memoised result) serves one from the one before; each
set is checked against its own float64 reference before anything is timed."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from accelbench.catalogue import OpSpec
from accelbench.core.case import Case
from accelbench.errors import unsupported

Host = dict[str, np.ndarray]


def host_sets(spec: OpSpec, case: Case) -> list[Host]:
    """The case's input sets as host arrays: one (from `seed`), or `input_sets` from seed, seed + 1..."""
    assert spec.make_inputs is not None
    seed = case.params.placement.seed
    count = case.run.input_sets if case.run.inputs == "rotate" else 1
    if count > 1 and spec.traits.donated_input:
        raise unsupported("inputs: rotate: this op feeds each iteration's output to the next")
    return [spec.make_inputs(case.params, np.random.default_rng(seed + i)) for i in range(count)]


class Rotation:
    """The placed sets, and the next one an iteration takes (`next()`: from the first, cycling)."""

    def __init__(self, sets: list[Any]) -> None:
        self.sets = sets
        self.next: Callable[[], Any] = itertools.cycle(sets).__next__


def check_every_set(
    hosts: list[Host],
    rotation: Rotation,
    run: Callable[[Any], Any],
    sync: Callable[[Any], None],
    check_one: Callable[[Host, Any], float | None],
) -> Callable[[Any], float | None]:
    """A check of the first call's outputs (set 0) that then runs and checks each other set."""

    def check(out: Any) -> float | None:
        errors = [check_one(hosts[0], out)]
        for host, args in zip(hosts[1:], rotation.sets[1:], strict=True):
            other = run(args)
            sync(other)
            errors.append(check_one(host, other))
            del other
        known = [e for e in errors if e is not None]
        return max(known) if known else None

    return check
