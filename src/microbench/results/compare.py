"""`microbench compare`: two result files (or one file grouped by a column), matched case by case.

A difference is called noise when a Mann-Whitney U test on the two sides' raw per-iteration samples
(from the results' JSON lines) cannot tell them apart at p < 0.01; rows without samples fall back to
whether their p10-p90 ranges overlap. Otherwise it is slower or faster when the median moved by more
than the threshold. Two-run comparisons exit 1 when any case got slower, so CI can gate on it.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from microbench.errors import UserError, did_you_mean
from microbench.results.columns import IDENTITY, STATS
from microbench.results.console import table_console
from microbench.results.writer import read_rows

RUN_COLUMNS = {"num_runs", "warmup"}


def number(row: dict[str, str], col: str) -> float | None:
    """A results cell as a number; empty, or a hand-edited or foreign cell, is no number (never a traceback)."""
    value = row.get(col, "")
    try:
        return float(value) if value not in ("", None) else None
    except ValueError:
        return None


def scaled(row: dict[str, Any], col: str, factor: float) -> float | None:
    """A cell converted to another unit (s to ms, bytes to MiB), to 12 significant digits so that
    0.008816 s stays 8.816 ms rather than 8.816000000000001."""
    value = number(row, col)
    return None if value is None else float(f"{value * factor:.12g}")


ALPHA = 0.01  # a difference less significant than this is noise
MIN_SAMPLES = 5  # per side, for the rank test


@dataclass
class Pair:
    key: str
    a: dict[str, str]
    b: dict[str, str]
    a_samples: list[float] | None = None
    b_samples: list[float] | None = None

    @property
    def p_value(self) -> float | None:
        """Mann-Whitney U (two-sided) on the raw samples, where both sides have enough of them."""
        a, b = self.a_samples or [], self.b_samples or []
        if min(len(a), len(b)) < MIN_SAMPLES:
            return None
        from scipy.stats import mannwhitneyu

        return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)

    @staticmethod
    def _f(row: dict[str, str], col: str) -> float | None:
        return number(row, col)

    @property
    def ratio(self) -> float | None:
        a, b = self._f(self.a, "time_median_s"), self._f(self.b, "time_median_s")
        return b / a if a and b else None

    def verdict(self, threshold: float) -> str:
        if self.ratio is None:
            return "missing"
        p = self.p_value
        if p is not None:
            if p >= ALPHA:
                return "noise"
        else:  # no raw samples: the p10-p90 ranges overlap
            a_lo, a_hi = self._f(self.a, "time_p10_s"), self._f(self.a, "time_p90_s")
            b_lo, b_hi = self._f(self.b, "time_p10_s"), self._f(self.b, "time_p90_s")
            if None not in (a_lo, a_hi, b_lo, b_hi) and b_lo <= a_hi and a_lo <= b_hi:  # type: ignore[operator]
                return "noise"
        if self.ratio > 1 + threshold:
            return "slower"
        if self.ratio < 1 - threshold:
            return "faster"
        return "within threshold"


def param_columns(rows: list[dict[str, str]]) -> list[str]:
    """The parameter columns: the writer puts them between the identity and statistics blocks."""
    if not rows:
        return []
    cols = list(rows[0])
    start, end = len(IDENTITY), cols.index(STATS[0]) if STATS[0] in cols else len(cols)
    return cols[start:end]


def case_key(row: dict[str, str], params: list[str], exclude: str | None = None) -> str:
    parts = [row.get("op", ""), row.get("backend", "")] + [
        f"{p}={row[p]}" for p in params if p not in RUN_COLUMNS and row.get(p) not in ("", None)
    ]
    if exclude:
        parts = [p for p in parts if not p.startswith(f"{exclude}=") and p != row.get(exclude)]
    return " ".join(parts)


FAILED = ("error", "wrong_result", "oom", "timeout", "crashed")
REQUIRED = ("case_id", "status", "op", "backend", "time_median_s")


def load_samples(path: str) -> dict[str, list[float]]:
    """Each case's raw per-iteration samples from the results' .jsonl twin ({} when there is none)."""
    jsonl = os.path.splitext(path)[0] + ".jsonl"
    samples: dict[str, list[float]] = {}
    if not os.path.exists(jsonl):
        return samples
    with open(jsonl) as f:
        for line in f:
            try:
                record = json.loads(line)
                samples[str(record["case_id"])] = [float(x) for x in record.get("samples_s") or []]
            except (ValueError, KeyError, TypeError):
                continue  # a cut or foreign line: that case falls back to its percentiles
    return samples


def with_samples(
    pairs: list[Pair], a: dict[str, list[float]], b: dict[str, list[float]]
) -> list[Pair]:
    for p in pairs:
        p.a_samples, p.b_samples = a.get(p.a.get("case_id", "")), b.get(p.b.get("case_id", ""))
    return pairs


def load_results(path: str) -> list[dict[str, str]]:
    """A results CSV this harness wrote, or a one-line UserError naming the file."""
    try:
        rows = read_rows(path)
    except FileNotFoundError:
        raise UserError("results file not found", file=path) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError, csv.Error) as error:
        raise UserError(f"cannot read results: {type(error).__name__}", file=path) from None
    if not rows:
        raise UserError("no rows: not a results file of this harness, or an empty run", file=path)
    missing = [c for c in REQUIRED if c not in rows[0]]
    if missing:
        raise UserError(
            f"not a results file of this harness (no column {', '.join(missing)})", file=path
        )
    return rows


def pair_files(
    a_rows: list[dict[str, str]], b_rows: list[dict[str, str]]
) -> tuple[list[Pair], list[str]]:
    """Matched ok cases, and the cases of A that failed in B."""
    params = param_columns(a_rows)
    a_keys = {case_key(r, params) for r in a_rows}
    b_by_key = {case_key(r, params): r for r in b_rows if r.get("status") == "ok"}
    failed = [
        case_key(r, params)
        for r in b_rows
        if r.get("status") in FAILED and case_key(r, params) in a_keys
    ]
    pairs = [
        Pair(case_key(r, params), r, b_by_key[case_key(r, params)])
        for r in a_rows
        if r.get("status") == "ok" and case_key(r, params) in b_by_key
    ]
    return pairs, failed


def pair_groups(
    rows: list[dict[str, str]], column: str, baseline: str | None
) -> tuple[list[Pair], list[str]]:
    """Each group's rows against the baseline group's, and the non-baseline cases that failed."""
    if rows and column not in rows[0]:
        raise UserError(
            f"no column '{column}' in the results",
            key="--by",
            suggestion=did_you_mean(column, rows[0]),
        )
    params = [p for p in param_columns(rows) if p != column]
    ok = [r for r in rows if r.get("status") == "ok"]
    values = list(dict.fromkeys(r[column] for r in ok))
    base = baseline or (values[0] if values else None)
    # a side may hold several rows of one case (PyTorch's eager and compile twins): each is paired
    groups: dict[str, dict[str, list[dict[str, str]]]] = {}
    for r in ok:
        key = case_key(r, params, exclude=column)
        groups.setdefault(key, {}).setdefault(r[column], []).append(r)

    def side(value: str, row: dict[str, str], rows: list[dict[str, str]]) -> str:
        return value if len(rows) == 1 else f"{value}:{row.get('implementation', '')}"

    failed = [
        case_key(r, params, exclude=column) + f" [{r[column]}]"
        for r in rows
        if r.get("status") in FAILED and r.get(column) != base
    ]
    pairs = [
        Pair(f"{key} [{side(value, row, rows)} vs {side(base, b, sides[base])}]", b, row)
        for key, sides in groups.items()
        if base is not None and base in sides
        for b in sides[base]
        for value, rows in sides.items()
        if value != base
        for row in rows
    ]
    return pairs, failed


def render(pairs: list[Pair], threshold: float, a_label: str, b_label: str) -> Table:
    table = Table(
        title=f"{b_label} vs {a_label} (median time; noise = Mann-Whitney p >= {ALPHA} on the raw "
        "samples, or overlapping p10-p90 ranges where there are none)"
    )
    for col in ("case", f"{a_label} µs", f"{b_label} µs", "ratio", "p", "verdict"):
        table.add_column(col, justify="left" if col in ("case", "verdict") else "right")
    for p in pairs:
        a, b = Pair._f(p.a, "time_median_s"), Pair._f(p.b, "time_median_s")
        table.add_row(
            p.key,
            f"{a * 1e6:.2f}" if a else "",
            f"{b * 1e6:.2f}" if b else "",
            f"{p.ratio:.3f}" if p.ratio else "",
            "" if p.p_value is None else f"{p.p_value:.2g}",
            p.verdict(threshold),
        )
    return table


def as_records(pairs: list[Pair], failed: list[str], threshold: float) -> dict[str, Any]:
    """`compare --json`: every matched case with both medians, the ratio, the test's p and the verdict."""
    return {
        "threshold": threshold,
        "alpha": ALPHA,
        "pairs": [
            {
                "case": p.key,
                "baseline_median_s": Pair._f(p.a, "time_median_s"),
                "candidate_median_s": Pair._f(p.b, "time_median_s"),
                "ratio": p.ratio,
                "p_value": p.p_value,
                "verdict": p.verdict(threshold),
            }
            for p in pairs
        ],
        "failed_in_candidate": failed,
    }


