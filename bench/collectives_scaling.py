"""Collectives scaling: every collective, JAX and torch.distributed, on sub-meshes of one host's GPUs.

    python bench/collectives_scaling.py config N OUT.yaml [OP ...] [--from-kib K]
                        # the config for N GPUs (1 KiB .. 1 GiB; only OPs, only from K KiB, if given)
    python bench/collectives_scaling.py table OUT.md CHART.png RESULTS.csv...

`table` writes bus bandwidth (GB/s) against message size per op, one column per GPU count and backend,
plus the 128 MiB all-reduce JAX/NCCL ratio per GPU count, and a chart of busbw against size (one line
per GPU count and backend, one panel per op).
"""

from __future__ import annotations

import sys
from collections import defaultdict

import yaml

from accelbench.ops.collective_model import COLLECTIVES
from accelbench.results.reading import read_rows
from accelbench.results.records import Row

SIZES_KIB = [1, 4, 16, 64, 256, 1024, 4096, 16384, 32768, 65536, 131072, 262144, 1048576]
OPS = ("psum", "all_gather", "psum_scatter", "all_to_all", "ppermute")
HEADLINE_BYTES = 128 << 20


def config(n: int, ops: tuple[str, ...] = OPS, from_kib: int = 1) -> dict:
    elements = [k * 1024 // 4 for k in SIZES_KIB if k >= from_kib]  # fp32
    blocks = [
        {
            "benchmark_name": op,
            "backend": ["jax", "torch"],
            "benchmark_sweep_params": [
                {"num_elements_list": elements, "ici_size": n, "dtype": "float32"}
            ],
        }
        for op in ops
    ]
    if "send_recv" not in ops and ops != OPS:
        return {"num_runs": 20, "warmup": 3, "benchmarks": blocks}
    blocks.append(
        {
            "benchmark_name": "send_recv",
            "backend": ["jax", "torch"],
            "benchmark_sweep_params": [
                {"num_elements_list": elements, "source_id": 0, "target_id": n - 1}
            ],
        }
    )
    return {"num_runs": 20, "warmup": 3, "benchmarks": blocks}


def _rows(paths: list[str]) -> list[Row]:
    return [r for path in paths for r in read_rows(path) if r.ok]


def _gpus(r: Row) -> int:
    return int(r.extras.group_device_count)


def _who(r: Row) -> str:
    """The series: the GPU count, or for send_recv the pair (0->1 and 0->3 are different links)."""
    if COLLECTIVES[r.identity.op].point_to_point:
        return f"GPU {r.params.value('source_id')}->{r.params.value('target_id')}"
    return f"{_gpus(r)} GPUs"


def table(out_md: str, chart: str, paths: list[str]) -> None:
    rows = _rows(paths)
    series: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
    for r in rows:
        key = (r.identity.op, f"{_who(r)} {r.identity.backend}")
        series[key][round(float(r.extras.message_bytes))] = float(r.extras.busbw_gb_per_s)
    lines = []
    for op in (*OPS, "send_recv"):
        columns = sorted({k[1] for k in series if k[0] == op})
        if not columns:
            continue
        sizes = sorted({s for k, v in series.items() if k[0] == op for s in v})
        lines += [f"\n**{op}** (bus bandwidth, GB/s; size = nccl-tests' message size)\n"]
        lines += ["| size | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
        for s in sizes:
            cells = [series[(op, c)].get(s) for c in columns]
            lines.append(
                f"| {_size(s)} | " + " | ".join(f"{v:.1f}" if v else "" for v in cells) + " |"
            )
    lines += ["\n**128 MiB per device all-reduce: JAX against NCCL (torch.distributed)**\n"]
    lines += ["| GPUs | JAX busbw | NCCL busbw | JAX / NCCL |", "|---|---|---|---|"]
    for n in sorted({_gpus(r) for r in rows if r.identity.op == "psum"}):
        jax, nccl = (_at(series.get(("psum", f"{n} GPUs {b}"), {})) for b in ("jax", "torch"))
        if jax and nccl:
            lines.append(f"| {n} | {jax:.1f} | {nccl:.1f} | {jax / nccl:.3f} |")
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    _chart(chart, series)


def _at(points: dict[float, float], size: float = HEADLINE_BYTES) -> float | None:
    """The point at `size` (CSV floats keep 6 significant digits)."""
    return next((v for s, v in points.items() if abs(s - size) <= 1e-4 * size), None)


def _size(b: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b:g} B"


def _chart(path: str, series: dict[tuple[str, str], dict[float, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = [op for op in (*OPS, "send_recv") if any(k[0] == op for k in series)]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8), sharex=True)
    for ax, op in zip(axes.flat, ops, strict=False):
        for (o, label), points in sorted(series.items()):
            if o == op:
                xs = sorted(points)
                ax.plot(
                    xs,
                    [points[x] for x in xs],
                    marker="o",
                    ms=3,
                    label=label,
                    linestyle="-" if "jax" in label else "--",
                )
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_ylabel("busbw GB/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("message bytes")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    if sys.argv[1] == "config":
        rest = sys.argv[4:]
        from_kib = int(rest[rest.index("--from-kib") + 1]) if "--from-kib" in rest else 1
        ops = tuple(a for a in rest if not a.startswith("--") and not a.isdigit()) or OPS
        with open(sys.argv[3], "w") as f:
            yaml.safe_dump(config(int(sys.argv[2]), ops, from_kib), f, sort_keys=False)
    else:
        table(sys.argv[2], sys.argv[3], sys.argv[4:])
