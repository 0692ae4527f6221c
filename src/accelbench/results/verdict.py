"""One verdict for every comparison of two rows of a case (`compare`, `table()`, the pytest gate,
`ab`): slower or faster only when the ratio's whole interval lies beyond the threshold and beyond
what the rows' differing conditions can explain (docs/method.md, "Verdicts", says why)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple, TypeGuard

from accelbench.errors import Status
from accelbench.results.records import LOADED, THROTTLED, Row, condition_values


class Verdict(str, Enum):
    SLOWER = "slower"
    FASTER = "faster"
    WITHIN = "within threshold"
    NOISE = "noise"
    INCONCLUSIVE = "inconclusive"
    MISSING = "missing in candidate"
    FAILED = "failed in candidate"
    UNSUPPORTED = "newly unsupported"
    NO_TIME = "no usable time"

    @property
    def fails(self) -> bool:
        return self not in (Verdict.FASTER, Verdict.WITHIN, Verdict.NOISE, Verdict.INCONCLUSIVE)


class Evidence(str, Enum):
    ROUNDS = "paired rounds"  # ab: median of the per-round ratios, its order-statistic interval
    SAMPLES = "raw samples"  # each side's median interval (Bonferroni), the ratio's their quotient
    SUMMARY = "p10-p90"  # no samples: b.p10 / a.p90 to b.p90 / a.p10
    NONE = ""


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    evidence: Evidence = Evidence.NONE
    why: str = ""  # what an inconclusive (or noise) verdict rests on
    low: float | None = None  # the interval of the ratio the verdict read
    high: float | None = None

    @property
    def text(self) -> str:
        return f"{self.verdict.value} ({self.why})" if self.why else self.verdict.value

    @property
    def interleave(self) -> bool:
        # withheld for what `ab`'s interleaved rounds would cancel: differing conditions or load
        return self.verdict is Verdict.INCONCLUSIVE and (
            self.why.startswith(CONDITIONS_DIFFER) or LOADED_HOST in self.why
        )


CONDITIONS_DIFFER = "conditions differ"
SUSTAINED = "sustained"  # cadence: each sample is its round's mean
ONE_ROUND = "samples: a sustained row of one round holds its mean, repeated; no spread to judge by"
LOADED_HOST = "loaded host"
# the words of an inconclusive reason that `--fail-inconclusive` may name (all: any reason)
NOISY = "noisy"
REASON_WORDS = ("all", NOISY, "conditions", "loaded", "samples")
CLOCK_TOLERANCE = 0.02  # SM clocks this far apart (relative) are different conditions
STRETCHED = 1.1  # a timed loop whose threads waited for a CPU over a tenth of its wall
MOST_WAIT = 0.99  # a wait share this close to the whole loop says only "stretched a hundredfold"
UNBOUNDED = math.inf  # a condition whose effect on a time has no known bound


PLAUSIBLE_S = (1e-12, 1e6)  # a time outside (a picosecond, eleven days) is a corrupt cell


def usable(seconds: float | None) -> TypeGuard[float]:
    """A time a ratio can be made of (no inf, nan, 0, or extremes whose ratio would overflow)."""
    return seconds is not None and PLAUSIBLE_S[0] <= seconds <= PLAUSIBLE_S[1]


class Host(NamedTuple):
    """A host-timed row's load per core, and its loop's stretch (wall over wall less CPU wait)."""

    load: float
    # None: not recorded (a row of an older version, a host without schedstat)
    stretch: float | None

    @property
    def contended(self) -> bool:
        return self.load > LOADED or (self.stretch or 1.0) > STRETCHED

    @property
    def most(self) -> float:
        """The most contention can have stretched the time (a thread gets 1/L of a core)."""
        return max(1.0, self.load, self.stretch or 1.0)


def _host(row: Row) -> Host | None:
    load, wait = row.conditions.host_load_ratio, row.timing.cpu_wait_ratio
    # a time the host's CPUs make: a host clock, or any timer on a CPU platform
    host_timed = row.timing.timing_source == "wall_clock" or row.environment.platform == "cpu"
    if not host_timed or (load is None and wait is None):
        return None
    if wait is None:
        return Host(load or 0.0, None)
    running = 1 - min(wait / (row.conditions.thread_count or 1), MOST_WAIT)
    return Host(load or 0.0, 1 / running)


def _host_apart(name: str, a: Host, b: Host) -> str:
    said = f", CPU stretch of the loop {_shown(a.stretch)} vs {_shown(b.stretch)}"
    return f"{name} {_shown(a.load)} vs {_shown(b.load)}{said if a.stretch or b.stretch else ''}"


def _shown(value: Any) -> str:
    if value is None:
        return "unrecorded"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Condition:
    """One condition two rows were taken under: whether their values are `material` to a verdict,
    how far they can stretch the ratio (`bound`: slower, faster), whether both had it `alike`."""

    name: str
    value: Callable[[Row], Any]
    material: Callable[[Any, Any], bool] = lambda a, b: a != b
    bound: Callable[[Any, Any], tuple[float, float]] = lambda a, b: (UNBOUNDED, UNBOUNDED)
    described: Callable[[str, Any, Any], str] = lambda name, a, b: (
        f"{name} {_shown(a)} vs {_shown(b)}"
    )
    alike: Callable[[Any, Any], bool] = lambda a, b: a == b

    def judged(self, a: Row, b: Row) -> Found | None:
        va, vb = self.value(a), self.value(b)
        if (va is None and vb is None) or not self.material(va, vb):
            return None
        # one side did not record it: nothing bounds the difference
        slower, faster = (UNBOUNDED,) * 2 if va is None or vb is None else self.bound(va, vb)
        return Found(self.described(self.name, va, vb), slower, faster, not self.alike(va, vb))


class Found(NamedTuple):
    """A condition that matters to a pair (two loaded hosts do not differ, yet bound the ratio)."""

    text: str
    slower: float
    faster: float
    differ: bool


def _settings_apart(name: str, a: Any, b: Any) -> str:
    return "; ".join(
        f"{column} {'default' if x is None else x} vs {'default' if y is None else y}"
        for (column, x), (_, y) in zip(a, b, strict=True)
        if x != y
    )


def _contended(host: Host | None) -> bool:
    return host is not None and host.contended


# A busy host stretches a host-timed row by at most `Host.most`, whatever the other side's load: two
# rows taken minutes apart at one load per core can still meet different neighbours (docs/method.md).
# A slower SM clock stretches a kernel by at most the clock ratio (time ~ 1/clock for a clock-bound
# kernel, less for a memory-bound one).
HOST = Condition(
    "host load per core",
    _host,
    lambda a, b: _contended(a) or _contended(b),
    lambda a, b: (b.most, a.most),
    _host_apart,
    lambda a, b: _contended(a) and _contended(b),
)
CONDITIONS: tuple[Condition, ...] = (
    HOST,
    Condition(
        "SM clock MHz",
        lambda r: r.timing.sm_clock_median_mhz,
        lambda a, b: abs(a - b) > CLOCK_TOLERANCE * max(a, b),
        lambda a, b: (max(1.0, a / b), max(1.0, b / a)),
    ),
    Condition(
        "throttled share",
        lambda r: None if r.timing.discarded_sample_count else r.timing.throttled_share_ratio,
        lambda a, b: max(a or 0.0, b or 0.0) >= THROTTLED,
    ),
    Condition("device", lambda r: r.environment.device_kind),
    Condition(  # clocks set, power limit, MIG, ECC, PCIe, NVLink (DeviceState's verdict columns)
        "device state",
        lambda r: r.device_state,
        lambda a, b: bool(a.differences(b)),
        described=lambda name, a, b: f"{name} {'; '.join(a.differences(b))}",
    ),
    # the run settings `compare` pairs on: rows told apart by nothing else pair, saying which differ
    Condition("settings", condition_values, described=_settings_apart),
)


def _conditions(a: Row, b: Row) -> tuple[list[Found], float, float]:
    found = [j for c in CONDITIONS if (j := c.judged(a, b)) is not None]
    return found, math.prod(j.slower for j in found), math.prod(j.faster for j in found)


def _summary(a: Row, b: Row) -> tuple[float, float] | None:
    a_lo, a_hi = a.stats.time_p10_s, a.stats.time_p90_s
    b_lo, b_hi = b.stats.time_p10_s, b.stats.time_p90_s
    if not (usable(a_lo) and usable(a_hi) and usable(b_lo) and usable(b_hi)):
        return None
    return b_lo / a_hi, b_hi / a_lo


def _read(low: float, high: float, ratio: float, threshold: float, summary: bool) -> Verdict:
    if low > 1 + threshold:
        return Verdict.SLOWER
    if high < 1 - threshold:
        return Verdict.FASTER
    if low < 1 - threshold or high > 1 + threshold:
        within = 1 - threshold <= ratio <= 1 + threshold and low <= 1 <= high
        # p10-p90 ranges that overlap with the medians within the threshold: noise
        return Verdict.NOISE if summary and within else Verdict.INCONCLUSIVE
    return Verdict.NOISE if low <= 1 <= high else Verdict.WITHIN


def _loaded(a: Row, b: Row) -> str:
    hosts = _host(a), _host(b)
    if not any(map(_contended, hosts)):
        return NOISY
    return f"{NOISY}, {LOADED_HOST}: {HOST.described(HOST.name, *hosts)}"


def _one_round(row: Row) -> bool:
    """A sustained row whose p10 and p90 are one value: one round's mean, repeated, so no spread."""
    return row.conditions.cadence == SUSTAINED and row.stats.time_p10_s == row.stats.time_p90_s


