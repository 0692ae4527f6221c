"""Per-iteration samples and their statistics, defined once (torch.utils.benchmark's `Measurement`, in
small): a timer's `Timing`, samples read back from a results file and adaptive stopping all use them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

NOISE_THRESHOLD = 0.10  # IQR over median above this marks a row as noisy
DRIFT_LIMIT = 1.05  # the last tenth of a run this much slower than the first: throttled
MIN_DECILE = 5  # samples per tenth below which no verdict is given
CONFIDENCE = 0.95  # of the median's confidence interval
MIN_CI_SAMPLES = 6  # fewer samples give no distribution-free 95% interval of the median


class Drift(NamedTuple):
    ratio: float | None  # median of the last tenth of the samples over the first tenth's
    per_tenth: int  # samples in each tenth
    throttled: bool | None  # ratio above DRIFT_LIMIT; None when a tenth is too small to say


EXACT_BINOMIAL_UP_TO = 1000


def half_binomial_ppf(q: float, n: int) -> int:
    """The smallest k with P(Binomial(n, 1/2) <= k) >= q: exact up to 1000 trials, then normal with
    continuity correction (within one rank). Not scipy.stats: its import costs half a second."""
    if n <= EXACT_BINOMIAL_UP_TO:
        total, need = 0, q * 2**n
        for k in range(n + 1):
            total += math.comb(n, k)
            if total >= need:
                return k
        return n
    z = NormalDist().inv_cdf(q)
    return max(0, math.ceil(n / 2 + z * math.sqrt(n) / 2 - 0.5))


def median_ranks(n: int, confidence: float) -> int | None:
    """The 0-based rank of the lower end of a distribution-free confidence interval of the median of
    n samples (the upper end is rank n - 1 - it), or None when n is too small for one."""
    if n < MIN_CI_SAMPLES:
        return None
    # k, the smallest count with P(Binomial(n, 1/2) <= k) >= the tail: the interval is the k-th
    # order statistic counted from 1 (index k - 1) to its mirror, missing the median with P(B <= k - 1),
    # below the tail; a sample too small to leave one rank outside has none
    low = half_binomial_ppf((1 - confidence) / 2, n) - 1
    return min(low, (n - 1) // 2) if low >= 0 else None


def ratio_intervals(
    a: np.ndarray, b: np.ndarray, confidence: float = CONFIDENCE
) -> np.ndarray | None:
    """Per row of a (pairs x n_a) and b: the [low, high] interval of median(b) / median(a), from each
    median's own at 1 - (1 - confidence) / 2 (Bonferroni); None when a side has too few samples."""
    each = 1 - (1 - confidence) / 2
    ra, rb = median_ranks(a.shape[1], each), median_ranks(b.shape[1], each)
    if ra is None or rb is None:
        return None
    sa, sb = np.sort(a, axis=1), np.sort(b, axis=1)
    a_lo, a_hi = sa[:, ra], sa[:, a.shape[1] - 1 - ra]
    b_lo, b_hi = sb[:, rb], sb[:, b.shape[1] - 1 - rb]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([b_lo / a_hi, b_hi / a_lo], axis=1)


class SampleStats:
    """Statistics of per-iteration times in seconds. A subclass says where its values are."""

    def _values(self) -> Sequence[float]:
        raise NotImplementedError

    def _array(self) -> np.ndarray:
        x = np.asarray(self._values(), dtype=np.float64)
        if x.size == 0:
            raise ValueError("no samples")
        return x

    @property
    def count(self) -> int:
        return len(self._values())

    def percentile_s(self, q: float) -> float:
        return float(np.percentile(self._array(), q))

    @property
    def median_s(self) -> float:
        return self.percentile_s(50)

    @property
    def p10_s(self) -> float:
        return self.percentile_s(10)

    @property
    def p90_s(self) -> float:
        return self.percentile_s(90)

    @property
    def mean_s(self) -> float:
        return float(self._array().mean())

    @property
    def min_s(self) -> float:
        return float(self._array().min())

    @property
    def max_s(self) -> float:
        return float(self._array().max())

    @property
    def std_s(self) -> float:
        x = self._array()
        return float(x.std(ddof=1)) if x.size > 1 else 0.0

    @property
    def iqr_ratio(self) -> float:
        """Interquartile range over the median: the noise measure every table shows."""
        q1, q2, q3 = np.percentile(self._array(), [25, 50, 75])
        return float((q3 - q1) / q2) if q2 > 0 else float("nan")

    @property
    def noisy(self) -> bool:
        return bool(self.iqr_ratio > NOISE_THRESHOLD)

    def median_interval_s(self, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
        """The median's distribution-free interval from order statistics; None: too few samples."""
        x = np.sort(self._array())
        n = x.size
        low = median_ranks(n, confidence)
        if low is None:
            return None
        return float(x[low]), float(x[n - 1 - low])

    @property
    def precision_ratio(self) -> float | None:
        """Half the median's 95% confidence interval over the median: how well the number is known."""
        interval = self.median_interval_s()
        median = self.median_s
        if interval is None or median <= 0:
            return None
        return (interval[1] - interval[0]) / 2 / median

    def meets_confidence(self, target_ratio: float) -> bool:
        precision = self.precision_ratio
        return precision is not None and precision <= target_ratio

    @property
    def drift(self) -> Drift:
        """The last tenth of the run against the first: a chip that slows down under load shows here."""
        x = np.asarray(self._values(), dtype=np.float64)
        tenth = x.size // 10
        if tenth < 1:
            return Drift(None, tenth, None)
        first, last = float(np.median(x[:tenth])), float(np.median(x[-tenth:]))
        ratio = last / first if first > 0 else None
        verdict = None if ratio is None or tenth < MIN_DECILE else ratio > DRIFT_LIMIT
        return Drift(ratio, tenth, verdict)


@dataclass(frozen=True)
class Samples(SampleStats):
    """Any series of per-iteration seconds (a span, a launch-inclusive time, one device's times)."""

    values_s: tuple[float, ...]

    def __init__(self, values_s: Sequence[float]) -> None:
        object.__setattr__(self, "values_s", tuple(float(v) for v in values_s))

    def _values(self) -> Sequence[float]:
        return self.values_s


def median_or_none(values_s: Sequence[float]) -> float | None:
    """The median of a series that may be empty (a timer that does not produce it)."""
    return Samples(values_s).median_s if len(values_s) else None
