"""The device timer as a library: `bench(fn, *args)` times any callable (a jitted JAX function, PyTorch
eager or compiled, a Triton launch, NumPy on a CPU) through the same backend, timer, procedure and row
as a catalogue op (accelbench/ops/callables.py makes it one), and returns a printable `Result`.

    import accelbench
    r = accelbench.bench(torch.matmul, a, b, flops=2 * m * n * k)   # device kernel time on a GPU
    print(r)                       # median, interval, samples, time definition, check
    accelbench.table([r, r2], by="variant")   # ops x variants; accelbench.save(...) for compare/report

Keyword arguments are the bench's own (`BENCH_OPTIONS`) or run settings of the YAML path (num_runs,
warmup, cache, target_precision, max_time_s, ...; the same names and checks); arguments for the function
itself go through functools.partial or a lambda.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from accelbench.core.case import Case, Outputs, RunSettings
from accelbench.errors import UserError
from accelbench.ops.callables import CallableParams
from accelbench.results.records import Row

# bench()'s own keywords; every other keyword is a run setting
BENCH_OPTIONS = (
    "name",
    "variant",
    "backend",
    "reference",
    "rtol",
    "flops",
    "bytes",
    "dtype",
    "inputs",
)
_counter = itertools.count()


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
    def interval_s(self) -> tuple[float | None, float | None]:
        """The 10th and 90th percentiles of the samples."""
        return self.row.stats.time_p10_s, self.row.stats.time_p90_s

    @property
    def time_definition(self) -> str | None:
        """What the time is and where it came from (`xprof`, `cupti`, `wall_clock`, ...)."""
        return self.row.timing.timing_source

    @property
    def kernels(self) -> str | None:
        return self.row.timing.top_kernels

    def __str__(self) -> str:
        from accelbench.results.console import format_seconds

        r = self.row
        if not r.ok:
            return f"{_name(r)}: {r.status.value}: {r.identity.error}"
        low, high = self.interval_s
        rate = f", {r.derived.tflop_per_s:.3g} TFLOP/s" if r.derived.tflop_per_s else ""
        rate += f", {r.derived.gb_per_s:.4g} GB/s" if r.derived.gb_per_s else ""
        return (
            f"{_name(r)}: {format_seconds(r.median_s)} median ({r.timing.timing_source}; "
            f"p10-p90 {format_seconds(low)}-{format_seconds(high)}, {r.stats.sample_count} samples, "
            f"stopped: {r.stats.stop_reason}){rate}; check {r.timing.check or 'off'}"
        )


def _backend(fn: Callable[..., Any], arg_sets: Sequence[tuple[Any, ...]]) -> str:
    """The framework the arguments (or a jitted function) belong to; NumPy otherwise."""
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
        raise UserError(
            f"not a bench() option or run setting: {', '.join(unknown)} (bench options: "
            f"{', '.join(BENCH_OPTIONS)}; arguments of the function itself go through "
            "functools.partial)",
            key="bench()",
        )
    run = checked_run(run_settings(RunSettings(), settings, "bench()"), "bench()")
    spec = get_spec(OP)
    given: dict[str, Any] = {k: options[k] for k in spec.param_names if k in options}
    checked: dict[str, Any] = {
        p.name: p.validate(given[p.name], f"bench(): {p.name}")
        for p in spec.params
        if p.name in given
    }
    return Case(
        op=OP,
        backend=options["backend"],
        params=spec.made({**{p.name: p.default for p in spec.params}, **checked}),
        run=run,
        outputs=Outputs(csv_path=""),
        benchmark=checked.get("name", "fn"),
    )


def bench(fn: Callable[..., Any], *args: Any, **keywords: Any) -> Result:
    """Time `fn(*args)`: checked against `reference` (a function of float64 copies of the inputs)
    first, then timed as the run settings say. `inputs=[args, ...]` rotates input sets instead of
    one `*args`; `flops=` and `bytes=` give rates and the roofline; `name=` and `variant=` are how
    rows are told apart and compared (by default the function's name, `default`)."""
    from accelbench.ops.callables import CALLS, Call
    from accelbench.platform.environment import base_environment, new_run_id, timestamp
    from accelbench.run.runner import execute

    options = {k: keywords.pop(k) for k in BENCH_OPTIONS if k in keywords}
    arg_sets = [tuple(s) for s in options.pop("inputs", None) or [args]]
    if args and len(arg_sets) > 1 or not arg_sets:
        raise UserError("give the function's arguments or inputs=[...], not both", key="bench()")
    options.setdefault("name", getattr(fn, "__name__", None) or f"fn{next(_counter)}")
    options.setdefault("backend", _backend(fn, arg_sets))
    if len(arg_sets) > 1:
        keywords.setdefault("inputs", "rotate")
        keywords.setdefault("input_sets", len(arg_sets))
    case = _case(fn, options, keywords)
    run_id = new_run_id()
    CALLS[case.params.name] = Call(fn, arg_sets, options.get("reference"), options.get("rtol"))
    try:
        started = timestamp()
        row, _ = execute(case, run_id, base_environment(run_id), None, case.run.timeout_s)
    finally:
        CALLS.pop(case.params.name, None)
    row.started = started
    return Result(row)


def _name(row: Row) -> str:
    """The function's name a `bench()` row carries (its op's `name` parameter)."""
    return str(cast(CallableParams, row.params).name)


def table(results: Sequence[Result], by: str | None = None, baseline: str | None = None) -> Any:
    """The results as a rich table: one line each, or (`by`: a column such as `variant` or `backend`)
    ops down and that column's values across, each as a ratio to `baseline` (default: the first)."""
    rows = [dataclasses.replace(r.row, source=_name(r.row)) for r in results]
    if by:
        from accelbench.results.compare import pair_groups, pivot

        comparison = pair_groups(rows, by, baseline)
        first = str(rows[0].get(by)) if rows else ""
        return pivot(comparison, by, baseline or first)
    from accelbench.results.sinks.summary import summary_table

    return summary_table(rows)[0]


def save(results: Sequence[Result], path: str) -> str:
    """The results through the project's one writer: a results CSV and its JSON lines, numbered in the
    run store as a config's runs are (`path`, then `path.2.csv`, ...), so `compare`, `runs` and `report`
    read them. Returns the file written."""
    from accelbench.core.options import RunOptions
    from accelbench.platform.environment import new_run_id
    from accelbench.results import run_store
    from accelbench.results.columns import header
    from accelbench.results.writer import ResultFile

    rows = [r.row for r in results]
    names = list(dict.fromkeys(p for r in rows for p in r.params.as_dict()))
    case = Case(
        op="callable",
        backend="numpy",
        params={},
        run=RunSettings(),
        outputs=Outputs(csv_path=path),
        benchmark="bench",
    )
    assigned = run_store.assign([case], RunOptions(), "bench()", new_run_id(), command_line=True)
    written = assigned.cases[0].outputs.csv_path
    out = ResultFile(written, header(names, []), "", False, False)
    try:
        for row in rows:
            out.append(dataclasses.replace(row))
    finally:
        out.close()
    return written