def judge(
    a: Row,
    b: Row | None,
    threshold: float,
    interval: tuple[float, float] | None = None,
    evidence: Evidence = Evidence.SAMPLES,
) -> Judgement:
    """The candidate `b` against the baseline `a`, from the ratio's 95% `interval` (else p10-p90)
    widened by the most the differing conditions can stretch it (none for paired rounds)."""
    # the verdicts that need no time: the candidate lost the case (or either side has no time)
    if b is None:
        return Judgement(Verdict.MISSING)
    if b.status is Status.UNSUPPORTED:
        return Judgement(Verdict.UNSUPPORTED)
    if not b.ok:
        return Judgement(Verdict.FAILED)
    if not (usable(a.median_s) and usable(b.median_s)):
        return Judgement(Verdict.NO_TIME)
    if interval is None and (_one_round(a) or _one_round(b)):
        return Judgement(Verdict.INCONCLUSIVE, Evidence.NONE, ONE_ROUND)
    if interval is None:
        interval, evidence = _summary(a, b), Evidence.SUMMARY
    if interval is None:
        return Judgement(Verdict.INCONCLUSIVE, Evidence.NONE, "no samples or p10-p90 to judge by")
    low, high = interval
    found, slower, faster = ([], 1.0, 1.0) if evidence is Evidence.ROUNDS else _conditions(a, b)
    ratio = b.median_s / a.median_s
    summary = evidence is Evidence.SUMMARY
    alone = _read(low, high, ratio, threshold, summary)
    verdict = _read(low / slower, high * faster, ratio, threshold, summary)
    named = "; ".join(j.text for j in found)
    if verdict in (Verdict.SLOWER, Verdict.FASTER):
        why = f"beyond what {named} can explain" if found else ""
    elif verdict is not alone and any(j.differ for j in found):  # withheld for what differs
        verdict, why = Verdict.INCONCLUSIVE, f"{CONDITIONS_DIFFER}: {named}"
    elif verdict is not alone or verdict is Verdict.INCONCLUSIVE:  # noise, or a load on both sides
        verdict, why = Verdict.INCONCLUSIVE, _loaded(a, b)
    else:
        why = ""
    return Judgement(verdict, evidence, why, low, high)
