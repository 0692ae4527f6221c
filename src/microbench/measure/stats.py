"""Summary statistics of per-iteration samples (seconds)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def summarize(samples: Sequence[float]) -> dict[str, float]:
    x = np.asarray(samples, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no samples")
    p10, p25, p50, p75, p90 = np.percentile(x, [10, 25, 50, 75, 90])
    return {
        "median": float(p50),
        "mean": float(x.mean()),
        "min": float(x.min()),
        "max": float(x.max()),
        "p10": float(p10),
        "p90": float(p90),
        "std": float(x.std(ddof=1)) if x.size > 1 else 0.0,
        "count": int(x.size),
        "iqr_over_median_ratio": float((p75 - p25) / p50) if p50 > 0 else float("nan"),
    }


DRIFT_LIMIT = 1.05  # the last tenth of a run this much slower than the first: throttled
MIN_DECILE = 5  # samples per tenth below which no verdict is given


def decile_drift(samples: Sequence[float]) -> tuple[float | None, int, bool | None]:
    """(median of the last tenth of the samples over the first tenth's, samples per tenth, verdict)."""
    x = np.asarray(samples, dtype=np.float64)
    tenth = x.size // 10
    if tenth < 1:
        return None, tenth, None
    first, last = float(np.median(x[:tenth])), float(np.median(x[-tenth:]))
    ratio = last / first if first > 0 else None
    verdict = None if ratio is None or tenth < MIN_DECILE else ratio > DRIFT_LIMIT
    return ratio, tenth, verdict
