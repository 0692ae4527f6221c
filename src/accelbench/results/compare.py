"""`microbench compare`: two result files (or one file grouped by a column), matched case by case.

Cases are matched on everything that identifies them: op, backend, implementation and every parameter
(`CaseKey`). A side holding two rows of one case is ambiguous and is refused, never silently resolved. A
difference is noise when a Mann-Whitney U test on the two sides' raw per-iteration samples (the results'
JSON lines) cannot tell them apart at p < 0.01; rows without samples fall back to whether their p10-p90
ranges overlap. Otherwise it is slower or faster when the median moved by more than the threshold.
A comparison of two runs exits 1 when any case got slower, or is missing, failed, has no usable time or
became unsupported in the candidate, so CI can gate on it.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

from rich.table import Table

from accelbench.catalogue import OpParams, ReadParams, get_spec
from accelbench.core.samples import ratio_intervals
from accelbench.errors import Status, UserError, did_you_mean, visible
from accelbench.results import ci_formats
from accelbench.results.console import NAMED_BY, format_seconds, op_name, shown, table_console
from accelbench.results.display import AUDITED, audit_mark, markdown_safe, ordered
from accelbench.results.reading import read_rows
from accelbench.results.records import (
    ALL_GROUPS,
    Conditions,
    DeviceState,
    Identity,
    Row,
    TimeStats,
    TimingInfo,
    condition_values,
)

ALPHA = 0.01  # a difference less significant than this is noise
MIN_SAMPLES = 5  # per side, for the rank test
RUN_SETTINGS = frozenset(("num_runs", "warmup"))  # how long a case ran is not what it is
# what pairing and verdicts read of a row (with params and series)
COMPARED = (Identity, TimeStats, Conditions, DeviceState, TimingInfo)
FULL_TABLE = 200  # above this many pairs the table shows only the cases that changed


IDENTIFYING = ("op", "backend", "implementation")  # CaseKey's identity fields, in its order


def _identifying(row: Row, without: tuple[str, ...]) -> tuple[str, str, str, list[tuple[str, Any]]]:
    """What identifies the row's case (its typed parameters in the file's order), less `without`."""
    ident = row.identity
    left_out = _left_out(without)
    params = [
        (name, value)
        for name, value in row.params.as_dict().items()
        if value is not None and value != "" and name not in left_out
    ]
    if not without:
        return ident.op, ident.backend, ident.implementation or "", params
    op, backend, impl = ("" if n in without else str(getattr(ident, n) or "") for n in IDENTIFYING)
    return op, backend, impl, params


@functools.cache
def _left_out(without: tuple[str, ...]) -> frozenset[str]:
    return RUN_SETTINGS.union(without)


class CaseKey(NamedTuple):
    """What a case is, independent of when and how long it ran (a tuple: hashed and compared at C
    speed, which a 100k-case comparison needs). Parameters compare as typed values: alpha=1 and
    alpha=1.0 are one case."""

    op: str
    backend: str
    implementation: str
    params: tuple[tuple[str, Any], ...]  # sorted by name: the same case whatever the column order
    # the run settings declared `compared` (cache, cadence, ...): a cold-cache row is never paired
    # with a warm one
    settings: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, row: Row, without: tuple[str, ...] = ()) -> CaseKey:
        """The row's key, leaving out the identity fields or parameters named in `without`."""
        op, backend, impl, params = _identifying(row, without)
        # sorted by name (names are unique, so values of unlike types are never compared)
        return cls(op, backend, impl, tuple(sorted(params)), condition_values(row))


def case_label(row: Row, without: tuple[str, ...] = ()) -> str:
    """The case as a line of the table: op, backend:implementation, its dimensions and the parameters
    that differ from their declared defaults, in the op's order."""
    op, backend, impl, params = _identifying(row, without)
    head = " ".join(x for x in (op and op_name(row), backend + (f":{impl}" if impl else "")) if x)
    shown = _worth_showing(row.identity.op, row.params) - {NAMED_BY.get(row.identity.op)}
    return " ".join([head, *(f"{k}={v}" for k, v in params if k in shown)])


