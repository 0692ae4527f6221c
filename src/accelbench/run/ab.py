"""`microbench ab` and `accelbench.ab`: two sides in alternating rounds (A B, B A, ...), so drift and
load fall on both alike; the verdict from the per-round ratios B/A (paired-rounds evidence), not two
independent medians. A side is a config, a git ref, a shell command or a callable; cases pair by order."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

from accelbench.catalogue import ReadParams
from accelbench.core.case import MIN_ROUNDS, AbSettings, Case
from accelbench.core.samples import Samples
from accelbench.core.types import Timing
from accelbench.errors import Status, UserError, counted, visible
from accelbench.results.compare import Comparison, Pair, case_label, report_of, sorted_pairs
from accelbench.results.compare_formats import Report
from accelbench.results.records import Environment, Identity, Row, Series, TimingInfo
from accelbench.results.row_builder import time_stats
from accelbench.results.verdict import Evidence, usable


def ab_settings(given: Mapping[str, Any], flags: bool = False) -> AbSettings:
    """Each setting given checked by its rule; an error names the key (`--round-runs` as a flag)."""
    from accelbench.config.settings import CHECKS

    values = {}
    for f in fields(AbSettings):
        value, rule = given.get(f.name), f.metadata["rule"]
        if value is not None:
            key = f"--{f.name.replace('_', '-')}" if flags else f.name
            if flags:  # a flag's text: a number where it reads as one, else refused by its rule
                with contextlib.suppress(ValueError):
                    value = float(value)
                    value = int(value) if rule.kind == "count" and value.is_integer() else value
            values[f.name] = CHECKS[rule.kind](rule, value, key, "")
    return AbSettings(**values)


class Side(Protocol):
    label: str

    def measure(self, round_no: int, runs: int | None) -> list[Row]: ...  # a row per case, in order


@dataclass
class PlannedSide:
    """A config's cases run in this process each round (the frameworks start once), rows in `out`."""

    label: str
    cases: list[Case]
    out: str

    def measure(self, round_no: int, runs: int | None) -> list[Row]:
        from accelbench.platform.environment import base_environment, new_run_id
        from accelbench.results.writer import write_rows
        from accelbench.run.runner import execute

        run_id = new_run_id()
        env = base_environment(run_id)
        cases = [replace(c, run=replace(c.run, num_runs=runs)) if runs else c for c in self.cases]
        rows = [execute(c, run_id, env, None, c.run.timeout_s)[0] for c in cases]
        write_rows(_round_file(self.out, self.label, round_no), rows, cases[0].config_id)
        return rows


def _round_file(out: str, label: str, round_no: int) -> str:
    return os.path.join(out, f"{label}.round{round_no + 1}.csv")


@dataclass
class ConfigSide:
    """A config run by `microbench run -o` each round, in a git ref's worktree where it has one."""

    label: str
    config: str
    out: str  # where its rounds' results files go
    cwd: str | None = None
    env: dict[str, str] | None = None

    def measure(self, round_no: int, runs: int | None) -> list[Row]:
        from accelbench.results.reading import read_rows

        path = _round_file(self.out, self.label, round_no)
        argv = [sys.executable, "-m", "accelbench", "run", "--config", self.config, "-o", path]
        argv += ["-q", "--no-progress", *(["--num-runs", str(runs)] if runs else [])]
        done = subprocess.run(argv, cwd=self.cwd, env=self.env, capture_output=True, text=True)
        rows = read_rows(path, series="samples") if os.path.isfile(path) else []
        if not rows:
            said = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"side {self.label} wrote no row: {visible(said)}", key="ab")
        return rows


@dataclass
class CommandSide:
    """A shell command, timed by the wall clock around each run (as hyperfine does)."""

    label: str
    command: str

    def measure(self, round_no: int, runs: int | None) -> list[Row]:
        walls, code = [], 0
        for _ in range(runs or 1):
            started = time.perf_counter()
            code = subprocess.run(self.command, shell=True, capture_output=True).returncode
            walls.append(time.perf_counter() - started)
        identity = Identity(op="command", backend="shell", label=self.label)
        params = ReadParams({"command": self.command})
        if code:
            failed = replace(identity, status=Status.ERROR, error=f"exit status {code}")
            return [Row(failed, params)]
        return [
            Row(
                identity,
                params,
                stats=time_stats(Timing(walls, "wall_clock")),
                timing=TimingInfo(timing_source="wall_clock"),
                environment=Environment(platform="cpu"),
                series=Series(samples_s=walls),
            )
        ]


def pooled(rows: Sequence[Row]) -> Row:
    """A side's row of one case over every round: its samples pooled."""
    ok = [r for r in rows if r.ok]
    if not ok:
        return rows[-1]
    samples = [s for r in ok for s in r.series.samples_s]
    if not samples:
        return ok[-1]
    source = ok[-1].timing.timing_source or "wall_clock"
    timing = Timing(samples, source, stop_reason="rounds")
    return replace(
        ok[-1], stats=time_stats(timing), series=replace(ok[-1].series, samples_s=samples)
    )


def paired(a_rounds: list[list[Row]], b_rounds: list[list[Row]]) -> list[Pair]:
    """Each case's pooled rows, its median per-round ratio and 95% interval (from MIN_ROUNDS on)."""
    pairs = []
    for i in range(len(a_rounds[0])):
        a_rows, b_rows = [r[i] for r in a_rounds], [r[i] for r in b_rounds]
        ratios = Samples(
            [
                b.median_s / a.median_s
                for a, b in zip(a_rows, b_rows, strict=True)
                if a.ok and b.ok and usable(a.median_s) and usable(b.median_s)
            ]
        )
        a, b = pooled(a_rows), pooled(b_rows)
        label_b = case_label(b)
        pair = Pair(a, b, label_b if label_b != case_label(a) else "")
        if ratios.count:
            pair.paired_ratio, pair.rounds = ratios.median_s, ratios.count
        if ratios.count >= MIN_ROUNDS:
            pair.interval, pair.evidence = ratios.median_interval_s(), Evidence.ROUNDS
        pairs.append(pair)
    return pairs


