"""The run store's commands: `compare`, `ab`, `runs`, `report`, `history` (each case over the stored
runs in commit order, its steps; `--bisect`) and `publish` (a stored run into a bucket, for `compare
--baseline latest` and `history`)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from typing import Any

from accelbench.errors import UserError, did_you_mean, visible

# Shipped inside the package, so a wheel install runs the default job (configs/quickstart.yaml links here)
QUICKSTART = os.path.join(os.path.dirname(os.path.dirname(__file__)), "configs", "quickstart.yaml")


def listed(text: str | None) -> tuple[str, ...]:  # `--columns a,b,c` as names
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def compare(args: argparse.Namespace) -> int:
    from accelbench.results.compare import run_compare
    from accelbench.results.verdict import REASON_WORDS

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
    baseline = args.baseline if args.by else None
    shown = "json" if args.json else args.output_format
    failing = listed(args.fail_inconclusive)
    if args.fail_inconclusive is not None and not failing:  # an empty CI variable: no gate either
        raise UserError("names no reason (give all or some of them)", key="--fail-inconclusive")
    if unknown := next((w for w in failing if w not in REASON_WORDS), None):  # a typo: no gate
        raise UserError(
            f"'{unknown}' is no reason's word (one of {', '.join(REASON_WORDS)})",
            key="--fail-inconclusive",
            suggestion=did_you_mean(unknown, REASON_WORDS),
        )
    return run_compare(
        sides, args.by, baseline, args.threshold, shown, selected, args.sort, failing
    )


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


def _latest_series(view: list[Any]) -> list[Any]:  # what the user ran last (nothing, of no run)
    return [r for r in view if (r.series, r.source) == (view[-1].series, view[-1].source)]


def _side(
    ref: str, view: list[Any], args: argparse.Namespace, candidate: str
) -> tuple[list[str], bool]:
    """A results file, or a stored run by --name, number (of the config's series, else of the latest
    run's) or `latest` (of the candidate's series); and whether it ran a selection of cases."""
    from accelbench.results.remote import is_url, local
    from accelbench.results.run_store import find_run, series_of

    path_like = ref.lower().endswith((".csv", ".jsonl")) or os.sep in ref
    if is_url(ref) or os.path.exists(ref) or path_like:
        from accelbench.results.reading import expand_results

        return expand_results([local(ref, "compare")], "compare"), False  # a folder: a run's files
    numbered = ref.isascii() and ref.isdigit()
    if ref == "latest" and candidate.lower().endswith(".csv"):  # of the candidate's series
        name = os.path.basename(series_of(candidate))
        view = [r for r in view if os.path.basename(series_of(r.series)) == name]
    found = find_run(_latest_series(view) if numbered else view, ref)
    if found is None:
        where = args.config or f"the runs under {args.results_dir}"
        shown = _latest_series(view)[-20:]
        known = ", ".join(f"{r.number}" + (f" '{r.name}'" if r.name else "") for r in shown)
        raise UserError(
            f"names no results file and no run of {where} (its runs: {known or 'none yet'}; "
            "`microbench runs` lists every one)",
            key=f"compare '{ref}'",
        )
    return found.files, bool(found.selection)


def _last_two_runs(view: list[Any], args: argparse.Namespace) -> tuple[list[list[str]], bool]:
    """The two latest runs' files, older first, and whether the latest ran a selection (--only):
    compared on its cases, a filtered run never reads as the loss of those it left out."""
    runs = _latest_series(view)
    if len(runs) < 2:
        elsewhere = "" if args.config else "; a config that writes elsewhere: name it (--config)"
        raise UserError(
            "fewer than two runs to compare; run it again, or name two results files or runs"
            + elsewhere,
            file=args.config or args.results_dir,
        )
    older, newer = runs[-2:]
    if newer.selection:
        print(
            f"run {newer.number} ran a selection of the cases ({newer.selection}): compared with run "
            f"{older.number} on its cases only",
            file=sys.stderr,
        )
    return [older.files, newer.files], bool(newer.selection)


TABLE_RUNS = 100


def runs(args: argparse.Namespace) -> int:
    from accelbench.run.listing import print_table

    runs = _view(args)
    if args.json:
        print(json.dumps([r.as_json() for r in runs], indent=2))
        return 0
    where = args.config or args.results_dir
    if not runs:
        print(visible(f"no stored run of {where} yet"))
        return 0
    if len(runs) > TABLE_RUNS:  # a table of thousands is read by no one (and takes seconds to draw)
        print(f"the latest {TABLE_RUNS} of {len(runs)} runs (runs --json lists every one)")
        runs = runs[-TABLE_RUNS:]
    columns = (
        *("run", "name", "config or one-off", "started", "tested commit", "harness commit"),
        *("host", "rows", "selection", "files"),
    )
    cells = [
        (str(r.number), r.name or "", r.source, r.started or "", (r.code.commit or "")[:12])
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


def history(args: argparse.Namespace) -> int:
    from accelbench.results import history as h

    if args.since and not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", args.since):
        raise UserError(
            f"is a date, YYYY-MM-DD (or YYYY-MM, YYYY), not {args.since!r}", key="--since"
        )
    found = [x for x in h.histories(_view(args), args.case, args.since) if x.points]
    if not found:
        raise UserError(
            "no case has a point (no stored run, or none matches)",
            key=args.config or args.results_dir,
        )
    if args.output_format != "table":
        print(h.as_text(found, args.output_format), end="")
    else:
        from accelbench.run.listing import print_table

        title = "history (median per run, in commit order; steps: size, 95% interval, commits)"
        print_table(title, h.HEAD, h.table_rows(found))
    if args.bisect:
        for x in found:
            for step in x.steps:
                print("\n".join(map(visible, bisect_lines(x, step, args.repo))))
    return 0


def commits_between(repo: str, good: str, bad: str) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", repo, "rev-list", "--reverse", "--ancestry-path", "--abbrev-commit",
             "--abbrev=12", f"{good}..{bad}"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        raise UserError(f"git could not list the commits: {error}", key="--repo") from None
    if out.returncode:
        said = (out.stderr.strip().splitlines() or ["not a git checkout"])[0]
        raise UserError(f"git could not list {good}..{bad}: {said}", key=f"--repo '{repo}'")
    return out.stdout.split()


def bisect_lines(history: Any, step: Any, repo: str) -> list[str]:
    """A step's commits, each with its `ab` against the commit before the step (the middle first)."""
    before, after = history.around(step)
    head = f"{history.case}: {step.ratio - 1:+.1%} between {before.commit or '?'} and {after.commit or '?'}"
    if not (before.commit and after.commit) or before.commit == after.commit:
        return [head, "  the same commit on both sides: not the code (see each point's conditions)"]
    inside = commits_between(repo, before.commit, after.commit)
    # ab runs a config in a worktree of each ref; a one-off or bench() run names none
    config = history.config if os.path.isfile(history.config) else "CONFIG"
    lines = [f"{head}: {len(inside)} commit(s); start with the middle one (*)"]
    for i, commit in enumerate(inside):
        mark = "*" if i == (len(inside) - 1) // 2 else " "
        lines.append(f" {mark} {commit}: microbench ab {before.commit} {commit} --config {config}")
    return lines


def publish(args: argparse.Namespace) -> int:
    from accelbench.results.remote import is_url, publish
    from accelbench.results.run_store import find_run, record_path

    run = find_run(_view(args), args.run)
    if run is None:
        raise UserError(
            "names no stored run (`microbench runs` lists them)", key=f"publish '{args.run}'"
        )
    url = args.to if is_url(args.to) else f"file://{os.path.abspath(args.to)}"
    for written in publish(record_path(run.series, run.number), run.files, url):
        print(written)
    return 0
