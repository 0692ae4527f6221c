"""`microbench compare`: two result files (or one grouped by a column), matched case by case; a
comparison of two runs exits 1 when a case got slower, went missing or failed: a CI gate."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, NamedTuple

import numpy as np

from accelbench.core.samples import ratio_intervals
from accelbench.errors import UserError, did_you_mean
from accelbench.results.compare_formats import Grid, Line, Report, show
from accelbench.results.console import NAMED_BY, format_seconds, op_name, worth_showing
from accelbench.results.display import AUDITED, audit_mark, ordered
from accelbench.results.reading import SeriesPart, read_rows
from accelbench.results.records import (
    ALL_GROUPS,
    Conditions,
    DeviceState,
    Environment,
    Identity,
    Row,
    TimeStats,
    TimingInfo,
    condition_values,
)
from accelbench.results.verdict import SUSTAINED, Evidence, Judgement, Verdict, judge, usable

RUN_SETTINGS = frozenset(("num_runs", "warmup"))  # how long a case ran is not what it is
# what pairing and verdicts read of a row (with params and series)
COMPARED = (Identity, TimeStats, Conditions, DeviceState, TimingInfo, Environment)
FULL_TABLE = 200  # above this many pairs the table shows only the cases that changed
IDENTIFYING = ("op", "backend", "implementation")  # CaseKey's identity fields, in its order


def _identifying(row: Row, without: tuple[str, ...]) -> tuple[str, str, str, list[tuple[str, Any]]]:
    left_out = RUN_SETTINGS.union(without)
    params = [
        (name, value)
        for name, value in row.params.as_dict().items()
        if value is not None and value != "" and name not in left_out
    ]
    ident = row.identity
    op, backend, impl = ("" if n in without else str(getattr(ident, n) or "") for n in IDENTIFYING)
    return op, backend, impl, params


class CaseKey(NamedTuple):
    """What a case is, however long it ran (a tuple: hashed at C speed for 100k cases)."""

    op: str
    backend: str
    implementation: str
    params: tuple[tuple[str, Any], ...]  # sorted by name: the same case whatever the column order
    # the run settings declared `compared` (cache, ...): a cold-cache row never pairs a warm one
    settings: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, row: Row, without: tuple[str, ...] = ()) -> CaseKey:
        op, backend, impl, params = _identifying(row, without)
        # sorted by name (names are unique, so values of unlike types are never compared)
        return cls(op, backend, impl, tuple(sorted(params)), condition_values(row))

    def loosely(self) -> CaseKey:
        """The case whatever its settings and implementation (a failed case may name neither)."""
        return self._replace(implementation="", settings=())


def case_label(row: Row, without: tuple[str, ...] = ()) -> str:
    """The case as a table line: op, backend:implementation and the parameters worth showing."""
    op, backend, impl, params = _identifying(row, without)
    head = " ".join(x for x in (op and op_name(row), backend + (f":{impl}" if impl else "")) if x)
    shown = worth_showing(row.identity.op, row.params) - {NAMED_BY.get(row.identity.op)}
    return " ".join([head, *(f"{k}={v}" for k, v in params if k in shown)])


@dataclass
class Pair:
    a: Row
    b: Row | None  # None: the candidate has no row of this case
    sides: str = ""  # grouped comparisons: which group against which, after the case
    without: tuple[str, ...] = ()  # what the label leaves out (the grouping column)
    # the ratio's 95% interval: from the raw samples (`sample_intervals`) or paired rounds (`ab`)
    interval: tuple[float, float] | None = None
    evidence: Evidence = Evidence.SAMPLES
    rounds: int | None = None  # ab: the rounds the interval is of
    paired_ratio: float | None = None  # ab: the median of the per-round ratios

    @property
    def key(self) -> str:
        """The case as the table and --json name it (made when shown: most of 100k never are)."""
        label = case_label(self.a, self.without)
        return f"{label} [{self.sides}]" if self.sides else label

    @property
    def ratio(self) -> float | None:
        if self.paired_ratio is not None:
            return self.paired_ratio
        a = self.a.median_s
        b = self.b.median_s if self.b else None
        return b / a if usable(a) and usable(b) else None

    def judged(self, threshold: float) -> Judgement:
        return judge(self.a, self.b, threshold, self.interval, self.evidence)


def _independent(row: Row) -> list[float]:
    """A row's samples that are independent: a sustained loop's are its rounds' means, each repeated
    for every iteration of its round (copies would make a zero-width interval of one number)."""
    samples = row.series.samples_s
    return [k for k, _ in groupby(samples)] if row.conditions.cadence == SUSTAINED else samples


def sample_intervals(pairs: list[Pair]) -> None:
    """Each pair's 95% ratio interval from its raw samples, batched by sample counts (numpy)."""
    batches: dict[tuple[int, int], list[tuple[Pair, list[float], list[float]]]] = defaultdict(list)
    for pair in pairs:
        if pair.b is not None and pair.interval is None:
            a, b = _independent(pair.a), _independent(pair.b)
            batches[(len(a), len(b))].append((pair, a, b))
    for batch in batches.values():
        intervals = ratio_intervals(
            np.array([x for _, x, _ in batch], dtype=float),
            np.array([y for _, _, y in batch], dtype=float),
        )
        if intervals is None:  # too few samples on a side
            continue
        for (pair, _, _), (low, high) in zip(batch, np.asarray(intervals).tolist(), strict=True):
            if math.isfinite(low) and math.isfinite(high) and low > 0:
                pair.interval = (low, high)


