"""The device timer as a library: `bench(fn, *args)` times any callable through the same backend,
timer, procedure and row as a catalogue op (ops/callables.py makes it one); `table` lays results out,
`ab` alternates two callables, `save` stores them for compare. Keywords are the bench's own
(`BENCH_OPTIONS`) or YAML run settings (the same names and checks)."""

from __future__ import annotations

import dataclasses
import io
import itertools
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from accelbench.core.case import AbSettings, Case, Outputs, RunSettings
from accelbench.errors import UserError, visible
from accelbench.ops.callables import CallableParams
from accelbench.results.records import Row

# bench()'s own keywords; every other keyword is a run setting
BENCH_OPTIONS = (
    *("name", "variant", "backend", "reference", "rtol"),
    *("flops", "bytes", "dtype", "inputs"),
)
_counter = itertools.count()
PROGRESS_S = 5.0  # ab()'s rounds said on stderr at most this often, the first after this long


class BenchError(UserError, ValueError):
    """A bad argument to bench() or ab(): one line naming the keyword, raised before anything runs."""


def _number_at_least(low: float, value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value >= low


def _backends() -> tuple[str, ...]:
    from accelbench.platform.backends import BACKENDS

    return tuple(BACKENDS)


# what each of bench()'s own keywords must be, where it can be wrong before anything runs
ARGUMENT_RULES: dict[str, tuple[Callable[[Any], bool], Callable[[], str]]] = {
    "flops": (lambda v: _number_at_least(0, v), lambda: "a number >= 0"),
    "bytes": (lambda v: _number_at_least(0, v), lambda: "a number >= 0"),
    "rtol": (lambda v: _number_at_least(0, v) and v > 0, lambda: "a number > 0"),
    "backend": (lambda v: v in _backends(), lambda: f"one of {', '.join(_backends())}"),
    "reference": (callable, lambda: "a function"),
    "inputs": (
        lambda v: isinstance(v, (list, tuple)) and len(v) > 0,
        lambda: "a list of argument tuples",
    ),
}


def _checked(fn: Any, options: dict[str, Any]) -> None:
    if not callable(fn):
        raise BenchError(f"must be a function, got {type(fn).__name__}", key="bench(): fn")
    for key, (fits, wanted) in ARGUMENT_RULES.items():
        if options.get(key) is not None and not fits(options[key]):
            got = visible(repr(options[key]))[:60]
            raise BenchError(f"must be {wanted()}, got {got}", key=f"bench(): {key}")


@dataclass(frozen=True)
class Result:
    """One measurement: the row every output of the project writes, with the views a caller wants."""

    row: Row

    @property
    def ok(self) -> bool:
        return self.row.ok

    @property
    def median_s(self) -> float | None:
        return self.row.median_s

    @property
    def samples_s(self) -> list[float]:
        return list(self.row.series.samples_s)

    @property
    def interval_s(self) -> tuple[float | None, float | None]:  # p10, p90
        return self.row.stats.time_p10_s, self.row.stats.time_p90_s

    @property
    def time_definition(self) -> str | None:  # `xprof`, `cupti`, `wall_clock`, ...
        return self.row.timing.timing_source

    @property
    def kernels(self) -> str | None:
        return self.row.timing.top_kernels

    @property
    def threads(self) -> int | None:  # the host threads its framework used (NumPy: its BLAS's)
        return self.row.conditions.thread_count

    def __str__(self) -> str:
        from accelbench.results.console import format_seconds

        r = self.row
        if not r.ok:
            return visible(f"{_name(r)}: {r.status.value}: {r.identity.error}")
        low, high = self.interval_s
        rate = f", {r.derived.tflop_per_s:.3g} TFLOP/s" if r.derived.tflop_per_s else ""
        rate += f", {r.derived.gb_per_s:.4g} GB/s" if r.derived.gb_per_s else ""
        host = f", host threads {self.threads}" if r.environment.platform == "cpu" else ""
        return visible(
            f"{_name(r)}: {format_seconds(r.median_s)} median ({r.timing.timing_source}"
            f"{host}; p10-p90 {format_seconds(low)}-{format_seconds(high)}, "
            f"{r.stats.sample_count} samples, stopped: {r.stats.stop_reason}){rate}; check "
            f"{r.timing.check or 'off'}"
        )


def _backend(fn: Callable[..., Any], arg_sets: Sequence[tuple[Any, ...]]) -> str:
    roots = {type(a).__module__.split(".")[0] for args in arg_sets for a in args}
    if roots & {"jax", "jaxlib"} or hasattr(fn, "lower"):
        return "jax"
    return "torch" if "torch" in roots else "numpy"


def _case(fn: Callable[..., Any], options: dict[str, Any], settings: dict[str, Any]) -> Case:
    from accelbench.catalogue import get_spec
    from accelbench.config.settings import RUN_KEYS, checked_run, run_settings
    from accelbench.ops.callables import OP

    unknown = sorted(set(settings) - set(RUN_KEYS))
    if unknown:
        raise BenchError(
            f"not a bench() option or run setting: {', '.join(unknown)} (bench options: "
            f"{', '.join(BENCH_OPTIONS)}; arguments of the function itself go through "
            "functools.partial)",
            key="bench()",
        )
    try:
        run = checked_run(run_settings(RunSettings(), settings, "bench()"), "bench()")
        spec = get_spec(OP)
        checked = {
            p.name: p.validate(options[p.name], f"bench(): {p.name}")
            for p in spec.params
            if p.name in options
        }
    except UserError as error:  # a run setting's own check: the same line, as a ValueError
        raise BenchError(error.message, key=error.key, suggestion=error.suggestion) from None
    params = spec.made({**{p.name: p.default for p in spec.params}, **checked})
    return Case(
        OP, options["backend"], params, run, Outputs(csv_path=""), checked.get("name", "fn")
    )


def bench(fn: Callable[..., Any], *args: Any, **keywords: Any) -> Result:
    """Time `fn(*args)`, checked first against `reference` (of float64 copies of the inputs).
    `inputs=[args, ...]` rotates input sets; `flops=`/`bytes=` give rates; `name=`/`variant=` tell
    rows apart (by default the function's name, `default`)."""
    from accelbench.core.options import RunOptions
    from accelbench.ops.callables import CALLS, Call
    from accelbench.run.session import execute_all

    options = {k: keywords.pop(k) for k in BENCH_OPTIONS if k in keywords}
    _checked(fn, options)
    arg_sets = [tuple(s) for s in options.pop("inputs", None) or [args]]
    if args and len(arg_sets) > 1:
        raise BenchError("give the function's arguments or inputs=[...], not both", key="bench()")
    options.setdefault("name", getattr(fn, "__name__", None) or f"fn{next(_counter)}")
    options.setdefault("backend", _backend(fn, arg_sets))
    if len(arg_sets) > 1:
        keywords.setdefault("inputs", "rotate")
        keywords.setdefault("input_sets", len(arg_sets))
    case = _case(fn, options, keywords)
    CALLS[case.params.name] = Call(fn, arg_sets, options.get("reference"), options.get("rtol"))
    try:
        (row,) = execute_all([case], RunOptions(progress=False))
    finally:
        CALLS.pop(case.params.name, None)
    return Result(row)


def _name(row: Row) -> str:
    return str(cast(CallableParams, row.params).name)


class Table:
    """Results as text (`print()`), in a notebook (`_repr_html_`) or a rich console (`__rich__`)."""

    def __init__(self, rich_table: Any, notes: Sequence[str] = ()) -> None:
        self.rich, self.notes = rich_table, [visible(n) for n in notes]

    def __rich__(self) -> Any:
        return self.rich

    def _rendered(self, record: bool = False) -> Any:
        from rich.console import Console

        from accelbench.results.console import table_console

        console = Console(file=io.StringIO(), width=table_console().width, record=record)
        console.print(self.rich)
        for note in self.notes:
            console.print(note, markup=False, highlight=False)
        return console

    def __str__(self) -> str:
        return self._rendered().file.getvalue().rstrip("\n")

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return str(self._rendered(record=True).export_html(inline_styles=True))


def table(
    results: Sequence[Result],
    by: str | None = None,
    baseline: str | None = None,
    threshold: float = 0.05,
) -> Table:
    """One line each, or (`by`: a column such as `variant`) cases down and that column's values
    across, each a ratio to `baseline` (default: the first), `?` where inconclusive (the reasons
    under the table); a case without a baseline keeps its line, a blank there."""
    rows = [dataclasses.replace(r.row, source=_name(r.row)) for r in results]
    if by:
        from accelbench.results.compare import grid, pair_groups
        from accelbench.results.compare_formats import grid_table

        comparison = pair_groups(rows, by, baseline)
        made = grid(comparison, by, comparison.base, threshold)
        return Table(grid_table(made), made.notes)
    from accelbench.results.sinks.summary import cpu_note, summary_table

    note = cpu_note(rows)
    return Table(summary_table(rows)[0], [note] if note else [])


@dataclass(frozen=True)
class AbResult:
    """`ab(f, g, ...)`: each side's row over every round, and the paired verdict."""

    a: Result
    b: Result
    ratio: float | None  # the median of the per-round ratios b / a
    interval: tuple[float, float] | None  # its 95% interval (order statistics over the rounds)
    rounds: int
    verdict: str  # the one verdict function's, with what it rests on
    table: Table

    def __str__(self) -> str:
        return str(self.table)

    def _repr_html_(self) -> str:
        return self.table._repr_html_()


def ab(
    f: Callable[..., Any],
    g: Callable[..., Any],
    *args: Any,
    threshold: float = 0.05,
    quiet: bool = False,
    **keywords: Any,
) -> AbResult:
    """Time `f(*args)` (the baseline) and `g(*args)` in alternating rounds and judge g from the
    per-round ratios (drift and load fall on both alike). `rounds`, `round_runs`, `ratio_precision`:
    `microbench ab`'s settings; other keywords go to `bench()`; slow rounds are said unless `quiet`."""
    from accelbench.results.compare import check_threshold
    from accelbench.results.compare_formats import pairs_table
    from accelbench.run.ab import ab_report, ab_settings, interleave

    names = [f.name for f in dataclasses.fields(AbSettings)]
    try:
        settings = ab_settings({k: keywords.pop(k) for k in names if k in keywords})
        check_threshold(threshold, "ab(): threshold")
    except UserError as error:
        raise BenchError(error.message, key=error.key) from None
    sides = (_CallableSide("a", f, args, keywords), _CallableSide("b", g, args, keywords))
    for side in sides:  # every argument checked before the first round
        _checked(side.fn, {k: keywords[k] for k in BENCH_OPTIONS if k in keywords})
    (pair,) = interleave(*sides, settings, (lambda _: None) if quiet else _every(PROGRESS_S))
    assert pair.b is not None  # a side always has its row (a failed call is a row too)
    report = ab_report([pair], threshold, (_name(pair.a), _name(pair.b)))
    (line,) = report.every
    interval = None if line.ratio_low is None else (line.ratio_low, line.ratio_high)
    return AbResult(
        Result(pair.a),
        Result(pair.b),
        line.ratio,
        interval,  # type: ignore[arg-type]
        pair.rounds or 0,
        line.verdict,
        Table(pairs_table(report), report.notes),
    )


def _every(seconds: float) -> Callable[[str], None]:
    last = time.monotonic()

    def say(line: str) -> None:
        nonlocal last
        if time.monotonic() - last >= seconds:
            last = time.monotonic()
            print(f"ab(): {visible(line)}", file=sys.stderr, flush=True)

    return say


@dataclass
class _CallableSide:
    label: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    keywords: dict[str, Any]

    def measure(self, round_no: int, runs: int | None) -> list[Row]:
        extra = {"num_runs": runs} if runs else {}
        return [bench(self.fn, *self.args, **{**self.keywords, **extra}).row]


def save(results: Sequence[Result], path: str) -> str:
    """The results through the one writer, numbered in the run store as a config's runs are (`path`,
    then `path.2.csv`, ...); the file written."""
    from accelbench.core.options import RunOptions
    from accelbench.platform.environment import new_run_id
    from accelbench.results import run_store
    from accelbench.results.writer import write_rows

    case = Case("callable", "numpy", {}, RunSettings(), Outputs(csv_path=path), benchmark="bench")
    assigned = run_store.assign([case], RunOptions(), "bench()", new_run_id(), command_line=True)
    written = assigned.cases[0].outputs.csv_path
    write_rows(written, [r.row for r in results])
    return written
