"""`microbench report`: charts, a Markdown summary and one self-contained HTML page from results
files; every text from a file is escaped where it lands."""

from __future__ import annotations

import base64
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from accelbench.errors import UserError, visible
from accelbench.names import portable_name
from accelbench.platform.backends import BACKENDS, run_order
from accelbench.results import charts
from accelbench.results.charts import plt, save_figure
from accelbench.results.compare import rows_of
from accelbench.results.console import cpu_threads, op_name, value_of, varying
from accelbench.results.display import (
    AUDITED,
    REPORT,
    Column,
    cells,
    choose,
    escaped,
    html_safe,
    markdown_safe,
    sort_rows,
)
from accelbench.results.history import as_text as history_text
from accelbench.results.records import DeviceState, Labelled, Row, Variants, speedup
from accelbench.results.writer import OutputFailed, write_atomically

MARKERS = ("o", "^", "s", "D", "v", "P", "X")
COPY_OPS = ("single_device_hbm_copy", "copy", "hbm_bandwidth")  # a measured memory ceiling
TABLE_ROWS = 1000  # rows in the Markdown and HTML tables; the CSV holds every row
FLOP_BOUND = 4.0  # FLOP per byte at and above which an op's throughput is reported in TFLOP/s


def marker(backend: str) -> str:
    names = sorted(BACKENDS, key=run_order)
    return MARKERS[names.index(backend) % len(MARKERS)] if backend in names else MARKERS[-1]


def flop_bound(row: Row) -> bool:
    intensity = row.derived.intensity_flop_per_byte
    return bool(row.derived.model_flop) and intensity is not None and intensity >= FLOP_BOUND


def series_label(row: Row) -> str:
    """What a roofline point's colour stands for: the op, and its variant (a torchao recipe)."""
    variant = row.extras.variant if isinstance(row.extras, Variants) else None
    return f"{op_name(row)} {variant}" if variant else op_name(row)


def _scatter(ax: Any, points: Sequence[Row]) -> None:
    """The measured points: colour by series, marker by backend (by source, over several runs)."""
    frame = pd.DataFrame(
        {
            "intensity": [r.derived.intensity_flop_per_byte for r in points],
            "TFLOP/s": [r.derived.tflop_per_s for r in points],
            "series": [series_label(r) for r in points],
            "backend": [r.identity.backend for r in points],
            "source": [visible(r.source) for r in points],  # a file name not in UTF-8 drawn too
        }
    )
    sources = sorted(set(frame["source"]))
    several = len(sources) > 1
    kinds = sources if several else sorted(set(frame["backend"]), key=run_order)
    sns.scatterplot(
        data=frame,
        x="intensity",
        y="TFLOP/s",
        hue="series",
        style="source" if several else "backend",
        style_order=kinds,
        markers={
            k: MARKERS[i % len(MARKERS)] if several else marker(k) for i, k in enumerate(kinds)
        },
        palette="tab20" if frame["series"].nunique() > 10 else "tab10",
        s=40,
        ax=ax,
    )