def _worth_showing(op: str, params: OpParams) -> set[str]:
    """The parameters a label names: every one of a row read as it stood (an op this version does
    not know), else the op's dimensions and those away from their defaults."""
    if isinstance(params, ReadParams):
        return set(params.as_dict())
    spec = get_spec(op)
    defaults = {p.name: p.default_value for p in spec.params}
    return {k for k, v in params.as_dict().items() if k in spec.dimensions or v != defaults.get(k)}


class Verdict(str, Enum):
    SLOWER = "slower"
    FASTER = "faster"
    WITHIN = "within threshold"
    NOISE = "noise"
    INCONCLUSIVE = "inconclusive (noisy)"
    STATE = "inconclusive (device state differs)"
    MISSING = "missing in candidate"
    FAILED = "failed in candidate"
    UNSUPPORTED = "newly unsupported"
    NO_TIME = "no usable time"
    AMBIGUOUS = "ambiguous"

    @property
    def fails(self) -> bool:
        """What makes a comparison exit 1: the candidate lost ground or lost the case."""
        kept = (Verdict.FASTER, Verdict.WITHIN, Verdict.NOISE, Verdict.INCONCLUSIVE, Verdict.STATE)
        return self not in kept


def usable(seconds: float | None) -> bool:
    return seconds is not None and math.isfinite(seconds) and seconds > 0


@dataclass
class Pair:
    a: Row
    b: Row | None  # None: the candidate has no row of this case
    sides: str = ""  # grouped comparisons: which group against which, after the case
    without: tuple[str, ...] = ()  # what the label leaves out (the grouping column)
    # Mann-Whitney U (two-sided) on the raw samples where both sides have enough of them, and the
    # 95% confidence interval of the ratio of medians: set for a whole comparison by `rank_tests`
    p_value: float | None = None
    interval: tuple[float, float] | None = None

    @property
    def key(self) -> str:
        """The case as the table and --json name it (made when shown: most of 100k never are)."""
        label = case_label(self.a, self.without)
        return f"{label} [{self.sides}]" if self.sides else label

    @property
    def state_differences(self) -> list[str]:
        """The device settings in which the two rows differ (DeviceState's `verdict` columns)."""
        return self.a.device_state.differences(self.b.device_state) if self.b else []

    @property
    def ratio(self) -> float | None:
        a = self.a.median_s
        b = self.b.median_s if self.b else None
        return b / a if a is not None and b is not None and usable(a) and usable(b) else None

    def _overlap(self) -> bool:
        assert self.b is not None
        a, b = self.a.stats, self.b.stats
        ends = (a.time_p10_s, a.time_p90_s, b.time_p10_s, b.time_p90_s)
        if any(e is None for e in ends):
            return False
        a_lo, a_hi, b_lo, b_hi = (float(e) for e in ends)  # type: ignore[arg-type]
        return b_lo <= a_hi and a_lo <= b_hi

    def verdict(self, threshold: float) -> Verdict:
        """From the raw samples where both sides have them: slower or faster when the whole 95%
        interval of the ratio of medians is beyond the threshold, however noisy the rows; within
        (or noise, where the rank test sees no difference) when it lies inside; inconclusive only
        when it straddles a threshold. Without samples, from the medians and p10-p90 ranges."""
        if self.b is None:
            return Verdict.MISSING
        if self.b.status is Status.UNSUPPORTED:
            return Verdict.UNSUPPORTED
        if not self.b.ok:
            return Verdict.FAILED
        ratio = self.ratio
        if ratio is None:
            return Verdict.NO_TIME
        if self.state_differences:  # another power limit or clock setting, say
            return Verdict.STATE
        if self.interval is not None:
            return self._by_interval(threshold, *self.interval)
        if self.a.doubt or self.b.doubt:
            return Verdict.INCONCLUSIVE
        if self._overlap():
            return Verdict.NOISE
        return _beyond(ratio, threshold) or Verdict.WITHIN

    def _by_interval(self, threshold: float, low: float, high: float) -> Verdict:
        if low > 1 + threshold:
            return Verdict.SLOWER
        if high < 1 - threshold:
            return Verdict.FASTER
        if low < 1 - threshold or high > 1 + threshold:
            return Verdict.INCONCLUSIVE
        significant = self.p_value is not None and self.p_value < ALPHA
        return Verdict.WITHIN if significant else Verdict.NOISE


