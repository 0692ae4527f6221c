"""Issue 13's GPU tables from configs/gpu/ironwood_{transfers,attention,throttling}.yaml:

python bench/ironwood_system_table.py ironwood_transfers.csv ironwood_attention.csv ironwood_throttling.csv
"""

import sys
from collections import defaultdict

from accelbench.results.reading import read_rows
from accelbench.results.records import Row

rows = [r for path in sys.argv[1:] for r in read_rows(path)]
ok = [r for r in rows if r.ok]


def op(r: Row) -> str:
    return r.identity.op


copies = [r for r in ok if op(r) == "single_device_hbm_copy"]
if copies:
    by: dict[int, dict[str, float]] = defaultdict(dict)
    for r in copies:
        by[int(r.params.value("num_elements"))][r.identity.backend] = float(r.derived.gb_per_s or 0)
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

moves = [r for r in ok if op(r) == "host_device"]
if moves:
    table: dict[tuple[int, str, str], dict[str, tuple[float, float]]] = defaultdict(dict)
    for r in moves:
        key = (
            int(r.params.value("data_size_mib")),
            r.params.value("direction"),
            r.params.value("host_memory"),
        )
        table[key][f"{r.identity.backend} {r.timing.timing_source}"] = (
            float(r.derived.gb_per_s or 0),
            float(r.extras.gib_per_s or 0),
        )
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
        if op(r) == "host_device" and not r.ok:
            print(
                f"- {r.identity.backend} {r.params.value('host_memory')} {r.params.value('direction')}: "
                f"{r.status.value}: {r.identity.error[:100]}"
            )

attention = [r for r in rows if op(r) == "tokamax_splash_attention"]
if attention:
    print("\nAttention, 128 query heads over 8 KV heads, head dim 256, bf16: TFLOP/s (median ms)\n")
    print("| seq | mode | causal | backend / implementation | TFLOP/s | ms | status |")
    print("|---|---|---|---|---|---|---|")
    for r in attention:
        tf = f"{float(r.derived.tflop_per_s or 0):.0f}" if r.ok else ""
        ms = f"{float(r.median_s or 0) * 1e3:.2f}" if r.ok else ""
        note = r.status.value if r.ok else f"{r.status.value}: {r.identity.error[:70]}"
        p = r.params.as_dict()
        print(
            f"| {p['q_seq_len']} | {p['mode']} | {str(p['causal']).lower()} | {r.identity.backend} "
            f"{r.identity.implementation} | {tf} | {ms} | {note} |"
        )

throttle = [r for r in ok if op(r) == "gemm_throttling"]
if throttle:
    print("\nThrottling: fp8 GEMM 16384x18432x16384, JAX, device time per iteration\n")
    print(
        "| gap strategy | iterations | median ms | TFLOP/s | last/first tenth | throttled "
        "| SM MHz first / last / min | max °C | max W |"
    )
    print("|---|---|---|---|---|---|---|---|---|")

    def num(value: float | None) -> str:
        return "" if value is None else f"{value:g}"

    for r in throttle:
        s, t = r.stats, r.timing
        print(
            f"| {r.params.value('gap_strategy')} | {s.sample_count} | {float(r.median_s or 0) * 1e3:.2f} | "
            f"{float(r.derived.tflop_per_s or 0):.0f} | {float(s.decile_drift_ratio or 0):.3f} | "
            f"{'' if s.throttled is None else str(s.throttled).lower()} | "
            f"{num(t.sm_clock_first_mhz)} / {num(t.sm_clock_last_mhz)} / {num(t.sm_clock_min_mhz)} | "
            f"{num(t.temperature_max_c)} | {num(t.power_max_w)} |"
        )
