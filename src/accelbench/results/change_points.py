"""Steps in a case's history of medians, on a log scale: the median of the WINDOW points after each
point against the WINDOW before, in standard errors of a noise no step or slow drift inflates;
a step is moved to where one jump fits best (asv's regularized median). docs/method.md says why, and
what the detection rate is (bench/history_detection.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from accelbench.core.samples import ratio_intervals

WINDOW = 8  # points either side a step is judged on
EDGE = 3  # fewest points either side: a step in the last three runs is not called yet
Z = 4.5  # standard errors a step must clear (no false step in 2,000 series of 60 points: method.md)
MIN_STEP = 0.01  # and its size: smaller steps are left to `compare` and `ab`
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Step:
    at: int  # the first point after the step
    ratio: float  # the median after over the median before (the windows either side)
    low: float | None  # its 95% interval (distribution-free), where the windows hold enough points
    high: float | None
    z: float  # the difference in standard errors


def noise(x: np.ndarray) -> float:
    """The noise of one point: the scaled MAD of the first differences (a step is one outlier among
    them, a slow drift their median, taken out)."""
    d = np.diff(x)
    return MAD_TO_SIGMA * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)


def _score(before: np.ndarray, after: np.ndarray, sigma: float) -> float:
    """The medians' difference in standard errors (a median of k normal points: var pi/2 s^2/k)."""
    se = sigma * math.sqrt(math.pi / 2 * (1 / len(before) + 1 / len(after)))
    return float(np.median(after) - np.median(before)) / se


def _scores(x: np.ndarray, sigma: float) -> np.ndarray:
    """Each point's score as the first after a step (fewer points near the ends, at least EDGE)."""
    n = len(x)
    out = np.zeros(n)
    for t in [*range(EDGE, min(WINDOW, n)), *range(max(WINDOW, n - WINDOW + 1), n - EDGE + 1)]:
        out[t] = _score(x[max(0, t - WINDOW) : t], x[t : t + WINDOW], sigma)
    if n >= 2 * WINDOW:
        medians = np.median(sliding_window_view(x, WINDOW), axis=1)
        se = sigma * math.sqrt(math.pi / WINDOW)
        out[WINDOW : n - WINDOW + 1] = (medians[WINDOW:] - medians[: n - 2 * WINDOW + 1]) / se
    return out


def _refined(x: np.ndarray, t: int) -> int:
    """The split near t where one jump fits best (least absolute deviation: asv's cost)."""
    lo, hi = max(0, t - WINDOW), min(len(x), t + WINDOW)
    costs = {
        u: sum(float(np.abs(s - np.median(s)).sum()) for s in (x[lo:u], x[u:hi]))
        for u in range(max(lo + 1, t - WINDOW // 2), min(hi - 1, t + WINDOW // 2) + 1)
    }
    return min(costs, key=lambda u: (costs[u], abs(u - t)))


def steps(values: list[float]) -> list[Step]:
    """The steps in a series of positive values (medians in time order), in order."""
    x = np.log(np.asarray(values, dtype=float))
    if len(x) < 2 * EDGE or not np.isfinite(x).all():
        return []
    sigma = max(noise(x), 1e-9)  # identical values: any change is a step
    scores = _scores(x, sigma)
    found: list[int] = []
    for t in np.argsort(-np.abs(scores), kind="stable").tolist():
        if abs(scores[t]) < Z:
            break
        if all(abs(t - u) >= WINDOW for u in found):
            found.append(t)
    at = sorted({_refined(x, t) for t in found})
    out = []
    for i, t in enumerate(at):  # each side's points up to the neighbouring step, at most 2 windows
        before = x[max(at[i - 1] if i else 0, t - 2 * WINDOW) : t]
        after = x[t : min(at[i + 1] if i + 1 < len(at) else len(x), t + 2 * WINDOW)]
        ratio = math.exp(float(np.median(after) - np.median(before)))
        if abs(ratio - 1) < MIN_STEP:
            continue
        span = ratio_intervals(np.exp(before)[None, :], np.exp(after)[None, :])
        low, high = (float(v) for v in span[0]) if span is not None else (None, None)
        out.append(Step(t, ratio, low, high, _score(before, after, sigma)))
    return out