def _beyond(ratio: float, threshold: float) -> Verdict | None:
    if ratio > 1 + threshold:
        return Verdict.SLOWER
    if ratio < 1 - threshold:
        return Verdict.FASTER
    return None


def _tested(pair: Pair) -> tuple[list[float], list[float]] | None:
    if pair.b is None:
        return None
    a, b = pair.a.series.samples_s, pair.b.series.samples_s
    return (a, b) if min(len(a), len(b)) >= MIN_SAMPLES else None


def rank_tests(pairs: list[Pair]) -> None:
    """Each pair's p-value, one scipy call per batch of pairs with like sample counts (one call per
    pair took 0.8 ms: 80 s for 100k cases). Each pair gets the method scipy's `auto` picks for it
    alone: exact where a side has at most 8 samples and the two have no tie, else asymptotic."""
    batches: dict[tuple[int, int], list[tuple[Pair, list[float], list[float]]]] = defaultdict(list)
    for pair in pairs:
        tested = _tested(pair)
        if tested:
            batches[(len(tested[0]), len(tested[1]))].append((pair, *tested))
    if not batches:
        return
    import numpy as np  # scipy.stats takes a second to import: only where a pair has samples
    from scipy.stats import mannwhitneyu

    for (n_a, n_b), batch in batches.items():
        a = np.array([x for _, x, _ in batch], dtype=float)
        b = np.array([y for _, _, y in batch], dtype=float)
        both = np.sort(np.concatenate([a, b], axis=1), axis=1)
        tied = (np.diff(both, axis=1) == 0).any(axis=1)
        exact = ~tied if min(n_a, n_b) <= 8 else np.zeros(len(batch), dtype=bool)
        p = np.empty(len(batch))
        for method, chosen in (("exact", exact), ("asymptotic", ~exact)):
            if chosen.any():
                test = mannwhitneyu(
                    a[chosen], b[chosen], alternative="two-sided", axis=1, method=method
                )
                p[chosen] = test.pvalue
        intervals = ratio_intervals(a, b)
        for k, ((pair, _, _), value) in enumerate(zip(batch, p.tolist(), strict=True)):
            pair.p_value = value if math.isfinite(value) else None  # all tied: no test
            if intervals is not None and np.isfinite(intervals[k]).all():
                pair.interval = (float(intervals[k, 0]), float(intervals[k, 1]))


@dataclass
class Comparison:
    pairs: list[Pair]
    ambiguous: list[str]  # case keys with several rows on one side

    def __post_init__(self) -> None:
        rank_tests(self.pairs)

    def failing(self, threshold: float) -> list[Pair]:
        return [p for p in self.pairs if p.verdict(threshold).fails]


def _by_key(rows: Iterable[Row]) -> dict[CaseKey, list[Row]]:
    out: dict[CaseKey, list[Row]] = defaultdict(list)
    for row in rows:
        out[CaseKey.of(row)].append(row)
    return out


def pair_files(a_rows: list[Row], b_rows: list[Row]) -> Comparison:
    """Every case the baseline timed, matched with the candidate's row of it (or its absence)."""
    a_keys, b_keys = _by_key(a_rows), _by_key(b_rows)
    ambiguous = sorted(
        {case_label(rows[0]) for rows in (*a_keys.values(), *b_keys.values()) if len(rows) > 1}
    )
    pairs = [
        Pair(rows[0], next(iter(b_keys.get(key, [])), None))
        for key, rows in a_keys.items()  # the baseline's order: the order its cases ran
        if len(rows) == 1 and rows[0].ok and len(b_keys.get(key, [])) <= 1
    ]
    return Comparison(pairs, ambiguous)


