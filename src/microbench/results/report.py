"""`microbench report`: a roofline chart, sweep charts and a Markdown summary from a results file."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from microbench.catalogue import shape_label  # noqa: E402
from microbench.errors import UserError  # noqa: E402
from microbench.results.compare import load_results, number, param_columns  # noqa: E402

DIMENSIONS = ("m", "k", "n", "batch", "seq", "hidden", "size")


_f = number


def _v(row: dict[str, str], col: str) -> float:
    """A value known to be present (the row was filtered on it)."""
    return float(row[col])


def roofline(rows: list[dict[str, str]], path: str) -> int:
    """Achieved TFLOP/s against arithmetic intensity, with the device's ceilings where they are known."""
    points = [
        r
        for r in rows
        if r.get("status") == "ok" and _f(r, "tflops") and _f(r, "arithmetic_intensity")
    ]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, op in enumerate(sorted({r["op"] for r in points})):
        mine = [r for r in points if r["op"] == op]
        ax.scatter(
            [_v(r, "arithmetic_intensity") for r in mine],
            [_v(r, "tflops") for r in mine],
            label=op,
            s=28,
            color=plt.cm.tab20(i % 20),
            marker="os^Dv"[i // 20 % 5],
        )
    ceilings = {
        (r.get("peak_chip"), r.get("peak_family")): (_v(r, "peak_tflops"), _v(r, "peak_gbps"))
        for r in points
        if _f(r, "peak_tflops") and _f(r, "peak_gbps")
    }
    intensities = [_v(r, "arithmetic_intensity") for r in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    for (chip, family), (tflops, gbps) in ceilings.items():
        knee = tflops * 1e12 / (gbps * 1e9)
        xs = [lo, min(max(knee, lo), hi), hi]
        ax.plot(
            xs, [min(tflops, x * gbps / 1e3) for x in xs], "--", lw=1, label=f"{chip} {family} roof"
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, from the op's models)")
    ax.set_ylabel("achieved TFLOP/s (median)")
    ax.set_title("roofline" + ("" if ceilings else " (device peaks unknown: no ceilings drawn)"))
    ax.grid(True, which="both", alpha=0.3)
    if points:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return len(points)


Point = tuple[float, float, float, float]  # axis value, metric, minus and plus error


def sweep_series(rows: list[dict[str, str]]) -> dict[str, tuple[str, str, dict[str, list[Point]]]]:
    """Per op: (axis, metric, one series per backend, implementation and parameter setting). The axis is
    the dimension that varies most; dimensions tied to it (SAME_AS_) are not series of their own; the
    error bars span the throughput at the p90 and p10 times."""
    params = param_columns(rows)
    out: dict[str, tuple[str, str, dict[str, list[Point]]]] = {}
    ok = [r for r in rows if r.get("status") == "ok" and _f(r, "time_median_s")]
    for op in sorted({r["op"] for r in ok}):
        mine = [r for r in ok if r["op"] == op]
        varying = [d for d in DIMENSIONS if d in params and len({r.get(d) for r in mine}) > 2]
        if not varying:
            continue
        axis = max(varying, key=lambda d: len({r.get(d) for r in mine}))
        bound = [r.get("roofline_bound_by") for r in mine]
        metric = (
            "gbps"
            if bound.count("memory") >= bound.count("compute") and any(_f(r, "gbps") for r in mine)
            else "tflops"
        )
        series = [k for k in ("backend", "implementation", *params) if k != axis]
        tied = {
            k
            for k in series
            if all(len({x.get(k) for x in mine if x.get(axis) == r.get(axis)}) == 1 for r in mine)
        }
        split = [k for k in series if k not in tied and len({x.get(k) for x in mine}) > 1]
        lines: dict[str, list[Point]] = defaultdict(list)
        for r in mine:
            label = " ".join(f"{k}={r[k]}" for k in split) or op
            value, median = _f(r, metric), _f(r, "time_median_s")
            if value is None or not median:
                continue
            fast, slow = _f(r, "time_p10_s") or median, _f(r, "time_p90_s") or median
            low, high = value * median / slow, value * median / fast
            lines[label].append((float(r[axis]), value, value - low, high - value))
        out[op] = (axis, metric, {k: sorted(v) for k, v in lines.items()})
    return out


def sweeps(rows: list[dict[str, str]], out_dir: str) -> dict[str, int]:
    """Per op: the metric over its sweep axis, one line with p10-p90 bars per series."""
    written: dict[str, int] = {}
    for op, (axis, metric, lines) in sweep_series(rows).items():
        fig, ax = plt.subplots(figsize=(8, 5))
        for label, pts in lines.items():
            ax.errorbar(
                [p[0] for p in pts],
                [p[1] for p in pts],
                yerr=[[p[2] for p in pts], [p[3] for p in pts]],
                marker="o",
                capsize=3,
                label=label,
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel(axis)
        ax.set_ylabel("GB/s" if metric == "gbps" else "TFLOP/s")
        ax.set_title(f"{op}: {('GB/s' if metric == 'gbps' else 'TFLOP/s')} over {axis}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(out_dir, f"sweep_{op}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written[path] = sum(len(p) for p in lines.values())
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
        drift = row.get("decile_drift") or "?"
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


def markdown(rows: list[dict[str, str]]) -> str:
    def fmt(v: float | None, scale: float = 1, d: int = 2) -> str:
        return "" if v is None else f"{v * scale:.{d}f}"

    out = [
        "| op | backend | shape | params | status | median µs | TFLOP/s | GB/s | % of roofline | dominant kernel |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        shape = shape_label(r)
        extra = " ".join(
            f"{k}={r[k]}"
            for k in ("dtype", "layout", "recipe", "pattern", "operation", "implementation")
            if r.get(k)
        )
        out.append(
            f"| {r['op']} | {r['backend']} | {shape} | {extra} | {r['status']} | "
            f"{fmt(_f(r, 'time_median_s'), 1e6)} | {fmt(_f(r, 'tflops'))} | {fmt(_f(r, 'gbps'), 1, 0)} | "
            f"{fmt(_f(r, 'pct_of_roofline'), 1, 1)} | {(r.get('dominant_kernel') or '')[:60]} |"
        )
    return "\n".join(out) + "\n"


def run_report(path: str, out_dir: str) -> dict[str, Any]:
    rows = load_results(path)  # a foreign or broken file is refused before anything is written
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UserError("the report directory is a file", key=f"--output-dir '{out_dir}'")
    os.makedirs(out_dir, exist_ok=True)
    roof = os.path.join(out_dir, "roofline.png")
    counts = {
        roof: roofline(rows, roof),
        **sweeps(rows, out_dir),
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
    for p, n in counts.items():
        print(f"{p}: {n} points")
    print(summary)
    return counts