def _roofs(ax: Any, rows: Sequence[Row], points: Sequence[Row]) -> bool:
    """The peak table's roofs where it knows the device, and the best measured copy bandwidth."""
    ceilings = {
        (r.roofline.peak_chip, r.roofline.peak_family): (
            float(r.roofline.peak_tflop_per_s),
            float(r.roofline.peak_gb_per_s),
        )
        for r in points
        if r.roofline.peak_tflop_per_s and r.roofline.peak_gb_per_s
    }
    intensities = [float(r.derived.intensity_flop_per_byte or 1) for r in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    for (chip, family), (tflops, gbps) in ceilings.items():
        knee = tflops * 1e12 / (gbps * 1e9)
        xs = [lo, min(max(knee, lo), hi), hi]
        ys = [min(tflops, x * gbps / 1e3) for x in xs]
        ax.plot(xs, ys, "--", lw=1, label=f"{chip} {family} roof")
    copies = [r.derived.gb_per_s for r in rows if r.identity.op in COPY_OPS and r.derived.gb_per_s]
    if copies:
        best = max(copies)
        ys = [lo * best / 1e3, hi * best / 1e3]
        ax.plot([lo, hi], ys, ":", color="gray", lw=1.2, label=f"measured copy {best:.0f} GB/s")
    return bool(ceilings or copies)


def roofline(rows: Sequence[Row], path: str) -> int:
    """Achieved TFLOP/s against arithmetic intensity, under the roofs."""
    points = [
        r for r in rows if r.ok and r.derived.tflop_per_s and r.derived.intensity_flop_per_byte
    ]
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    if points:
        _scatter(ax, points)
    roofs = _roofs(ax, rows, points)
    known = any(r.roofline.peak_tflop_per_s for r in points)
    ax.set(xscale="log", yscale="log", ylabel="achieved TFLOP/s (median)")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, from the op's models)")
    ax.set_title("roofline" + ("" if known else " (device peaks unknown: no ceilings drawn)"))
    ax.grid(True, which="both", alpha=0.3)
    if points or roofs:
        ax.legend(fontsize=7, loc="best")
    save_figure(fig, path, dpi=120)
    return len(points)


Point = tuple[float, float, float, float]  # axis value, metric, minus and plus error


@dataclass
class Sweep:
    """One op's sweep: the same series drawn twice, as latency and as throughput."""

    axis: str  # the dimension that varies most
    metric: str  # "TFLOP/s" for FLOP-bound ops, "GB/s" otherwise
    throughput: dict[str, list[Point]]  # bars: the throughput at the p90 and p10 times
    latency: dict[str, list[Point]]  # µs, bars: p10 and p90


def _sweep(op: str, mine: list[Row]) -> Sweep | None:
    values: dict[str, set[str]] = defaultdict(set)
    for r in mine:
        for name, value in r.params.as_dict().items():
            values[name].add(str(value))
    dims = [d for d in charts.dimensions(op, mine[0].params) if len(values.get(d, ())) > 2]
    if not dims:
        return None
    axis = max(dims, key=lambda d: len(values[d]))
    metric = "TFLOP/s" if sum(map(flop_bound, mine)) * 2 >= len(mine) else "GB/s"
    # a parameter that takes one value per axis value is tied to the axis (n: SAME_AS_m): no series
    per_axis: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in mine:
        for name, value in r.params.as_dict().items():
            per_axis[name][str(r.params.value(axis))].add(str(value))
    tied = {name for name, by in per_axis.items() if all(len(v) == 1 for v in by.values())}
    names = [n for n in ("implementation", *values) if n != axis and n not in tied]
    split = varying(mine, ["source", "backend", *names]) if len(mine) > 1 else []
    lines: dict[str, list[Point]] = defaultdict(list)
    times: dict[str, list[Point]] = defaultdict(list)
    for r in mine:
        label = (
            " ".join(f"{k}={value_of(r, k)}" for k in split if value_of(r, k) not in (None, ""))
            or op
        )
        median = float(r.median_s or 0.0)
        fast, slow = r.stats.time_p10_s or median, r.stats.time_p90_s or median
        x = float(r.params.value(axis))
        times[label].append((x, median * 1e6, (median - fast) * 1e6, (slow - median) * 1e6))
        value = r.derived.tflop_per_s if metric == "TFLOP/s" else r.derived.gb_per_s
        if value is not None:
            low, high = value * median / slow, value * median / fast
            # rates at the p90 and p10 times: never past the median's own by a rounding error
            lines[label].append((x, value, max(0.0, value - low), max(0.0, high - value)))
    # series of one point each are unrelated shapes (the llama layers): no line may join them
    kept = {k: sorted(v) for k, v in lines.items() if len(v) > 1}
    return Sweep(axis, metric, kept, {k: sorted(times[k]) for k in kept}) if kept else None


def sweep_series(rows: Sequence[Row]) -> dict[str, Sweep]:
    """Per op, one series per backend, implementation and parameter setting."""
    by_op: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r.ok and r.median_s:
            by_op[r.identity.op].append(r)
    return {op: s for op in sorted(by_op) if (s := _sweep(op, by_op[op])) is not None}


def sweeps(rows: Sequence[Row], out_dir: str) -> dict[str, int]:
    written: dict[str, int] = {}
    for op, sweep in sweep_series(rows).items():
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
        palette = sns.color_palette("tab10", len(sweep.latency))
        colours = dict(zip(sweep.latency, palette, strict=True))
        for ax, series, ylabel in (
            (left, sweep.latency, "µs per iteration (median)"),
            (right, sweep.throughput, sweep.metric),
        ):
            for label, pts in series.items():
                x, y, minus, plus = zip(*pts, strict=True)
                ax.errorbar(
                    x, y, [minus, plus], marker="o", capsize=3, label=label, color=colours[label]
                )
            ax.set_xscale("log", base=2)
            ax.set(xlabel=sweep.axis, ylabel=ylabel)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        left.set(yscale="log", title=f"{op}: latency over {sweep.axis} (bars: p10-p90)")
        right.set_title(f"{op}: {sweep.metric} over {sweep.axis}")
        path = save_figure(fig, os.path.join(out_dir, f"sweep_{portable_name(op)}.png"), dpi=110)
        written[path] = sum(len(p) for p in sweep.throughput.values())
    return written


class Bar(NamedTuple):
    label: str
    value: float  # the speedup
    doubtful: bool = False  # a side is noisy or was timed on a loaded host


def _labels(rows: Sequence[Row], first: tuple[str, ...] = ()) -> list[str]:
    """Each row's label: the values of every parameter that varies among the rows, `first` first."""
    names = list(
        dict.fromkeys([*first, *(n for r in rows for n in r.params.as_dict()), "implementation"])
    )
    keys = varying(rows, [n for n in names if n != "backend"])
    return [
        " ".join(str(value_of(r, k)) for k in keys if value_of(r, k) not in (None, "", "none"))
        or r.identity.op
        for r in rows
    ]


SUITE_SPEEDUPS = {"quantization": "recipe_over_baseline", "fusion": "fused_over_unfused"}
PAIRED = "jax_over_torch"
LEADING = {PAIRED: ("op",)}  # what a chart's labels start with (else the extras' LABEL_ORDER)


def speedups(rows: Sequence[Row]) -> dict[str, list[Bar]]:
    """JAX over PyTorch for paired cases, a torchao recipe over its baseline, fused over unfused."""
    ok = [r for r in rows if r.ok]
    by_id: dict[str | None, Row] = {r.identity.case_id: r for r in ok}
    found: dict[str, list[tuple[Row, float, bool]]] = defaultdict(list)
    for r in ok:
        j = by_id.get(r.pairing.paired_with) if r.identity.backend != "jax" else None
        if j is not None and j.median_s and r.median_s:
            found[PAIRED].append((r, r.median_s / j.median_s, bool(r.doubt or j.doubt)))
        value, kind = speedup(r), SUITE_SPEEDUPS.get(r.identity.suite)
        if kind and value and not (isinstance(r.extras, Variants) and r.extras.is_reference):
            found[kind].append((r, float(value), bool(r.doubt)))
    out: dict[str, list[Bar]] = {}
    for kind in (PAIRED, *SUITE_SPEEDUPS.values()):  # in this order whatever the rows' order
        if bars := found.get(kind):
            extras = bars[0][0].extras
            first = extras.LABEL_ORDER if isinstance(extras, Labelled) else ()
            labels = _labels([r for r, _, _ in bars], LEADING.get(kind, first))
            out[kind] = [Bar(label, v, d) for label, (_, v, d) in zip(labels, bars, strict=True)]
    return out


SPEEDUP_TITLES = {
    "jax_over_torch": "JAX speedup over PyTorch (PyTorch time / JAX time, same case and inputs)",
    "recipe_over_baseline": "torchao recipe speedup over the high-precision baseline",
    "fused_over_unfused": "fused speedup over the unfused pattern",
}


def speedup_charts(rows: Sequence[Row], out_dir: str) -> dict[str, int]:
    written: dict[str, int] = {}
    # on a CPU a ratio depends on each side's host threads: the chart says how many each had
    cpu = cpu_threads(rows)
    threads = f"\nCPU wall clock; host threads: {', '.join(cpu)}" if cpu else ""
    for kind, bars in speedups(rows).items():
        fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * len(bars)))
        values = [b.value for b in bars]
        palette = sns.color_palette()
        colours = ["lightgrey" if b.doubtful else palette[2 if b.value >= 1 else 3] for b in bars]
        # from the break-even line to the value: faster cases grow right, slower left
        drawn = ax.barh(range(len(bars)), [v - 1 for v in values], left=1, color=colours)
        for i, (patch, b) in enumerate(zip(drawn, bars, strict=True)):
            if b.doubtful:  # noisy or taken on a loaded host: drawn, never read as a verdict
                patch.set_hatch("//")
            text = f" {b.value:.2f}×{' ?' if b.doubtful else ''} "
            ax.text(
                b.value, i, text, va="center", ha="left" if b.value >= 1 else "right", fontsize=6
            )
        span = max(max(values), 1 / min(values), 1.1) * 1.6
        ax.set_xlim(1 / span, span)
        ax.set_yticks(range(len(bars)), [b.label for b in bars], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("speedup (log scale; right of the line is faster)")
        doubt = "\ngrey, hatched, ?: noisy or taken on a loaded host, no verdict"
        doubt = doubt if any(b.doubtful for b in bars) else ""
        ax.set_title(SPEEDUP_TITLES[kind] + threads + doubt, fontsize=9)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        path = os.path.join(out_dir, f"speedup_{kind}.png")
        save_figure(fig, path, dpi=110, bbox_inches="tight")  # long case labels stay whole
        written[path] = len(bars)
    return written


def table(rows: Sequence[Row], chosen: Sequence[Column] = REPORT) -> pd.DataFrame:
    """At most TABLE_ROWS rows: a page of 100k rows is read by nobody and took minutes to write."""
    columns, grid = cells(rows[:TABLE_ROWS], chosen)
    return pd.DataFrame(grid, columns=[c.heading for c in columns])


def table_note(rows: Sequence[Row]) -> str:
    many = len(rows) > TABLE_ROWS
    shown = f"The first {TABLE_ROWS} of {len(rows)} rows; the CSV holds all. " if many else ""
    return shown + (f"{AUDITED}." if any(r.timing.audit for r in rows) else "")


def markdown(rows: Sequence[Row], chosen: Sequence[Column] = REPORT) -> str:
    frame = escaped(table(rows, chosen), markdown_safe)
    note = markdown_safe(table_note(rows))
    return frame.to_markdown(index=False) + "\n" + (f"\n{note}\n" if note else "")


def runs(rows: Sequence[Row]) -> set[str]:
    stamps: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.identity.run_id:
            stamps[r.identity.run_id].append(r.identity.timestamp[:19])
    return {f"{run} ({min(s)} to {max(s)})" for run, s in stamps.items()}


def _state(state: DeviceState) -> str:
    return ", ".join(
        f"{name}={value}" for name, value in asdict(state).items() if value is not None
    )


def environment_lines(rows: Sequence[Row]) -> list[str]:
    env = [r.environment for r in rows]
    facts = (
        ("device", {f"{e.device_kind} ({e.platform})" for e in env if e.device_kind}),
        ("frameworks", {f"{e.framework} {e.framework_version}" for e in env if e.framework}),
        ("versions", {e.packages for e in env if e.packages}),
        (
            "commit",
            {f"{e.git_commit}{' (dirty)' if e.git_dirty else ''}" for e in env if e.git_commit},
        ),
        ("machine", {f"{e.host}: {e.cpu_model} ({e.host_cpu_count} CPUs)" for e in env if e.host}),
        ("device state", {_state(r.device_state) for r in rows if r.device_state.clocks_set}),
        ("runs", runs(rows)),
    )
    return [f"{name}: {'; '.join(sorted(values))}" for name, values in facts if values]


def html_page(
    source: str,
    rows: Sequence[Row],
    images: dict[str, int],
    chosen: Sequence[Column],
    maps: dict[str, str],
) -> str:
    """One self-contained page (charts inlined; `maps`: a chart's image-map areas), the table."""
    figures = "".join(
        f"<figure><img alt='{html_safe(os.path.basename(path))}' src='data:image/png;base64,"
        f"{base64.b64encode(open(path, 'rb').read()).decode()}'"
        # a mapped chart at its own size: an image map's areas do not scale with the picture
        + (
            f" style='max-width:none' usemap='#map{i}'><map name='map{i}'>{maps[path]}</map>"
            if path in maps
            else ">"
        )
        + "<figcaption>"
        f"{html_safe(os.path.basename(path))}: {count} points</figcaption></figure>\n"
        for i, (path, count) in enumerate(images.items())
    )
    ok = sum(r.ok for r in rows)
    noisy = sum(bool(r.stats.noisy) for r in rows)
    facts = "".join(f"<li>{html_safe(line)}</li>" for line in environment_lines(rows))
    frame = escaped(table(rows, chosen), html_safe)
    body = frame.to_html(index=False, escape=False, border=0, classes="rows")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>microbench report: {html_safe(source)}</title><style>"
        "body{font-family:sans-serif;margin:1.5em}img{max-width:100%}figure{margin:1em 0}"
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style></head><body>"
        f"<h1>{html_safe(source)}</h1><ul>{facts}</ul><p>{len(rows)} rows, {ok} ok, {noisy} noisy. "
        "Times are per iteration as each row's timing column defines it; bars span p10-p90; noise is "
        "the IQR as a share of the median.</p>"
        f"<h2>Charts</h2>{figures}<h2>Rows</h2><p>{html_safe(table_note(rows))}</p>{body}</body></html>\n"
    )