# grouping by one of these compares implementations that belong to it: the implementation is part of
# the side (torch:eager, torch:compile), not of the case
SIDE_WITH_IMPLEMENTATION = frozenset(("backend",))


def pair_groups(rows: list[Row], column: str, baseline: str | None) -> Comparison:
    """Each group's rows (by the value of `column`) against the baseline group's, case by case."""
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
        if value is not None:
            sides[CaseKey.of(row, without)][value].append(row)
    ambiguous: list[str] = []
    pairs: list[Pair] = []
    for by_value in sides.values():  # the file's order
        if base not in by_value:
            continue
        if len(by_value[base]) > 1 or not all(_distinct(g, with_impl) for g in by_value.values()):
            ambiguous.append(case_label(by_value[base][0], without))
            continue
        (b_row,) = by_value[base]
        if not b_row.ok:
            continue
        for value, group in by_value.items():
            if value == base:
                continue
            for row in group:
                side = f"{value}:{row.identity.implementation}" if len(group) > 1 else value
                pairs.append(Pair(b_row, row, f"{side} vs {base}", without))
    return Comparison(pairs, ambiguous)


def _distinct(group: list[Row], by_implementation: bool) -> bool:
    """A side's rows are told apart by their implementation, or it has one row."""
    if not by_implementation:
        return len(group) == 1
    impls = [r.identity.implementation for r in group]
    return len(set(impls)) == len(impls)


def render(pairs: list[Pair], threshold: float, a_label: str, b_label: str) -> Table:
    table = Table(
        title=shown(
            f"{b_label} vs {a_label} (median time; verdicts from the 95% interval of the ratio of "
            f"medians on the raw samples, noise = Mann-Whitney p >= {ALPHA} inside the threshold; "
            "overlapping p10-p90 ranges where there are no samples)"
        )
    )
    for col in ("case", a_label, b_label, "ratio", "95% interval", "p", "verdict"):
        table.add_column(shown(col), justify="left" if col in ("case", "verdict") else "right")
    for p in pairs:
        b_median = p.b.median_s if p.b else None
        table.add_row(
            shown(p.key),
            format_seconds(p.a.median_s) + audit_mark(p.a),
            format_seconds(b_median) + (audit_mark(p.b) if p.b else ""),
            f"{p.ratio:.3f}" if p.ratio else "",
            f"{p.interval[0]:.3f} - {p.interval[1]:.3f}" if p.interval else "",
            "" if p.p_value is None else f"{p.p_value:.2g}",
            p.verdict(threshold).value,
        )
    return table


def _cell(row: Row, base: Row | None) -> str:
    """A pivot cell: the median, its ratio to the baseline's, `?` where either cannot carry a
    verdict (noisy or a loaded host); a row without a time says why."""
    if not row.ok or not usable(row.median_s):
        return row.status.value
    text = format_seconds(row.median_s)
    if base is not None and usable(base.median_s):
        text += f" ({row.median_s / base.median_s:.2f}x)"  # type: ignore[operator]
    doubtful = row.doubt or (base is not None and base.doubt)
    return text + (" ?" if doubtful else "") + audit_mark(row)


def pivot(comparison: Comparison, by: str, baseline: str) -> Table:
    """`compare --by`: the cases down, each group across (the baseline first), times and ratios to
    the baseline: a comparison of frameworks or implementations, not a regression gate."""
    sides: list[str] = [baseline]
    cases: dict[str, dict[str, str]] = {}
    for p in comparison.pairs:
        assert p.b is not None
        side = p.sides.split(" vs ")[0]
        sides += [side] if side not in sides else []
        cells = cases.setdefault(case_label(p.a, p.without), {baseline: _cell(p.a, None)})
        cells[side] = _cell(p.b, p.a)
    table = Table(
        title=shown(
            f"median time by {by}, ratio to {baseline} in brackets (?: noisy, or taken on a loaded "
            f"host: no verdict; {AUDITED})"
        )
    )
    table.add_column("case", justify="left")
    for side in sides:
        table.add_column(shown(side), justify="right")
    for label, cells in cases.items():
        table.add_row(shown(label), *(cells.get(side, "") for side in sides))
    return table


