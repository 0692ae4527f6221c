"""From a loaded config and the run's options to the list of cases: the dialect's planner, then every
command-line override, then one case per id."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path

from accelbench.catalogue import get_spec
from accelbench.config.cases import lacking
from accelbench.config.dialects import DEFAULT_MAX_CASES, dialect_flags, dialects, get_dialect
from accelbench.config.loader import LoadedConfig
from accelbench.config.settings import PlanRequest
from accelbench.core.case import Case
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, counted, visible
from accelbench.names import check_path_text, portable_name
from accelbench.results.remote import DIR_FIELDS, is_url


def default_csv(path: str, output_dir: str) -> str:
    """Where rows go when the config names no file: <output_dir>/<config stem, made portable>.csv."""
    return os.path.join(output_dir, f"{portable_name(Path(path).stem)}.csv")


def _overridden(cases: list[Case], options: RunOptions, path: str) -> list[Case]:
    given = dict(options.settings) | ({"num_runs": options.num_runs} if options.num_runs else {})
    if given:
        cases = [dataclasses.replace(c, run=dataclasses.replace(c.run, **given)) for c in cases]
    if options.output:
        named = sorted(
            {c.outputs.csv_path for c in cases} - {default_csv(path, options.output_dir)}
        )
        if named:
            print(
                visible(
                    f"note: --output {options.output} takes every row; the config's result files "
                    f"({', '.join(named)}) are not written"
                ),
                file=sys.stderr,
            )
        cases = [
            dataclasses.replace(c, outputs=dataclasses.replace(c.outputs, csv_path=options.output))
            for c in cases
        ]
    return cases


def select(
    cases: list[Case], only: tuple[str, ...], skip: tuple[str, ...], path: str
) -> list[Case]:
    """--only / --skip: shell patterns matched against each case's op and label."""

    def matches(case: Case, patterns: tuple[str, ...]) -> bool:
        return any(fnmatch(case.op, p) or fnmatch(case.label, p) for p in patterns)

    kept = [c for c in cases if (not only or matches(c, only)) and not matches(c, skip)]
    if not kept:
        raise UserError(
            f"--only {list(only)} / --skip {list(skip)} leave none of {counted(len(cases), 'case')}",
            file=path,
            key="(command line)",
        )
    return kept


def _destinations(case: Case, config: str) -> tuple[str, ...]:
    """Where a case's rows, traces and records go, each checked as text and spelled one way."""
    out = []
    for name in ("csv_path", *DIR_FIELDS):
        value = getattr(case.outputs, name)
        if value and not is_url(value):
            try:
                check_path_text(value, name)
            except UserError as error:
                raise error.with_file(config) from None
            value = os.path.normpath(os.path.abspath(value))
        out.append(value or "")
    return tuple(out)


def plan(
    loaded: LoadedConfig, options: RunOptions, device_count: Callable[[], int] | None = None
) -> list[Case]:
    """All cases of a validated config, in config order (`device_count`: asked only where needed)."""
    model = loaded.model
    request = PlanRequest(
        config_id=loaded.config_id,
        default_csv=default_csv(loaded.path, options.output_dir),
        max_cases=options.max_cases or getattr(model, "max_cases", None) or DEFAULT_MAX_CASES,
        max_dim=options.max_dim,
        config_dir=os.path.dirname(os.path.abspath(loaded.path)),
        backend=list(options.backend) if options.backend else None,
        device_count=device_count or (lambda: 1),
        flags=options.flags,
    )
    dialect = get_dialect(loaded.dialect)
    for flag in dialect_flags():  # another dialect's flag: said, not ignored
        if flag.dest in options.flags and flag not in dialect.flags:
            takers = [d.title for d in dialects() if flag in d.flags]
            raise UserError(
                f"{flag.option} applies to {' and '.join(takers)} configs; {loaded.path} is in "
                f"the {dialect.title} dialect",
                key=flag.option,
            )
    try:
        cases = loaded.one_off(request) if loaded.one_off else dialect.plan(model, request)
    except UserError as error:
        raise loaded.located(error) from None
    for warning in dict.fromkeys(request.warnings):
        print(visible(f"warning: {loaded.path}: {warning}"), file=sys.stderr)
    if not cases:
        raise UserError(
            "the config expands to zero cases (an empty range or list?)",
            file=loaded.path,
            key="(top level)",
        )
    cases = _overridden(cases, options, loaded.path)
    # a case named twice (two entries, one point; or two points --max-dim made one) runs once per
    # output it goes to: each file has its rows
    unique: dict[tuple[str, tuple[str, ...]], Case] = {}
    for case in cases:
        unique.setdefault((case.id, _destinations(case, loaded.path)), case)
    if (distinct := len(unique)) < len(cases):
        why = f"after --max-dim {options.max_dim} " if options.max_dim else ""
        print(
            f"note: {len(cases) - distinct} of {len(cases)} cases are the same as another {why}and "
            f"run once ({distinct} distinct)",
            file=sys.stderr,
        )
    kept = select(list(unique.values()), options.only, options.skip, loaded.path)
    for case in kept:  # --backend, given for every benchmark, on those --only/--skip kept
        spec = get_spec(case.op)
        if case.backend not in spec.backends:
            raise UserError(lacking(spec, case.backend), file=loaded.path, key="--backend")
    return kept
