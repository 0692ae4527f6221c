"""What every chart of a report needs (the headless backend, a file name from any text, a figure
written whole), and each case's samples over its run (with, where they were sampled, the GPU's SM
clock and power along it): drawn for soaks and GPU-monitored cases, or every case when
`report --sample-charts` asks."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from accelbench.catalogue import get_spec  # noqa: E402
from accelbench.errors import UserError, safe_stem  # noqa: E402
from accelbench.results.console import shape_of, significant  # noqa: E402
from accelbench.results.records import Row  # noqa: E402
from accelbench.results.writer import write_atomically  # noqa: E402

GAP, DTYPE = "gap_strategy", "dtype"  # the parameters a soak chart's title names, where it has them


def save_figure(fig: Any, path: str, **options: Any) -> None:
    """A chart written whole, never through a link planted at its path."""
    write_atomically(path, lambda f: fig.savefig(f, format="png", **options), binary=True)


def soaked(row: Row) -> bool:
    """A case timed for a duration (a soak), or one whose op samples the GPU along it."""
    c = row.conditions
    if c.min_duration_s or c.soak_chunk_count or row.timing.sm_clock_first_mhz:
        return True
    try:
        return get_spec(row.identity.op).traits.monitor_gpu
    except UserError:  # an op this version does not know
        return False


def time_series(rows: Sequence[Row], out_dir: str, every: bool = False) -> dict[str, int]:
    """Per soaked case (or every case, `every`: `report --sample-charts`): each iteration's time over
    the run and, where they were sampled, the SM clock and power along it."""
    written: dict[str, int] = {}
    for row in rows:
        samples = row.series.samples_s
        if not row.ok or not samples or not (every or soaked(row)):
            continue
        clocks = row.series.gpu_monitor
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
        clocked = f", throttled {row.stats.throttled}" if clocks else ""  # a clock to say so
        ax.set_title(
            f"{row.identity.op} {row.params.value(GAP, '')} {shape_of(row)} "
            f"{row.params.value(DTYPE, '')}: last/first tenth "
            f"{significant(row.stats.decile_drift_ratio)}{clocked}",
            fontsize=9,
        )
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        name = f"series_{safe_stem(row.identity.op)}_{safe_stem(row.identity.case_id)}.png"
        path = os.path.join(out_dir, name)
        save_figure(fig, path, dpi=120)
        plt.close(fig)
        written[path] = len(samples)
    return written