def run_compare(
    files: list[str],
    by: str | None,
    baseline: str | None,
    threshold: float,
    as_json: bool = False,
) -> int:
    """0: every matched case within the threshold or noise; 1: a candidate case regressed or failed;
    2 (UserError): nothing to compare."""
    if not math.isfinite(threshold) or threshold < 0:
        raise UserError(f"must be a finite number >= 0, got {threshold}", key="--threshold")
    if by:
        if len(files) != 1:
            raise UserError(
                "--by compares groups inside one results file; give exactly one file", key="--by"
            )
        pairs, failed = pair_groups(load_results(files[0]), by, baseline)
        samples = load_samples(files[0])
        pairs = with_samples(pairs, samples, samples)
        labels = (f"{by}={baseline or 'first'}", "other")
    else:
        if len(files) != 2:
            raise UserError(
                "compare needs two results files (baseline, candidate), or one file and --by COLUMN"
            )
        pairs, failed = pair_files(load_results(files[0]), load_results(files[1]))
        pairs = with_samples(pairs, load_samples(files[0]), load_samples(files[1]))
        labels = (files[0], files[1])
    if not pairs and not failed:
        raise UserError(
            "no case matches between the two sides (different ops, parameters or backends?)",
            file=" vs ".join(files),
        )
    slower = [p for p in pairs if p.verdict(threshold) == "slower"]
    if as_json:
        print(json.dumps(as_records(pairs, failed, threshold), indent=2))
        return 1 if slower or failed else 0
    table_console().print(render(pairs, threshold, *labels))
    for key in failed:
        print(f"failed in the candidate: {key}")
    if slower:
        print(
            f"regression: {len(slower)} of {len(pairs)} matched cases are slower by more than {threshold:.0%}"
        )
    return 1 if slower or failed else 0
