"""The run store's commands: `compare`, `ab`, `runs` and `report`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from accelbench.errors import UserError

# Shipped inside the package, so a wheel install runs the default job (configs/quickstart.yaml links here)
QUICKSTART = os.path.join(os.path.dirname(os.path.dirname(__file__)), "configs", "quickstart.yaml")


def listed(text: str | None) -> tuple[str, ...]:  # `--columns a,b,c` as names
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def compare(args: argparse.Namespace) -> int:
    from accelbench.results.compare import run_compare

    view = _view(args)
    refs = args.files
    if args.baseline and not args.by:  # the baseline named apart: a file, URL, run, label or latest
        refs = [args.baseline, *refs]
    named = [_side(ref, view, args, refs[-1]) for ref in refs]
    sides = [files for files, _ in named]
    selected = len(named) == 2 and named[1][1]  # a candidate run of a selection: its cases only
    if not sides:
        sides, selected = _last_two_runs(view, args)
    if args.by and not args.files:
        sides = sides[-1:]  # groups of the latest run
    return run_compare(
        sides,
        args.by,
        args.baseline if args.by else None,
        args.threshold,
        "json" if args.json else args.output_format,
        selected,
        args.sort,
        listed(args.fail_inconclusive),
    )


def ab(args: argparse.Namespace) -> int:
    from accelbench.run.ab import run_ab

    return run_ab(args)


def _series(config: str) -> list[str]:  # the results files a config's runs are numbered after
    from accelbench.run.planning import plan_from_file

    return sorted({c.outputs.csv_path for c in plan_from_file(config)})


def _view(args: argparse.Namespace) -> list[Any]:
    """The config's stored runs, else every run under --results-dir, oldest first."""
    from accelbench.results.remote import local
    from accelbench.results.run_store import runs_under, stored_runs

    if args.config:
        return stored_runs(_series(args.config), args.config)
    return runs_under(local(args.results_dir, "--results-dir"))


def _latest_series(view: list[Any]) -> list[Any]:  # what the user ran last
    last = view[-1]
    return [r for r in view if r.series == last.series and r.source == last.source]


def _side(
    ref: str, view: list[Any], args: argparse.Namespace, candidate: str
) -> tuple[list[str], bool]:
    """A results file, or a stored run by --name, number (of the latest series) or `latest` (of the
    candidate's series); and whether it ran a selection of cases."""
    from accelbench.results.remote import is_url, local
    from accelbench.results.run_store import find_run

    if (
        is_url(ref)
        or os.path.exists(ref)
        or ref.lower().endswith((".csv", ".jsonl"))
        or os.sep in ref
    ):
        from accelbench.results.reading import expand_results

        return expand_results([local(ref, "compare")], "compare"), False  # a folder: a run's files
    numbered = ref.isascii() and ref.isdigit()
    if ref == "latest" and candidate.lower().endswith(".csv"):  # of the candidate's series
        view = [r for r in view if _series_name(r.series) == _series_name(candidate)]
    found = find_run(_latest_series(view) if numbered and view else view, ref)
    if found is None:
        where = args.config or f"the runs under {args.results_dir}"
        shown = _latest_series(view)[-20:] if view else []
        known = ", ".join(f"{r.number}" + (f" '{r.name}'" if r.name else "") for r in shown)
        raise UserError(
            f"names no results file and no run of {where} (its runs: {known or 'none yet'}; "
            "`microbench runs` lists every one)",
            key=f"compare '{ref}'",
        )
    return list(found.files), found.selected


def _series_name(path: str) -> str:
    from accelbench.results.run_store import series_of

    return os.path.basename(series_of(path))


def _last_two_runs(view: list[Any], args: argparse.Namespace) -> tuple[list[list[str]], bool]:
    """The two latest runs' files, older first, and whether the latest ran a selection (--only):
    compared on its cases, a filtered run never reads as the loss of those it left out."""
    runs = _latest_series(view) if view else []
    if len(runs) < 2:
        elsewhere = "" if args.config else "; a config that writes elsewhere: name it (--config)"
        raise UserError(
            "fewer than two runs to compare; run it again, or name two results files or runs"
            + elsewhere,
            file=args.config or args.results_dir,
        )
    older, newer = runs[-2:]
    if newer.selected:
        print(
            f"run {newer.number} ran a selection of the cases ({newer.selection}): compared with run "
            f"{older.number} on its cases only",
            file=sys.stderr,
        )
    return [list(older.files), list(newer.files)], newer.selected


TABLE_RUNS = 100


def runs(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from accelbench.run.listing import print_table

    runs = _view(args)
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
        return 0
    where = args.config or args.results_dir
    if not runs:
        print(f"no stored run of {where} yet")
        return 0
    if len(runs) > TABLE_RUNS:  # a table of thousands is read by no one (and takes seconds to draw)
        print(f"the latest {TABLE_RUNS} of {len(runs)} runs (runs --json lists every one)")
        runs = runs[-TABLE_RUNS:]
    columns = (
        *("run", "name", "config or one-off", "started", "tested commit", "harness commit"),
        *("host", "rows", "selection", "files"),
    )
    cells = [
        (str(r.number), r.name or "", r.source, r.started or "", (r.tested or "")[:12])
        + ((r.commit or "")[:12], r.host or "", str(r.rows), str(r.selection or ""))
        + (", ".join(r.files),)
        for r in runs
    ]
    print_table(f"runs of {where}", columns, cells)
    return 0


def report(args: argparse.Namespace) -> int:
    from accelbench.results.reading import check_readable, expand_results

    paths = expand_results(args.results, "report")
    for path in paths:  # before the plotting libraries load: a bad path answers at once
        check_readable(path)
    from accelbench.results.report import run_report

    run_report(paths, args.output_dir, listed(args.columns), args.sort, args.sample_charts)
    return 0