@dataclass
class Comparison:
    pairs: list[Pair]
    ambiguous: list[str]  # case keys with several rows on one side
    # grouped comparisons: rows whose case the baseline group lacks (shown), and the baseline group
    alone: list[Pair] = field(default_factory=list)
    base: str = ""

    def __post_init__(self) -> None:
        sample_intervals(self.pairs)

    def failing(self, threshold: float, reasons: tuple[str, ...] = ()) -> list[Pair]:
        """What fails the gate: a regression or a lost case, then (`--fail-inconclusive REASONS`) an
        inconclusive verdict whose reason names a word (`all`: any)."""
        said = [(p, p.judged(threshold)) for p in self.pairs]
        return [p for p, j in said if j.verdict.fails] + [
            p
            for p, j in said
            if j.verdict is Verdict.INCONCLUSIVE and any(r == "all" or r in j.why for r in reasons)
        ]


def _by_key(rows: Iterable[Row]) -> dict[CaseKey, list[Row]]:
    out: dict[CaseKey, list[Row]] = defaultdict(list)
    for row in rows:
        out[CaseKey.of(row)].append(row)
    return out


def pair_files(a_rows: list[Row], b_rows: list[Row]) -> Comparison:
    """Every baseline case with the candidate's row of it, else its one row under other settings
    (the verdict then says which conditions differ, never 'missing')."""
    a_keys, b_keys = _by_key(a_rows), _by_key(b_rows)
    ambiguous = sorted(
        {case_label(rows[0]) for rows in (*a_keys.values(), *b_keys.values()) if len(rows) > 1}
    )
    loose: dict[CaseKey, list[Row]] = defaultdict(list)
    for key, rows in b_keys.items():
        if key not in a_keys:
            loose[key.loosely()] += rows
    pairs = [
        Pair(rows[0], _match(b_keys.get(key) or loose.get(key.loosely(), [])))
        for key, rows in a_keys.items()  # the baseline's order: the order its cases ran
        if len(rows) == 1 and rows[0].ok and len(b_keys.get(key, [])) <= 1
    ]
    return Comparison(pairs, ambiguous)


def _match(rows: list[Row]) -> Row | None:
    return rows[0] if len(rows) == 1 else None


# grouped by these, the implementation is part of the side (torch:eager), not of the case
SIDE_WITH_IMPLEMENTATION = frozenset(("backend",))


