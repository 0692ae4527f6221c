"""`microbench report`: roofline, sweep (latency and throughput) and speedup charts, a Markdown summary
and one self-contained HTML page holding them all, from a results file."""

from __future__ import annotations

import base64
import html
import json
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from microbench.core.case import shape_label  # noqa: E402
from microbench.errors import UserError  # noqa: E402
from microbench.results.compare import load_results, number, param_columns  # noqa: E402
from microbench.results.console import distinguishing, fixed, varying  # noqa: E402

DIMENSIONS = ("m", "k", "n", "batch", "seq", "hidden", "size")


_f = number


def _v(row: dict[str, str], col: str) -> float:
    """A value known to be present (the row was filtered on it)."""
    return float(row[col])


BACKEND_MARKERS = {"jax": "o", "torch": "^", "numpy": "s"}
COPY_OPS = ("single_device_hbm_copy", "copy")  # their best GB/s is a measured memory ceiling


def roofline(rows: list[dict[str, str]], path: str) -> int:
    """Achieved TFLOP/s against arithmetic intensity: a colour per op, a marker per backend, the peak
    table's ceilings where known and the best measured copy bandwidth where the run has a copy."""
    points = [
        r
        for r in rows
        if r.get("status") == "ok" and _f(r, "tflop_per_s") and _f(r, "intensity_flop_per_byte")
    ]
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    ops = sorted({r["op"] for r in points})
    backends = sorted({r["backend"] for r in points})
    for i, op in enumerate(ops):
        for backend in backends:
            mine = [r for r in points if r["op"] == op and r["backend"] == backend]
            if mine:
                ax.scatter(
                    [_v(r, "intensity_flop_per_byte") for r in mine],
                    [_v(r, "tflop_per_s") for r in mine],
                    s=30,
                    color=plt.cm.tab20(i % 20),
                    marker=BACKEND_MARKERS.get(backend, "D"),
                    edgecolors="black" if backend == "torch" else "none",
                    linewidths=0.5,
                )
    ceilings = {
        (r.get("peak_chip"), r.get("peak_family")): (
            _v(r, "peak_tflop_per_s"),
            _v(r, "peak_gb_per_s"),
        )
        for r in points
        if _f(r, "peak_tflop_per_s") and _f(r, "peak_gb_per_s")
    }
    intensities = [_v(r, "intensity_flop_per_byte") for r in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    roofs = []
    for (chip, family), (tflops, gbps) in ceilings.items():
        knee = tflops * 1e12 / (gbps * 1e9)
        xs = [lo, min(max(knee, lo), hi), hi]
        roofs += ax.plot(
            xs, [min(tflops, x * gbps / 1e3) for x in xs], "--", lw=1, label=f"{chip} {family} roof"
        )
    copies = [_v(r, "gb_per_s") for r in rows if r.get("op") in COPY_OPS and _f(r, "gb_per_s")]
    if copies:
        best = max(copies)
        roofs += ax.plot(
            [lo, hi],
            [lo * best / 1e3, hi * best / 1e3],
            ":",
            color="gray",
            lw=1.2,
            label=f"measured copy {best:.0f} GB/s",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, from the op's models)")
    ax.set_ylabel("achieved TFLOP/s (median)")
    ax.set_title("roofline" + ("" if ceilings else " (device peaks unknown: no ceilings drawn)"))
    ax.grid(True, which="both", alpha=0.3)
    if points:
        handles = [
            Line2D([], [], ls="", marker="o", color=plt.cm.tab20(i % 20), label=op)
            for i, op in enumerate(ops)
        ] + [
            Line2D([], [], ls="", marker=BACKEND_MARKERS.get(b, "D"), color="gray", label=b)
            for b in backends
        ]
        ax.legend(handles=handles + roofs, fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return len(points)


Point = tuple[float, float, float, float]  # axis value, metric, minus and plus error


@dataclass
class Sweep:
    """One op's sweep: the same series drawn twice, as latency and as throughput."""

    axis: str  # the dimension that varies most
    metric: str  # gb_per_s for memory-bound sweeps, tflop_per_s otherwise
    throughput: dict[str, list[Point]]  # bars: the throughput at the p90 and p10 times
    latency: dict[str, list[Point]]  # µs, bars: p10 and p90


def sweep_series(rows: list[dict[str, str]]) -> dict[str, Sweep]:
    """Per op, one series per backend, implementation and parameter setting; dimensions tied to the
    axis (SAME_AS_) are not series of their own."""
    params = param_columns(rows)
    out: dict[str, Sweep] = {}
    ok = [r for r in rows if r.get("status") == "ok" and _f(r, "time_median_s")]
    for op in sorted({r["op"] for r in ok}):
        mine = [r for r in ok if r["op"] == op]
        varying = [d for d in DIMENSIONS if d in params and len({r.get(d) for r in mine}) > 2]
        if not varying:
            continue
        axis = max(varying, key=lambda d: len({r.get(d) for r in mine}))
        bound = [r.get("roofline_bound_by") for r in mine]
        metric = (
            "gb_per_s"
            if bound.count("memory") >= bound.count("compute")
            and any(_f(r, "gb_per_s") for r in mine)
            else "tflop_per_s"
        )
        series = [k for k in ("backend", "implementation", *params) if k != axis]
        tied = {
            k
            for k in series
            if all(len({x.get(k) for x in mine if x.get(axis) == r.get(axis)}) == 1 for r in mine)
        }
        split = [k for k in series if k not in tied and len({x.get(k) for x in mine}) > 1]
        lines: dict[str, list[Point]] = defaultdict(list)
        times: dict[str, list[Point]] = defaultdict(list)
        for r in mine:
            label = " ".join(f"{k}={r[k]}" for k in split if r.get(k) not in (None, "")) or op
            median = _v(r, "time_median_s")
            fast, slow = _f(r, "time_p10_s") or median, _f(r, "time_p90_s") or median
            x = float(r[axis])
            times[label].append((x, median * 1e6, (median - fast) * 1e6, (slow - median) * 1e6))
            value = _f(r, metric)
            if value is not None:
                low, high = value * median / slow, value * median / fast
                lines[label].append((x, value, value - low, high - value))
        # a "sweep" whose every series is one point is a list of unrelated shapes (the llama layers):
        # joining them would draw a line that means nothing
        kept = {k: sorted(v) for k, v in lines.items() if len(v) > 1}
        if kept:
            out[op] = Sweep(axis, metric, kept, {k: sorted(times[k]) for k in kept})
    return out


def sweeps(rows: list[dict[str, str]], out_dir: str) -> dict[str, int]:
    """Per op: latency and throughput over its sweep axis, one line with p10-p90 bars per series."""
    written: dict[str, int] = {}
    for op, sweep in sweep_series(rows).items():
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
        unit = "GB/s" if sweep.metric == "gb_per_s" else "TFLOP/s"
        for ax, series, ylabel in (
            (left, sweep.latency, "µs per iteration (median)"),
            (right, sweep.throughput, unit),
        ):
            for label, pts in series.items():
                ax.errorbar(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    yerr=[[p[2] for p in pts], [p[3] for p in pts]],
                    marker="o",
                    capsize=3,
                    label=label,
                )
            ax.set_xscale("log", base=2)
            ax.set_xlabel(sweep.axis)
            ax.set_ylabel(ylabel)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        left.set_yscale("log")
        left.set_title(f"{op}: latency over {sweep.axis} (bars: p10-p90)")
        right.set_title(f"{op}: {unit} over {sweep.axis}")
        fig.tight_layout()
        path = os.path.join(out_dir, f"sweep_{op}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written[path] = sum(len(p) for p in sweep.throughput.values())
    return written


Bar = tuple[str, float]  # label, speedup


def _labels(rows: list[dict[str, str]], first: tuple[str, ...] = ()) -> list[str]:
    """Each row's label: the values of every parameter that varies among these rows (`first` leading),
    so no two bars of a chart read the same."""
    params = param_columns(rows) if rows else []
    keys = varying(rows, (*first, *(p for p in params if p not in first), "implementation"))
    return [
        " ".join(str(r[k]) for k in keys if r.get(k) not in (None, "", "none")) or r["op"]
        for r in rows
    ]


def speedups(rows: list[dict[str, str]]) -> dict[str, list[Bar]]:
    """The ratios a run exists to show: JAX over PyTorch for paired cases (PyTorch time / JAX time),
    a torchao recipe over its baseline, a fused pattern over the unfused one."""
    ok = [r for r in rows if r.get("status") == "ok"]
    by_id = {r["case_id"]: r for r in ok}
    charts: dict[str, list[Bar]] = {}
    pairs = [
        (r, by_id[r["paired_with"]])
        for r in ok
        if r.get("backend") == "torch" and r.get("paired_with") in by_id
    ]
    pairs = [(t, j) for t, j in pairs if _f(j, "time_median_s") and _f(t, "time_median_s")]
    if pairs:
        labels = _labels([t for t, _ in pairs], ("op",))
        charts["jax_over_torch"] = [
            (label, _v(t, "time_median_s") / _v(j, "time_median_s"))
            for label, (t, j) in zip(labels, pairs, strict=True)
        ]
    recipes: list[tuple[dict[str, str], float]] = []
    for r in ok:
        dense = r.get("sparsity") in (None, "", "none")
        if r.get("op") not in ("torchao_inference", "torchao_training") or (
            r.get("recipe") == "baseline" and dense
        ):
            continue
        compiled = r.get("compile_mode") not in (None, "", "off")
        value = _f(r, "speedup_ratio") or _f(
            r, "compiled_speedup_ratio" if compiled else "eager_speedup_ratio"
        )
        if value:
            recipes.append((r, value))
    fused = [
        (r, _v(r, "speedup_ratio"))
        for r in ok
        if r.get("suite") == "fusion" and _f(r, "speedup_ratio")
    ]
    for kind, found, first in (
        ("recipe_over_baseline", recipes, ("shape_name", "m", "k", "n", "model_type", "recipe")),
        ("fused_over_unfused", fused, ("fusion_pattern",)),
    ):
        if found:
            labels = _labels([r for r, _ in found], first)
            charts[kind] = [(label, v) for label, (_, v) in zip(labels, found, strict=True)]
    return charts


SPEEDUP_TITLES = {
    "jax_over_torch": "JAX speedup over PyTorch (PyTorch time / JAX time, same case and inputs)",
    "recipe_over_baseline": "torchao recipe speedup over the high-precision baseline",
    "fused_over_unfused": "fused speedup over the unfused pattern",
}


def speedup_charts(rows: list[dict[str, str]], out_dir: str) -> dict[str, int]:
    """One horizontal bar chart per kind of ratio, with the break-even line at 1."""
    written: dict[str, int] = {}
    for kind, bars in speedups(rows).items():
        fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * len(bars)))
        values = [b[1] for b in bars]
        ax.barh(  # from the break-even line to the value: faster cases grow right, slower left
            range(len(bars)),
            [v - 1 for v in values],
            left=1,
            color=["tab:green" if v >= 1 else "tab:red" for v in values],
        )
        for i, v in enumerate(values):
            ax.text(
                v,
                i,
                f" {v:.2f}× " if v >= 1 else f" {v:.2f}× ",
                va="center",
                ha="left" if v >= 1 else "right",
                fontsize=6,
            )
        span = max(max(values), 1 / min(values), 1.1) * 1.6
        ax.set_xlim(1 / span, span)
        ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("speedup (log scale; right of the line is faster)")
        ax.set_title(SPEEDUP_TITLES[kind], fontsize=9)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        fig.tight_layout()
        path = os.path.join(out_dir, f"speedup_{kind}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")  # long case labels stay whole
        plt.close(fig)
        written[path] = len(bars)
    return written


SERIES_OPS = ("gemm_throttling",)  # ops whose per-iteration series is the point of the run


def time_series(rows: list[dict[str, str]], results_path: str, out_dir: str) -> dict[str, int]:
    """Per long-run case (gemm_throttling): each iteration's time over the run, and the SM clock the
    GPU monitor sampled along it, from the results' JSON lines."""
    wanted = {
        r["case_id"]: r for r in rows if r.get("op") in SERIES_OPS and r.get("status") == "ok"
    }
    jsonl = os.path.splitext(results_path)[0] + ".jsonl"
    if not wanted or not os.path.exists(jsonl):
        return {}
    written: dict[str, int] = {}
    with open(jsonl) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for record in records:
        row = wanted.get(record.get("case_id", ""))
        samples = record.get("samples_s") or []
        if row is None or not samples:
            continue
        clocks = record.get("gpu_monitor") or []
        fig, axes = plt.subplots(
            2 if clocks else 1, 1, figsize=(9, 7 if clocks else 4.5), squeeze=False
        )
        ax = axes[0][0]
        ax.plot([s * 1e3 for s in samples], lw=0.8)
        ax.set_xlabel("iteration")
        ax.set_ylabel("ms per iteration")
        if clocks:  # the monitor spans the whole case (inputs, compile, check, warm-up, timed run)
            bottom = axes[1][0]
            bottom.plot([c[0] for c in clocks], [c[1] for c in clocks], "r", lw=0.8)
            bottom.set_xlabel("seconds since the case started (the timed run is at the end)")
            bottom.set_ylabel("SM clock (MHz)", color="r")
            power = bottom.twinx()
            power.plot([c[0] for c in clocks], [c[4] for c in clocks], "k", lw=0.5, alpha=0.5)
            power.set_ylabel("power (W)")
            bottom.grid(True, alpha=0.3)
        drift = row.get("decile_drift_ratio") or "?"
        ax.set_title(
            f"{row['op']} {row.get('gap_strategy', '')} {shape_label(row)} {row.get('dtype', '')}: "
            f"last/first tenth {drift[:5]}, throttled {row.get('throttled') or '?'}",
            fontsize=9,
        )
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        path = os.path.join(out_dir, f"series_{row['op']}_{row['case_id']}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written[path] = len(samples)
    return written


SUMMARY_HEADER = (
    "op",
    "backend",
    "shape",
    "params",
    "status",
    "median µs",
    "p10-p90 µs",
    "TFLOP/s",
    "GB/s",
    "% of roofline",
    "top kernels",
)


def summary_cells(rows: list[dict[str, str]]) -> list[list[str]]:
    """One line per row: what it is (with the parameters that tell it apart) and what it measured."""

    lines = []
    for r, params in zip(rows, distinguishing(rows), strict=True):
        p10, p90 = _f(r, "time_p10_s"), _f(r, "time_p90_s")
        spread = f"{p10 * 1e6:.2f}-{p90 * 1e6:.2f}" if p10 and p90 else ""
        lines.append(
            [
                r["op"],
                r["backend"],
                shape_label(r),
                params,
                ": ".join(x for x in (r["status"], (r.get("error") or "")[:80]) if x),
                fixed(_f(r, "time_median_s"), 1e6, 2),
                spread,
                fixed(_f(r, "tflop_per_s"), 1, 2),
                fixed(_f(r, "gb_per_s"), 1, 0),
                fixed(_f(r, "roofline_attained_pct"), 1, 1),
                (r.get("top_kernels") or r.get("dominant_kernel") or "")[:120],
            ]
        )
    return lines


def markdown(rows: list[dict[str, str]]) -> str:
    out = ["| " + " | ".join(SUMMARY_HEADER) + " |", "|" + "---|" * len(SUMMARY_HEADER)]
    out += [
        "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"
        for cells in summary_cells(rows)
    ]
    return "\n".join(out) + "\n"


def html_page(source: str, rows: list[dict[str, str]], images: dict[str, int]) -> str:
    """One self-contained page: every chart inlined (base64 PNG) above the table of rows."""
    charts = "".join(
        f"<figure><img alt='{html.escape(os.path.basename(path))}' src='data:image/png;base64,"
        f"{base64.b64encode(open(path, 'rb').read()).decode()}'><figcaption>"
        f"{html.escape(os.path.basename(path))}: {count} points</figcaption></figure>\n"
        for path, count in images.items()
    )
    head = "".join(f"<th>{html.escape(h)}</th>" for h in SUMMARY_HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>\n"
        for cells in summary_cells(rows)
    )
    ok = sum(r.get("status") == "ok" for r in rows)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>microbench report: {html.escape(source)}</title><style>"
        "body{font-family:sans-serif;margin:1.5em}img{max-width:100%}figure{margin:1em 0}"
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
        "td:nth-child(n+6){text-align:right}</style></head><body>"
        f"<h1>{html.escape(source)}</h1><p>{len(rows)} rows, {ok} ok. Times are per iteration as each "
        "row's timing_source defines it (see the CSV); bars span p10-p90.</p>"
        f"<h2>Charts</h2>{charts}<h2>Rows</h2><table><tr>{head}</tr>\n{body}</table></body></html>\n"
    )


def run_report(path: str, out_dir: str) -> dict[str, Any]:
    rows = load_results(path)  # a foreign or broken file is refused before anything is written
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UserError("the report directory is a file", key=f"--output-dir '{out_dir}'")
    os.makedirs(out_dir, exist_ok=True)
    roof = os.path.join(out_dir, "roofline.png")
    counts = {
        roof: roofline(rows, roof),
        **sweeps(rows, out_dir),
        **speedup_charts(rows, out_dir),
        **time_series(rows, path, out_dir),
    }
    summary = os.path.join(out_dir, "summary.md")
    with open(summary, "w") as f:
        f.write(
            f"# Results: {path}\n\n"
            + markdown(rows)
            + "\n## Charts\n\n"
            + "".join(f"- {os.path.basename(p)}: {n} points\n" for p, n in counts.items())
        )
    page = os.path.join(out_dir, "report.html")
    with open(page, "w") as f:
        f.write(html_page(path, rows, counts))
    for p, n in counts.items():
        print(f"{p}: {n} points")
    print(summary)
    print(page)
    return counts
