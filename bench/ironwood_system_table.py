"""Issue 13's GPU tables from configs/gpu/ironwood_{transfers,attention,throttling}.yaml:

python bench/ironwood_system_table.py ironwood_transfers.csv ironwood_attention.csv ironwood_throttling.csv
"""

import sys
from collections import defaultdict

from microbench.results.writer import read_rows

rows = [r for path in sys.argv[1:] for r in read_rows(path)]
ok = [r for r in rows if r["status"] == "ok"]


def f(r: dict, col: str) -> float:
    return float(r[col])


copies = [r for r in ok if r["op"] == "single_device_hbm_copy"]
if copies:
    by = defaultdict(dict)
    for r in copies:
        by[int(r["num_elements"])][r["backend"]] = f(r, "gb_per_s")
    ceiling = max(v for d in by.values() for v in d.values())
    print(f"HBM copy (read + write), GB/s; ceiling = the highest measured, {ceiling:.0f} GB/s\n")
    print("| size | JAX | PyTorch | PyTorch vs JAX | JAX % of ceiling |")
    print("|---|---|---|---|---|")
    for n in sorted(by):
        j, t = by[n].get("jax"), by[n].get("torch")
        size = n * 2 / 2**20
        diff = f"{100 * (t / j - 1):+.1f}%" if j and t else ""
        share = f"{100 * j / ceiling:.0f}%" if j else ""
        print(f"| {size:g} MiB | {j or 0:.0f} | {t or 0:.0f} | {diff} | {share} |")

moves = [r for r in ok if r["op"] == "host_device"]
if moves:
    table = defaultdict(dict)
    for r in moves:
        key = (int(r["data_size_mib"]), r["direction"], r["host_memory"])
        table[key][f"{r['backend']} {r['timing_source']}"] = (f(r, "gb_per_s"), f(r, "gib_per_s"))
    cols = sorted({c for d in table.values() for c in d})
    print("\nHost-device transfers, GB/s (GiB/s)\n")
    print("| MiB | direction | host memory | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for key in sorted(table):
        cells = [
            f"{table[key][c][0]:.1f} ({table[key][c][1]:.1f})" if c in table[key] else ""
            for c in cols
        ]
        print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    for r in rows:
        if r["op"] == "host_device" and r["status"] != "ok":
            print(
                f"- {r['backend']} {r['host_memory']} {r['direction']}: {r['status']}: {r['error'][:100]}"
            )

attention = [r for r in rows if r["op"] == "tokamax_splash_attention"]
if attention:
    print("\nAttention, 128 query heads over 8 KV heads, head dim 256, bf16: TFLOP/s (median ms)\n")
    print("| seq | mode | causal | backend / implementation | TFLOP/s | ms | status |")
    print("|---|---|---|---|---|---|---|")
    for r in attention:
        tf = f"{f(r, 'tflop_per_s'):.0f}" if r["status"] == "ok" else ""
        ms = f"{f(r, 'time_median_s') * 1e3:.2f}" if r["status"] == "ok" else ""
        note = r["status"] if r["status"] == "ok" else f"{r['status']}: {r['error'][:70]}"
        print(
            f"| {r['q_seq_len']} | {r['mode']} | {r['causal']} | {r['backend']} "
            f"{r['implementation']} | {tf} | {ms} | {note} |"
        )

throttle = [r for r in ok if r["op"] == "gemm_throttling"]
if throttle:
    print("\nThrottling: fp8 GEMM 16384x18432x16384, JAX, device time per iteration\n")
    print(
        "| gap strategy | iterations | median ms | TFLOP/s | last/first tenth | throttled "
        "| SM MHz first / last / min | max °C | max W |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in throttle:
        print(
            f"| {r['gap_strategy']} | {r['sample_count']} | {f(r, 'time_median_s') * 1e3:.2f} | "
            f"{f(r, 'tflop_per_s'):.0f} | {f(r, 'decile_drift_ratio'):.3f} | {r['throttled']} | "
            f"{r['sm_clock_first_mhz']} / {r['sm_clock_last_mhz']} / {r['sm_clock_min_mhz']} | "
            f"{r['temperature_max_c']} | {r['power_max_w']} |"
        )