def label_sources(read: Sequence[tuple[str, Sequence[Row]]]) -> None:
    """Rows of several runs or files say which they came from: the run's label, else the file's
    name, else its path (a run id where one file holds several runs)."""
    if len(read) < 2 and len({r.identity.run_id for _, rows in read for r in rows}) < 2:
        return
    labels: dict[str, str] = {}
    for run in charts.stored_runs([path for path, _ in read]):
        labels.update((os.path.abspath(f), run.name or os.path.basename(f)) for f in run.files)
    names = {path: labels.get(os.path.abspath(path), os.path.basename(path)) for path, _ in read}
    if len(set(names.values())) < len(names):  # two files of one name: their paths
        names = {path: path for path, _ in read}
    for path, rows in read:
        several = len({r.identity.run_id for r in rows}) > 1
        for r in rows:
            r.source = f"{names[path]} {r.identity.run_id[:8]}" if several else names[path]


def run_report(
    paths: Sequence[str],
    out_dir: str,
    columns: Sequence[str] = (),
    sort: str | None = None,
    sample_charts: bool = False,
) -> None:
    chosen = choose(columns, REPORT)
    # a foreign or broken file is refused before anything
    read = [(path, rows_of(path, series="all")) for path in paths]
    label_sources(read)
    rows = sort_rows([r for _, found in read for r in found], sort)
    key = f"--output-dir '{out_dir}'"
    if not out_dir.strip():
        raise UserError("names no folder", key=key)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UserError("the report directory is a file", key=key)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot create it: {error.strerror}", key=key) from None
    for entry in os.scandir(out_dir):  # refused before the first chart: nothing written, exit 2
        if entry.name.endswith((".png", "summary.md", "report.html")) and not entry.is_file(
            follow_symlinks=False
        ):
            what = "a symbolic link" if entry.is_symlink() else "no file"
            raise UserError(
                f"{entry.name} is {what}: refused (a report replaces files only)", key=key
            )
    try:
        _write_report(paths, rows, out_dir, chosen, sample_charts)
    except (OSError, OutputFailed) as error:  # a full disk or a folder that refuses, mid-report
        if isinstance(error, OutputFailed) and error.strerror is None:  # refused for its own reason
            raise
        raise OutputFailed(f"cannot write the report: {error.strerror}", key=key) from None


