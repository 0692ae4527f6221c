"""A CUDA memory snapshot as a page that works offline: memory in use over the recorded allocations
(alloc and free events of the snapshot's device traces) as an inlined chart, and the largest live
blocks at the peak. PyTorch's own page loads its script from a CDN; this one loads nothing."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

TOP_BLOCKS = 10


def usage(snapshot: dict[str, Any]) -> tuple[list[int], int, list[tuple[int, int]]]:
    """Bytes in use after each event, the peak, and the live blocks (address, bytes) at the peak."""
    live: dict[int, int] = {}
    used, peak, at_peak = 0, 0, []
    over: list[int] = []
    for trace in snapshot.get("device_traces") or []:
        for event in trace or []:
            action, addr, size = event.get("action"), event.get("addr"), int(event.get("size") or 0)
            if action == "alloc":
                live[addr] = size
                used += size
            elif action in ("free_completed", "free") and addr in live:
                used -= live.pop(addr)
            over.append(used)
            if used > peak:
                peak, at_peak = used, sorted(live.items(), key=lambda kv: -kv[1])[:TOP_BLOCKS]
    return over, peak, at_peak


def page(snapshot: dict[str, Any], title: str) -> str:
    """The snapshot as one self-contained HTML page (chart inlined as a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    over, peak, blocks = usage(snapshot)
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot([b / 2**20 for b in over], lw=0.8)
    ax.set_xlabel("allocation event")
    ax.set_ylabel("MiB in use")
    ax.set_title(f"{title}: peak {peak / 2**20:.1f} MiB")
    ax.grid(True, alpha=0.3)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    chart = base64.b64encode(buffer.getvalue()).decode()
    rows = "".join(f"<tr><td>{hex(a)}</td><td>{s / 2**20:.2f}</td></tr>" for a, s in blocks)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        f"<img alt='memory in use' src='data:image/png;base64,{chart}'>"
        f"<h2>Largest live blocks at the peak</h2><table><tr><th>address</th><th>MiB</th></tr>"
        f"{rows}</table><p>{len(over)} events; the .pickle beside this page opens in "
        "PyTorch's memory viewer.</p></body></html>\n"
    )