PAIR_KEYS: dict[str, Callable[[Pair, float], Any]] = {
    "case": lambda p, t: p.key,
    "ratio": lambda p, t: p.ratio,
    "p": lambda p, t: p.p_value,
    "verdict": lambda p, t: p.verdict(t).value,
}


def sorted_pairs(pairs: list[Pair], sort: str | None, threshold: float) -> list[Pair]:
    """`--sort KEY` (`--sort=-KEY`: descending) by case, ratio, p or verdict."""
    return ordered(
        pairs, sort, {k: functools.partial(_at, v, threshold) for k, v in PAIR_KEYS.items()}
    )


def _at(value: Callable[[Pair, float], Any], threshold: float, pair: Pair) -> Any:
    return value(pair, threshold)


def pairs_as_text(pairs: list[Pair], threshold: float, labels: tuple[str, str], fmt: str) -> str:
    """The comparison as CSV or a Markdown table (`--format`)."""
    head = ["case", labels[0], labels[1], "ratio", "p", "verdict"]
    lines = [
        [
            p.key,
            format_seconds(p.a.median_s),
            format_seconds(p.b.median_s if p.b else None),
            f"{p.ratio:.3f}" if p.ratio else "",
            "" if p.p_value is None else f"{p.p_value:.2g}",
            p.verdict(threshold).value,
        ]
        for p in pairs
    ]
    if fmt == "csv":
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(
            [[visible(x) for x in line] for line in (head, *lines)]
        )
        return buffer.getvalue()
    rows = [head, ["---"] * len(head), *lines]
    return "".join("| " + " | ".join(markdown_safe(x) for x in r) + " |\n" for r in rows)


def as_records(comparison: Comparison, threshold: float) -> dict[str, Any]:
    """`compare --json`: every matched case with both medians, the ratio, the test's p and the verdict."""
    lost = (Verdict.MISSING, Verdict.FAILED, Verdict.UNSUPPORTED, Verdict.NO_TIME)
    return {
        "threshold": threshold,
        "alpha": ALPHA,
        "pairs": [
            {
                "case": p.key,
                "baseline_median_s": p.a.median_s,
                "candidate_median_s": p.b.median_s if p.b else None,
                "ratio": p.ratio,
                "ratio_low": p.interval[0] if p.interval else None,
                "ratio_high": p.interval[1] if p.interval else None,
                "p_value": p.p_value,
                "verdict": p.verdict(threshold).value,
                "device_state_differs": p.state_differences,
            }
            for p in comparison.pairs
        ],
        "failed_in_candidate": [p.key for p in comparison.pairs if p.verdict(threshold) in lost],
        "ambiguous": comparison.ambiguous,
    }


Side = list[str]  # the results files of one side (one run may have written several)


def _compare(
    sides: list[Side], by: str | None, baseline: str | None
) -> tuple[Comparison, tuple[str, str]]:
    if by:
        if len(sides) != 1:
            raise UserError(
                "--by compares groups inside one results file; give exactly one file", key="--by"
            )
        rows = [r for path in sides[0] for r in _rows(path, ALL_GROUPS)]  # any column may group
        comparison = pair_groups(rows, by, baseline)
        first = comparison.pairs[0].sides.split(" vs ")[1] if comparison.pairs else "first"
        return comparison, (baseline or first, "other")
    if len(sides) != 2:
        raise UserError(
            "compare needs two results files (baseline, candidate), one file and --by COLUMN, or "
            "none: the last two runs of a config (--config, default the quick-start)"
        )
    a, b = ([r for path in side for r in _rows(path, COMPARED)] for side in sides)
    return pair_files(a, b), (" + ".join(sides[0]), " + ".join(sides[1]))


def _rows(path: str, groups: tuple[type, ...]) -> list[Row]:
    rows = read_rows(path, series="samples", groups=groups)
    if not rows:
        raise UserError("no rows: not a results file of this harness, or an empty run", file=path)
    return rows


