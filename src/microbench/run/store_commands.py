"""The run store's commands: `compare` (two results files, groups of one, or a config's stored runs by
number or label), `runs` (a config's stored runs) and `report` (charts and pages over results files)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources

from microbench.errors import UserError

# Shipped inside the package, so a wheel install runs the default job (configs/quickstart.yaml links here)
QUICKSTART = str(resources.files("microbench") / "configs" / "quickstart.yaml")


def listed(text: str | None) -> tuple[str, ...]:
    """`--columns a,b,c` as names."""
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def compare(args: argparse.Namespace) -> int:
    from microbench.results.compare import run_compare

    config = args.config or QUICKSTART
    named = [_side(ref, config) for ref in args.files]
    sides = [files for files, _ in named]
    selected = len(named) == 2 and named[1][1]  # a candidate run of a selection: its cases only
    if not sides:
        sides, selected = _last_two_runs(config)
    if args.by and not args.files:
        sides = sides[-1:]  # groups of the latest run
    return run_compare(
        sides,
        args.by,
        args.baseline,
        args.threshold,
        args.json or args.output_format == "json",
        selected,
        sort=args.sort,
        output_format=args.output_format,
    )


def _series(config: str) -> list[str]:
    """The results files a config's runs are numbered after."""
    from microbench.run.planning import plan_from_file

    return sorted({c.outputs.csv_path for c in plan_from_file(config)})


def _side(ref: str, config: str) -> tuple[list[str], bool]:
    """A results file, or a stored run of the config by its number or --name; and whether it is a
    run of a selection of the config's cases."""
    if os.path.exists(ref) or ref.lower().endswith((".csv", ".jsonl")) or os.sep in ref:
        from microbench.results.reading import expand_results

        return expand_results([ref], "compare"), False  # a folder or pattern: a run's files
    from microbench.results.run_store import find_run, stored_runs

    series = _series(config)
    found = find_run(series, ref)
    if found is None:
        known = ", ".join(
            f"{r.number}" + (f" '{r.name}'" if r.name else "") for r in stored_runs(series)
        )
        raise UserError(
            f"names no results file and no run of {config} (its runs: {known or 'none yet'})",
            key=f"compare '{ref}'",
        )
    return list(found.files), found.selected


def _last_two_runs(config: str) -> tuple[list[list[str]], bool]:
    """The files of a config's two latest runs (the run store numbers them), older first, and whether
    the latest ran a selection of the cases (--only/--skip): compare then keeps to its cases, so a
    filtered run never reads as the loss of the cases it left out."""
    from microbench.results.run_store import stored_runs

    runs = stored_runs(_series(config))
    if len(runs) < 2:
        raise UserError(
            "fewer than two runs of this config; run it again, or name two results files or runs",
            file=config,
        )
    older, newer = runs[-2:]
    if newer.selected:
        print(
            f"run {newer.number} ran a selection of the cases ({newer.selection}): compared with run "
            f"{older.number} on its cases only",
            file=sys.stderr,
        )
    return [list(older.files), list(newer.files)], newer.selected


def runs(args: argparse.Namespace) -> int:
    """The stored runs of a config: number, label, when, commit, host, rows, selection."""
    from dataclasses import asdict

    from rich.table import Table

    from microbench.results.console import shown, table_console
    from microbench.results.run_store import stored_runs

    config = args.config or QUICKSTART
    runs = stored_runs(_series(config))
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
        return 0
    if not runs:
        print(f"no stored run of {config} yet")
        return 0
    table = Table(title=shown(f"runs of {config}"))
    for column in ("run", "name", "started", "commit", "host", "rows", "selection", "files"):
        table.add_column(column)
    for r in runs:
        table.add_row(
            str(r.number),
            shown(r.name or ""),
            shown(r.started or ""),
            shown((r.commit or "")[:10]),
            shown(r.host or ""),
            str(r.rows),
            shown(r.selection or ""),
            shown(", ".join(r.files)),
        )
    table_console().print(table)
    return 0


def report(args: argparse.Namespace) -> int:
    from microbench.results.reading import check_readable, expand_results

    paths = expand_results(args.results, "report")
    for path in paths:  # before the plotting libraries load: a bad path answers at once
        check_readable(path)
    from microbench.results.report import run_report

    run_report(paths, args.output_dir, listed(args.columns), args.sort)
    return 0