def _write_report(
    paths: Sequence[str],
    rows: list[Row],
    out_dir: str,
    chosen: Sequence[Column],
    sample_charts: bool,
) -> None:
    title = paths[0] if len(paths) == 1 else f"{len(paths)} results files: {', '.join(paths)}"
    found = charts.report_histories(paths)
    roof = os.path.join(out_dir, "roofline.png")
    charted = charts.drawable(rows)
    counts = {
        roof: roofline(charted, roof),
        **sweeps(charted, out_dir),
        **speedup_charts(charted, out_dir),
        **charts.time_series(charted, out_dir, sample_charts),
    }
    maps, steps = {}, ""
    if found:  # the runs span commits: each case's history, its steps in the summary
        drawn, points, areas = charts.history_chart(found, out_dir)
        counts[drawn], maps[drawn] = points, areas
        table = history_text(found, "markdown")
        steps = f"\n## History (median per run, in commit order)\n\n{table}"
    summary, page = (os.path.join(out_dir, name) for name in ("summary.md", "report.html"))
    text = (
        f"# Results: {markdown_safe(title)}\n\n"
        + "".join(f"- {markdown_safe(line)}\n" for line in environment_lines(rows))
        + "\n"
        + markdown(rows, chosen)
        + steps
        + "\n## Charts\n\n"
        + "".join(f"- {os.path.basename(p)}: {n} points\n" for p, n in counts.items())
    )
    write_atomically(summary, lambda f: f.write(text))
    write_atomically(page, lambda f: f.write(html_page(title, rows, counts, chosen, maps)))
    for p, n in counts.items():
        print(f"{p}: {n} points")
    print(f"{summary}\n{page}")