def run_compare(
    sides: list[Side],
    by: str | None,
    baseline: str | None,
    threshold: float,
    as_json: bool = False,
    candidate_cases_only: bool = False,
    sort: str | None = None,
    output_format: str = "table",
    fail_inconclusive: tuple[str, ...] = (),
) -> int:
    """0: every matched case within the threshold, noise or inconclusive; 1: a candidate case
    regressed, went missing, failed or became ambiguous; 2 (UserError): nothing to compare.
    `candidate_cases_only`: the candidate ran a selection, so a case it left out is not missing."""
    if not math.isfinite(threshold) or threshold < 0:
        raise UserError(f"must be a finite number >= 0, got {threshold}", key="--threshold")
    comparison, labels = _compare(sides, by, baseline)
    if candidate_cases_only:
        comparison.pairs = [p for p in comparison.pairs if p.b is not None]
    comparison.pairs = sorted_pairs(comparison.pairs, sort, threshold)
    if all(p.b is None for p in comparison.pairs) and not comparison.ambiguous:
        raise UserError(
            "no case matches between the two sides (different ops, parameters or backends?)",
            file=" vs ".join(" + ".join(side) for side in sides),
        )
    if by:  # a comparison of groups is a table to read, not a gate: exit 0
        _show_groups(comparison, by, labels[0], threshold, as_json)
        return 0
    failing = comparison.failing(threshold)
    failing += ci_formats.inconclusive(comparison.pairs, threshold, fail_inconclusive)
    code = 1 if failing or comparison.ambiguous else 0
    if as_json:
        print(json.dumps(as_records(comparison, threshold), indent=2))
        return code
    if ci_formats.show(output_format, comparison.pairs, failing, threshold, labels):
        return code
    _show_pairs(comparison, threshold, labels, output_format)
    _say_regressions(failing, len(comparison.pairs), threshold)
    return code


def _show_groups(
    comparison: Comparison, by: str, baseline: str, threshold: float, as_json: bool
) -> None:
    if as_json:
        records = as_records(comparison, threshold)
        for record in records["pairs"]:
            record.pop("verdict")
        print(json.dumps(records, indent=2))
        return
    table_console().print(pivot(comparison, by, baseline))
    for key in comparison.ambiguous:
        print(visible(f"ambiguous: several rows of one case on one side, not compared: {key}"))


def _show_pairs(
    comparison: Comparison, threshold: float, labels: tuple[str, str], output_format: str
) -> None:
    """The pairs as a table (or CSV, Markdown): the changed ones only above a table's worth."""
    shown = comparison.pairs
    if len(shown) > FULL_TABLE:  # the changed cases, and at most a table's worth of them
        changed = [p for p in shown if p.verdict(threshold) not in (Verdict.WITHIN, Verdict.NOISE)]
        shown = changed[:FULL_TABLE]
        print(
            f"showing {len(shown)} of {len(changed)} changed cases; "
            f"{len(comparison.pairs) - len(changed)} unchanged (compare --json lists every case)"
        )
    if shown and output_format in ("csv", "markdown"):
        print(pairs_as_text(shown, threshold, labels, output_format), end="")
    elif shown:
        table_console().print(render(shown, threshold, *labels))
    for key in comparison.ambiguous:
        print(visible(f"ambiguous: several rows of one case on one side, not compared: {key}"))
    for p in shown:
        if p.verdict(threshold) is Verdict.STATE:
            print(visible(f"device state differs: {p.key}: {', '.join(p.state_differences)}"))


def _say_regressions(failing: list[Pair], matched: int, threshold: float) -> None:
    counts: dict[Verdict, int] = defaultdict(int)
    for p in failing:
        counts[p.verdict(threshold)] += 1
    for verdict, n in counts.items():
        if verdict is Verdict.SLOWER:
            print(
                f"regression: {n} of {matched} matched cases are slower by more than {threshold:.0%}"
            )
        else:
            print(f"regression: {n} of {matched} cases {verdict.value}")
