"""The same one-off case of each jax-bench benchmark through upstream's package and through this
project's `jax-bench` command, back to back on one machine, and what their summary.csv files share.

    pip install absl-py simple_parsing        # upstream's own dependencies beside ours
    python bench/jax_bench_beside.py --upstream /path/to/accelerator-microbenchmarks [--devices 4]

The upstream checkout (the public repository at 6a306a8) is run from where it is, never copied here.
Per benchmark: whether summary.csv starts with exactly upstream's columns in upstream's order, whether
the model columns (FLOPs, intensity, byte and size columns) are equal, the row counts, this project's
p50_ms over upstream's (both the host clock around blocked calls, warm, on every device as upstream
places the work) and the same for total_duration_s. Both tools run each case `--rounds` times, taking
turns, and the ratio is of the medians over the rounds.
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys
import tempfile

CASES: dict[str, list[str]] = {
    "gemm_generalized": ["--m", "256", "--k", "256", "--n", "256", "--in_dtype", "bfloat16"],
    "quantization": ["--m", "256", "--n", "512"],
    "swiglu": ["--batch", "256", "--dim", "256"],
    "rmsnorm": ["--batch", "256", "--dim", "256"],
    "rope": ["--seq_len", "128", "--head_dim", "64", "--batch", "2", "--heads", "4"],
    "simple_add": ["--size", "65536"],
    "attention_flashed": [
        "--seq_len",
        "128",
        "--num_q_heads",
        "4",
        "--num_kv_heads",
        "4",
        "--head_dim",
        "64",
    ],
    "transformer_layer_moe": ["--model_dim", "128", "--mslen", "64"],
    "hbm_bandwidth": ["--size", "1048576"],
    "host_to_device": ["--data_size_mib", "4"],
    "device_to_host": ["--data_size_mib", "4"],
    "device_to_device": ["--data_size_mib", "1"],
    "all_reduce": ["--matrix_dim", "64"],
    "all_gather": ["--matrix_dim", "64"],
    "all_to_all": ["--matrix_dim", "64"],
    "reduce_scatter": ["--matrix_dim", "64"],
}
# on a GPU: sizes where the device, not the host, sets the time
GPU_CASES: dict[str, list[str]] = {
    "gemm_generalized": ["--m", "8192", "--k", "8192", "--n", "8192", "--in_dtype", "bfloat16"],
    "quantization": ["--m", "8192", "--n", "8192"],
    "swiglu": ["--batch", "8192", "--dim", "8192"],
    "rmsnorm": ["--batch", "8192", "--dim", "8192"],
    "simple_add": ["--size", "16777216"],
    "hbm_bandwidth": ["--size", "134217728"],
    "host_to_device": ["--data_size_mib", "256"],
    "device_to_host": ["--data_size_mib", "256"],
}
MODEL_COLUMNS = (
    "total_flops",
    "intensity",
    "total_bytes_mb",
    "total_bytes_mib",
    "shard_size_mb",
    "local_size_mb",
)


def _read(path: str) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def run_one(
    command: list[str], folder: str, env: dict[str, str]
) -> tuple[list[str], list[dict[str, str]]]:
    done = subprocess.run(
        command + ["--output", folder], env=env, capture_output=True, text=True, cwd=folder
    )
    path = os.path.join(folder, "summary.csv")
    if done.returncode != 0 or not os.path.exists(path):
        raise SystemExit(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )
    return _read(path)


def compare(name: str, upstream: list, ours: list) -> dict[str, object]:
    (up_columns, up_rows), (our_columns, our_rows) = upstream[0], ours[0]
    models_equal = all(
        up_row.get(c) == our_row.get(c)
        for up_row, our_row in zip(up_rows, our_rows, strict=False)
        for c in MODEL_COLUMNS
        if c in up_row
    )

    def median_of(runs: list, column: str) -> float:
        return statistics.median(
            statistics.median(float(r[column]) for r in rows) for _, rows in runs
        )

    device = [float(r["device_p50_ms"]) for _, rows in ours for r in rows if r.get("device_p50_ms")]

    return {
        "benchmark": name,
        "columns": our_columns[: len(up_columns)] == up_columns,
        "models": models_equal,
        "rows": f"{len(our_rows)} / {len(up_rows)}",
        "p50 ratio": median_of(ours, "p50_ms") / median_of(upstream, "p50_ms"),
        "duration ratio": median_of(ours, "total_duration_s")
        / median_of(upstream, "total_duration_s"),
        "missing": [c for c in up_columns if c not in our_columns],
        "p50_ms": median_of(upstream, "p50_ms"),
        "device_p50_ms": statistics.median(device) if device else None,
        "source": ours[0][1][0].get("timing_source", "") if ours[0][1] else "",
    }


def expansions(upstream: str, devices: int) -> None:
    """Each shipped config through upstream's loader and through this project's planner: whether
    they expand to the same cases (upstream's fields of each, defaults filled in, in order)."""
    sys.path.insert(0, os.path.join(os.path.abspath(upstream), "src"))
    from accelerator_microbenchmarks.core import config as upstream_config

    from accelbench.benchmarks.base import V2
    from accelbench.config.loader import load_config
    from accelbench.config.planner import plan
    from accelbench.core.options import RunOptions

    root = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "jax_bench"
    )
    print("| config | cases upstream's loader expands | ours | same |\n|---|---|---|---|")
    for path in sorted(
        glob.glob(os.path.join(upstream, "configs", "**", "*.yaml"), recursive=True)
    ):
        rel = os.path.relpath(path, os.path.join(upstream, "configs"))
        cwd = os.getcwd()
        os.chdir(upstream)  # upstream reads csv_shapes from the working directory
        try:
            theirs = upstream_config.load_config(path)
        finally:
            os.chdir(cwd)
        expected = []
        for d in theirs:
            bench = V2.get(d.get("name", ""))
            if bench is None:
                expected.append((d.get("name"), ()))
                continue
            full = {p.name: d.get(p.name, p.default_value) for p in bench.upstream_fields}
            full.pop("hardware_stats")
            pairs = [(s, t) for s in range(devices) for t in range(devices) if s != t]
            for src, dst in pairs if bench.every_pair else [(None, None)]:
                one = (
                    dict(full, src_device_index=src, dst_device_index=dst)
                    if src is not None
                    else full
                )
                expected.append((bench.name, tuple(sorted(one.items()))))
        cases = plan(load_config(os.path.join(root, rel)), RunOptions(), lambda: devices)
        ours = []
        for case in cases:
            if case.origin is None or case.backend != "jax":
                continue
            bench = case.origin.benchmark
            shown = {p.name: getattr(case.origin.fields, p.name) for p in bench.upstream_fields}
            shown.pop("hardware_stats")
            ours.append((bench.name, tuple(sorted(shown.items()))))
        seen_ours = sorted(dict.fromkeys(ours), key=str)
        same = sorted(dict.fromkeys(expected), key=str) == seen_ours and len(expected) == len(ours)
        print(f"| {rel} | {len(expected)} | {len(ours)} | {'yes' if same else 'NO'} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--upstream", required=True, help="a checkout of accelerator-microbenchmarks"
    )
    parser.add_argument("--devices", type=int, default=4, help="forced CPU devices (default 4)")
    parser.add_argument(
        "--gpu", action="store_true", help="on the GPUs as they are, with GPU-sized cases"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs of each tool per case, taking turns"
    )
    parser.add_argument("--num-runs", default="50", help="num_runs of every case")
    parser.add_argument(
        "--only", nargs="*", default=None, help="benchmarks to run (default: all 16)"
    )
    parser.add_argument(
        "--configs", action="store_true", help="compare the shipped configs' expansions instead"
    )
    args = parser.parse_args()
    if args.configs:
        expansions(args.upstream, args.devices)
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.join(os.path.abspath(args.upstream), "src"), env.get("PYTHONPATH")) if p
    )
    cases = GPU_CASES if args.gpu else CASES
    if not args.gpu:
        env.update(
            JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={args.devices}"
        )
    up_command = [sys.executable, "-m", "accelerator_microbenchmarks.main"]
    our_command = [sys.executable, "-m", "accelbench", "jax-bench"]  # installed or not
    where = "the GPUs" if args.gpu else f"{args.devices} forced CPU devices"
    print(f"# jax-bench beside upstream: {where}, num_runs {args.num_runs}, {args.rounds} rounds")
    print(
        "| benchmark | columns | models | rows (ours / upstream) | p50 ratio | total_duration_s ratio "
        "| upstream p50_ms | our device p50_ms (source) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.only or cases:
        fields = ["--run", name, *cases[name], "--num_runs", args.num_runs]
        upstream, ours = [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
                upstream.append(run_one(up_command + fields, a, env))
                ours.append(run_one(our_command + fields, b, env))
        c = compare(name, upstream, ours)
        extra = f" (missing: {', '.join(c['missing'])})" if c["missing"] else ""
        print(
            f"| {name} | {'same' if c['columns'] else 'differ' + extra} | {'same' if c['models'] else 'differ'} | "
            f"{c['rows']} | {c['p50 ratio']:.2f} | {c['duration ratio']:.2f} | {c['p50_ms']:.4g} | "
            f"{c['device_p50_ms'] or 0:.4g} ({c['source']}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