def pair_groups(rows: list[Row], column: str, baseline: str | None) -> Comparison:
    """Each group's rows (by any column's value) against the baseline group's, case by case."""
    flat = [r.as_dict() for r in rows]
    columns = set(flat[0]) if flat else set()
    if rows and column not in columns:
        raise UserError(
            f"no column '{column}' in the results",
            key="--by",
            suggestion=did_you_mean(column, sorted(columns)),
        )
    value_of = [None if f.get(column) in (None, "") else str(f[column]) for f in flat]
    values = list(dict.fromkeys(v for r, v in zip(rows, value_of, strict=True) if r.ok and v))
    if baseline is not None and baseline not in values:
        raise UserError(
            f"no ok row has {column}={baseline}",
            key="--baseline",
            suggestion=did_you_mean(baseline, values),
        )
    base = baseline or (values[0] if values else None)
    with_impl = column in SIDE_WITH_IMPLEMENTATION
    without = (column, "implementation") if with_impl else (column,)
    sides: dict[CaseKey, dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row, value in zip(rows, value_of, strict=True):
        sides[CaseKey.of(row, without)][value or BLANK].append(row)
    comparison = Comparison([], [], base=base or "")
    for by_value in sides.values():  # the file's order
        if base not in by_value:
            comparison.alone += [
                Pair(r, None, _side(v, r, g), without) for v, g in by_value.items() for r in g
            ]
        elif len(by_value[base]) > 1 or not all(_distinct(g, with_impl) for g in by_value.values()):
            comparison.ambiguous.append(case_label(by_value[base][0], without))
        else:
            (b_row,) = by_value[base]
            comparison.pairs += [
                Pair(b_row, row, f"{_side(value, row, group)} vs {base}", without)
                for value, group in by_value.items()
                if value != base
                for row in group
            ]
    sample_intervals(comparison.pairs)
    return comparison


MAX_NOTES = 5  # distinct reasons a grid names under it
BLANK = "(blank)"  # the group of rows without a value in the grouping column


def _side(value: str, row: Row, group: list[Row]) -> str:
    return f"{value}:{row.identity.implementation}" if len(group) > 1 else value


def _distinct(group: list[Row], by_implementation: bool) -> bool:
    kinds = {r.identity.implementation for r in group} if by_implementation else {""}
    return len(kinds) == len(group)


def _cell(
    row: Row, pair: Pair | None = None, threshold: float = 0.0, why: set[str] | None = None
) -> str:
    """A grid cell: the median, its ratio to the baseline's, `?` where inconclusive."""
    if not row.ok or not usable(row.median_s):
        return row.status.value
    text = format_seconds(row.median_s) + audit_mark(row)
    if pair is None or pair.ratio is None:
        return text
    judged = pair.judged(threshold)
    if judged.verdict is Verdict.INCONCLUSIVE and why is not None:
        why.add(judged.why)
        return f"{text} ({pair.ratio:.2f}x ?)"
    return f"{text} ({pair.ratio:.2f}x)"


def grid(comparison: Comparison, by: str, baseline: str, threshold: float) -> Grid:
    """`compare --by` and `table(by=...)`: the cases down, each group across (baseline first)."""
    sides: list[str] = [baseline]
    cases: dict[str, dict[str, str]] = {}
    why: set[str] = set()
    for p in (*comparison.pairs, *comparison.alone):  # a row alone has `-` under the baseline
        side = p.sides.split(" vs ")[0] if p.b else p.sides
        sides += [side] if side not in sides else []
        cells = cases.setdefault(case_label(p.a, p.without), {baseline: _cell(p.a) if p.b else "-"})
        cells[side] = _cell(p.b, p, threshold, why) if p.b else _cell(p.a)
    rows = [r for p in (*comparison.pairs, *comparison.alone) for r in (p.a, p.b) if r is not None]
    notes = [AUDITED] if any(r.timing.audit for r in rows) else []
    notes += [f"?: inconclusive: {w}" for w in sorted(why)[:MAX_NOTES]]
    notes += [f"?: ... and {len(why) - MAX_NOTES} more reasons"] if len(why) > MAX_NOTES else []
    return Grid(
        f"median time by {by}, ratio to {baseline} in brackets",
        sides,
        [(label, [cells.get(s, "") for s in sides]) for label, cells in cases.items()],
        [*notes, *([f"-: no {by}={baseline} row of this case"] if comparison.alone else [])],
    )


def sorted_pairs(pairs: list[Pair], sort: str | None, threshold: float) -> list[Pair]:
    keys: dict[str, Callable[[Pair], Any]] = {
        "case": lambda p: p.key,
        "ratio": lambda p: p.ratio,
        "verdict": lambda p: p.judged(threshold).text,
    }
    return ordered(pairs, sort, keys)


def line(pair: Pair, threshold: float, fails: bool = False) -> Line:
    judged = pair.judged(threshold)
    b = pair.b
    return Line(
        pair.key,
        pair.a.median_s,
        b.median_s if b else None,
        pair.ratio,
        judged.low,
        judged.high,
        judged.text,
        judged.evidence.value,
        pair.rounds,
        pair.a.device_state.differences(b.device_state) if b else [],
        fails or judged.verdict.fails,
        (audit_mark(pair.a), audit_mark(b) if b else ""),
        next((r.timing.trace_path for r in (b, pair.a) if r and r.timing.trace_path), ""),
    )


Side = list[str]  # the results files of one side (one run may have written several)


def _compare(
    sides: list[Side], by: str | None, baseline: str | None
) -> tuple[Comparison, tuple[str, str]]:
    if by:
        if len(sides) != 1:
            raise UserError(
                "--by compares groups inside one results file; give exactly one file", key="--by"
            )
        rows = [r for path in sides[0] for r in rows_of(path)]  # any column may group
        comparison = pair_groups(rows, by, baseline)
        return comparison, (comparison.base, "other")
    if len(sides) != 2:
        raise UserError(
            "compare needs two results files (baseline, candidate), one file and --by COLUMN, or "
            "none: the last two runs of a config (--config, default the quick-start)"
        )
    a, b = ([r for path in side for r in rows_of(path, COMPARED)] for side in sides)
    return pair_files(a, b), (" + ".join(sides[0]), " + ".join(sides[1]))


def rows_of(
    path: str, groups: tuple[type, ...] = ALL_GROUPS, series: SeriesPart = "samples"
) -> list[Row]:
    """A results file's rows; none is a one-line error naming it."""
    rows = read_rows(path, series=series, groups=groups)
    if not rows:
        raise UserError("no rows: not a results file of this harness, or an empty run", file=path)
    return rows


def check_threshold(threshold: float, key: str = "--threshold") -> None:
    if not math.isfinite(threshold) or threshold < 0:
        raise UserError(f"must be a finite number >= 0, got {threshold}", key=key)


def run_compare(
    sides: list[Side],
    by: str | None,
    baseline: str | None,
    threshold: float,
    output_format: str = "table",
    candidate_cases_only: bool = False,
    sort: str | None = None,
    fail_inconclusive: tuple[str, ...] = (),
) -> int:
    """0: no matched case failed; 1: one regressed, went missing, failed or became ambiguous;
    2 (UserError): nothing to compare.
    `candidate_cases_only`: the candidate ran a selection, so a case it left out is not missing."""
    check_threshold(threshold)
    comparison, labels = _compare(sides, by, baseline)
    if candidate_cases_only:
        comparison.pairs = [p for p in comparison.pairs if p.b is not None]
    comparison.pairs = sorted_pairs(comparison.pairs, sort, threshold)
    unmatched = all(p.b is None for p in comparison.pairs)
    if unmatched and not (comparison.alone or comparison.ambiguous):
        raise UserError(
            "no case matches between the two sides (different ops, parameters or backends?)",
            file=" vs ".join(" + ".join(side) for side in sides),
        )
    # a comparison of groups is a table to read, not a regression gate: exit 0
    failing = [] if by else comparison.failing(threshold, fail_inconclusive)
    report = report_of(comparison, threshold, labels, failing)
    if by:
        report.grid = grid(comparison, by, labels[0], threshold)
        report.lines += [line(p, threshold) for p in comparison.alone]
    show(report, output_format)
    return 1 if not by and (failing or comparison.ambiguous) else 0


def report_of(
    comparison: Comparison,
    threshold: float,
    labels: tuple[str, str],
    failing: list[Pair],
    hint: bool = True,
) -> Report:
    """The comparison as the output formats take it (only changed lines above a table's worth)."""
    failed = {id(p) for p in failing}
    lines = [line(p, threshold, id(p) in failed) for p in comparison.pairs]
    notes, shown_lines = [], lines
    if len(lines) > FULL_TABLE:
        changed = [x for x in lines if x.verdict not in (Verdict.WITHIN.value, Verdict.NOISE.value)]
        notes.append(
            f"showing {min(len(changed), FULL_TABLE)} of {len(changed)} changed cases; "
            f"{len(lines) - len(changed)} unchanged (compare --format json lists every case)"
        )
        shown_lines = changed[:FULL_TABLE]
    notes += [AUDITED] if any(any(x.marks) for x in lines) else []
    notes += [
        f"ambiguous: several rows of one case on one side, not compared: {k}"
        for k in comparison.ambiguous
    ]
    if hint and any(p.judged(threshold).interleave for p in comparison.pairs):
        notes.append(AB_HINT)
    notes += _regressions(failing, len(comparison.pairs), threshold)
    return Report(labels, threshold, shown_lines, lines, notes, ambiguous=comparison.ambiguous)


AB_HINT = (
    "hint: rows taken under different conditions or on a loaded host get no verdict beyond what "
    "those can explain; `microbench ab` measures both sides in alternating rounds of one run, so "
    "the conditions hit both alike"
)


def _regressions(failing: list[Pair], matched: int, threshold: float) -> list[str]:
    counts = Counter(p.judged(threshold).verdict for p in failing)
    return [
        f"regression: {n} of {matched} matched cases are slower by more than {threshold:.0%}"
        if verdict is Verdict.SLOWER
        else f"regression: {n} of {matched} cases {verdict.value}"
        for verdict, n in counts.items()
    ]