def _precise(pairs: list[Pair], settings: AbSettings) -> bool:
    return all(
        p.interval is not None
        and p.paired_ratio
        and (p.interval[1] - p.interval[0]) / 2 / p.paired_ratio <= settings.ratio_precision
        for p in pairs
    )


def interleave(
    a: Side, b: Side, settings: AbSettings, say: Callable[[str], None] = lambda line: None
) -> list[Pair]:
    """Rounds until every paired ratio is known to `ratio_precision` or `rounds` ran: stopping on the
    interval's width, never on where it lies, does not bias the verdict."""
    rounds: tuple[list[list[Row]], list[list[Row]]] = ([], [])
    sides = (a, b)
    pairs: list[Pair] = []
    for k in range(settings.rounds):
        for i in (0, 1) if k % 2 == 0 else (1, 0):
            rounds[i].append(sides[i].measure(k, settings.round_runs))
        if len(rounds[0][-1]) != len(rounds[1][-1]):
            raise UserError(
                f"the sides ran {len(rounds[0][-1])} and {len(rounds[1][-1])} cases; ab pairs them "
                "in order, so both must run the same number",
                key="ab",
            )
        pairs = paired(*rounds)
        said = "; ".join(_progress(p) for p in pairs[:3])
        say(f"round {k + 1} of at most {settings.rounds}: {said}")
        if k + 1 >= MIN_ROUNDS and _precise(pairs, settings):
            break
    return pairs


def _progress(pair: Pair) -> str:
    if pair.interval is None or pair.paired_ratio is None:
        return f"{pair.key}: {pair.ratio or 0:.3f}"
    return f"{pair.key}: {pair.paired_ratio:.3f} ({pair.interval[0]:.3f}-{pair.interval[1]:.3f})"


def ab_report(pairs: list[Pair], threshold: float, labels: tuple[str, str]) -> Report:
    comparison = Comparison(pairs, [])
    return report_of(comparison, threshold, labels, comparison.failing(threshold), hint=False)


@contextlib.contextmanager
def worktrees(refs: Sequence[str]) -> Iterator[list[str]]:
    """A detached worktree of each git ref, in a temporary folder, removed afterwards."""
    top = _git(["rev-parse", "--show-toplevel"], ".").strip()
    made: list[str] = []
    under = tempfile.mkdtemp(prefix="microbench-ab-")
    try:
        for i, ref in enumerate(refs):
            path = os.path.join(under, f"tree{i}")
            _git(["worktree", "add", "--detach", "--quiet", path, ref], top)
            made.append(path)
        yield [top, *made]
    finally:
        for path in made:
            _git(["worktree", "remove", "--force", path], top)
        os.rmdir(under)


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except OSError as error:
        raise UserError(f"git could not run: {error}", key="ab") from None
    if done.returncode:
        said = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise UserError(f"git {args[0]}: {visible(said)}", key="ab")
    return done.stdout


def _ref_side(label: str, tree: str, top: str, config: str, out: str) -> ConfigSide:
    """The config (as inside the repository, where it is) run in the ref's worktree, its code first."""
    inside = os.path.relpath(os.path.abspath(config), top)
    here = config if inside.startswith("..") else os.path.join(tree, inside)
    paths = [os.path.join(tree, "src"), tree, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    return ConfigSide(label, here, out, cwd=tree, env=env)


def run_ab(args: Any) -> int:
    from accelbench.results.compare import check_threshold
    from accelbench.results.compare_formats import show

    settings = ab_settings(vars(args), flags=True)
    check_threshold(args.threshold)
    a, b = args.sides
    os.makedirs(args.output_dir, exist_ok=True)
    out = os.path.abspath(tempfile.mkdtemp(prefix="ab-", dir=args.output_dir))
    say = (lambda _: None) if args.quiet else (lambda line: print(visible(line), file=sys.stderr))
    with _sides(a, b, args, out) as sides:
        pairs = interleave(*sides, settings, say)
    report = ab_report(sorted_pairs(pairs, args.sort, args.threshold), args.threshold, (a, b))
    show(report, args.output_format)
    if os.listdir(out):
        say(f"each round's results files: {out}")
    else:
        os.rmdir(out)
    return 1 if any(x.fails for x in report.every) else 0


@contextlib.contextmanager
def _sides(a: str, b: str, args: Any, out: str) -> Iterator[tuple[Side, Side]]:
    if args.commands:
        yield CommandSide("a", a), CommandSide("b", b)
    elif args.config:
        with worktrees((a, b)) as (top, tree_a, tree_b):
            yield (
                _ref_side("a", tree_a, top, args.config, out),
                _ref_side("b", tree_b, top, args.config, out),
            )
    else:
        from accelbench.core.options import RunOptions
        from accelbench.run.planning import load_and_plan

        # a bad config, or two that do not line up, is answered before any round
        planned = [load_and_plan(config, RunOptions())[1] for config in (a, b)]
        if len(planned[0]) != len(planned[1]):
            raise UserError(
                f"{a} plans {counted(len(planned[0]), 'case')} and {b} {len(planned[1])}: ab pairs them in "
                "order",
                key="ab",
            )
        yield PlannedSide("a", planned[0], out), PlannedSide("b", planned[1], out)
