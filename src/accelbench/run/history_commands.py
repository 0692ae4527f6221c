"""`microbench history` (each case over the stored runs in commit order, its steps; `--bisect`) and
`microbench publish` (a stored run into a bucket, for `compare --baseline latest` and `history`)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
from typing import Any

from accelbench.errors import UserError, visible


def history(args: argparse.Namespace) -> int:
    from accelbench.results import history as h
    from accelbench.run.store_commands import _view

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
    from accelbench.run.store_commands import _view

    view = _view(args)
    run = find_run(view, args.run)
    if run is None:
        raise UserError(
            "names no stored run (`microbench runs` lists them)", key=f"publish '{args.run}'"
        )
    url = args.to if is_url(args.to) else f"file://{os.path.abspath(args.to)}"
    for written in publish(record_path(run.series, run.number), list(run.files), url):
        print(written)
    return 0
