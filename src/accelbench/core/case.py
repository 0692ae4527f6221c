"""A case: one op on one backend with fully resolved parameters, run settings and outputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import KW_ONLY, asdict, dataclass, field, fields
from typing import Any

from accelbench.limits import (
    MAX_INPUT_SETS,
    MAX_ITERATIONS,
    MAX_ROUNDS,
    MAX_SECONDS,
    MAX_SOAK_S,
    MAX_THREADS,
)

CHECK_MODES = ("strict", "flag", "off")
DEVICE_MODES = ("first_device", "max_device")
THROTTLE_POLICIES = ("flag", "discard", "off")
SHAPE_KEYS = ("m", "k", "n")


def content_id(value: Any) -> str:
    """Twelve hex digits of a JSON value's SHA-1, keys sorted: stable across runs and machines."""
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


def shape_label(params: Mapping[str, Any], named: bool = False) -> str:
    """'1024x512x256' (or 'm=1024xk=512xn=256') from whichever of the shape keys are present."""
    parts = [(k, params[k]) for k in SHAPE_KEYS if params.get(k) not in (None, "")]
    return "x".join(f"{k}={v}" if named else str(v) for k, v in parts)


# How a run setting enters a case's id (`Case.id`): "changed" when it differs from its default;
# "always"; "never" (it changes what is done with the samples, not what is measured); or the name
# of the setting whose presence in the id brings this one in with it.
IN_ID_ALWAYS = "always"
IN_ID_CHANGED = "changed"
IN_ID_NEVER = "never"
OWN_POLICIES = (IN_ID_ALWAYS, IN_ID_CHANGED, IN_ID_NEVER)


@dataclass(frozen=True)
class Rule:
    """A run setting's declaration but its doc (config/settings.py checks values by it)."""

    kind: str  # count, seconds (positive), duration (0 or more), fraction, choice, timer
    default: Any = None
    # low, high: a count's bounds, a duration's or seconds' upper one (a fraction: within 0 and 1)
    low: float = 0
    high: float = 0
    _: KW_ONLY  # the rest by name: Rule(kind, default, low, high) is the whole positional form
    choices: tuple[str, ...] = ()
    of: str = ""  # a fraction's whole, as its error says it
    in_id: str = IN_ID_CHANGED
    column: str | None = None  # its results column
    compared: bool = True  # compare pairs only rows agreeing on it (False: it bounds a case's time)
    option: bool = False  # every command line that runs takes `--NAME`


def setting(doc: str, rule: Rule) -> Any:
    """A run setting's field: its doc and rule, and the rule's facts by name (what readers look up)."""
    return field(default=rule.default, metadata={**asdict(rule), "doc": doc, "rule": rule})


@dataclass(frozen=True)
class RunSettings:
    """How a case is timed: each setting declared once; schemas, checks, flags and docs derive."""

    num_runs: int = setting(
        "timed iterations, at least (the floor of a soak or a precision target)",
        Rule(
            "count", 20, 1, MAX_ITERATIONS, in_id=IN_ID_ALWAYS, column="run_count", compared=False
        ),
    )
    warmup: int = setting(
        "untimed calls first",
        Rule(
            "count", 3, 0, MAX_ITERATIONS, in_id=IN_ID_ALWAYS, column="warmup_count", compared=False
        ),
    )
    timeout_s: float | None = setting(
        "stop a case after this long (a row with status timeout)",
        Rule("seconds", high=MAX_SECONDS, in_id=IN_ID_NEVER, compared=False),
    )
    check: str = setting(
        "strict: a wrong result is not timed; flag: timed but flagged; off",
        Rule("choice", "strict", choices=CHECK_MODES, in_id=IN_ID_NEVER, compared=False),
    )
    timer: str = setting(
        "a registered timer; auto picks per backend and platform",
        Rule("timer", "auto", column="timer"),
    )
    cache: str = setting(
        "cold: L2 (or the CPU's last-level cache) flushed before every iteration; warm",
        Rule("choice", "cold", choices=("cold", "warm"), in_id=IN_ID_ALWAYS, column="cache"),
    )
    cadence: str = setting(
        "blocked: each iteration waits for its outputs; sustained: back to back",
        Rule("choice", "blocked", choices=("blocked", "sustained"), column="cadence"),
    )
    threads: int | None = setting(
        "CPU threads for the framework's host ops (default: its own)",
        Rule("count", None, 1, MAX_THREADS, column="thread_count"),
    )
    min_duration_s: float = setting(
        "keep timing until this long has passed (a power or thermal soak); warm-up then lasts at "
        "least min(1 s, min_duration_s / 5)",
        Rule("duration", 0.0, high=MAX_SOAK_S, column="min_duration_s"),
    )
    target_precision: float | None = setting(
        "past num_runs, time in rounds until the median's 95% confidence interval is within +-this "
        "fraction of it",
        Rule("fraction", of="the median (0.01: within 1%)", column="target_precision_ratio"),
    )
    max_runs: int = setting(
        "with target_precision: at most this many iterations",
        Rule(
            "count",
            10_000,
            1,
            MAX_ITERATIONS,
            in_id="target_precision",
            column="max_run_count",
            compared=False,
        ),
    )
    max_time_s: float = setting(
        "with target_precision: no round starts after this much timing wall (the rounds' iterations, "
        "cache flushes and trace reading; not warm-up, compile or the profiler's start-up)",
        Rule(
            "seconds",
            10.0,
            high=MAX_SECONDS,
            in_id="target_precision",
            column="max_time_s",
            compared=False,
        ),
    )
    inputs: str = setting(
        "fixed: one input set every iteration; rotate: input_sets sets cycled through them",
        Rule("choice", "fixed", choices=("fixed", "rotate"), column="inputs"),
    )
    # the row's input_set_count is what the timer cycled through
    input_sets: int = setting(
        "with inputs: rotate, how many sets", Rule("count", 4, 2, MAX_INPUT_SETS, in_id="inputs")
    )
    xprof_device_mode: str = setting(
        "the device plane a one-device op's trace is read from: first_device, or max_device (the "
        "one with the highest median: TPUMS's xprof_device_mode)",
        Rule("choice", "first_device", choices=DEVICE_MODES, column="xprof_device_mode"),
    )
    soak_chunk: int | None = setting(
        "with min_duration_s: TPUMS's soak in phases: a traced window of this many iterations, "
        "untraced chunks of it until min_duration_s has passed, a traced worst window",
        Rule("count", None, 1, MAX_ITERATIONS, column="soak_chunk_count"),
    )
    throttle: str = setting(
        "the device's clocks beside the samples (NVIDIA GPUs: NVML on a side thread; TPUs: the "
        "trace's thermal throttle level): flag (the row says how much of its timing ran throttled), "
        "discard (those samples dropped, then on a GPU a wait for the clocks to recover), off",
        Rule("choice", "flag", choices=THROTTLE_POLICIES, in_id=IN_ID_NEVER, column="throttle"),
    )
    throttle_threshold: float = setting(
        "a sample is throttled below this fraction of the SM clock the run sustained at its best",
        Rule(
            "fraction",
            0.9,
            of="the best SM clock the run sustained",
            in_id=IN_ID_NEVER,
            compared=False,
        ),
    )
    throttle_wait_s: float = setting(
        "with throttle: discard, the longest wait for the clocks to recover after a case",
        Rule("duration", 10.0, high=MAX_SECONDS, in_id=IN_ID_NEVER, compared=False),
    )
    audit: str = setting(
        "the timed windows audited from the trace the device timer reads (GPU: CUPTI, xprof): flag "
        "(the row names each finding), strict (a finding makes the row an error), off",
        Rule(
            "choice",
            "flag",
            choices=("flag", "strict", "off"),
            in_id=IN_ID_NEVER,
            column="audit_mode",
            compared=False,
            option=True,
        ),
    )
    cooldown_s: float = setting(
        "an idle gap after each case (long sweeps: the device cools between cases)",
        Rule("duration", 0.0, high=MAX_SECONDS, in_id=IN_ID_NEVER, compared=False),
    )
    # jax-bench's columns: the host clock of an untraced, blocked loop, timed besides the device timer
    # (set by the jax-bench dialect under upstream's conditions, not by a config)
    host_loop: bool = False


MIN_ROUNDS = 6  # core.samples.MIN_CI_SAMPLES: fewer per-round ratios give no 95% interval


@dataclass(frozen=True)
class AbSettings:
    """How `ab` takes an A/B run (its flags and `ab()`'s keywords)."""

    rounds: int = setting(
        "the most rounds; each measures both sides once", Rule("count", 40, MIN_ROUNDS, MAX_ROUNDS)
    )
    round_runs: int | None = setting(
        "timed iterations of each case per side and round (default: the case's num_runs; a "
        "command: 1)",
        Rule("count", None, 1, MAX_ITERATIONS),
    )
    ratio_precision: float = setting(
        f"stop (after {MIN_ROUNDS} rounds) once every case's paired-ratio 95% interval is within "
        "+-this fraction of its ratio",
        Rule("fraction", 0.01, of="the ratio (0.01: within 1%)"),
    )


def declared_settings() -> tuple[Any, ...]:
    """The run settings a config may give, in declaration order."""
    return tuple(f for f in fields(RunSettings) if "rule" in f.metadata)


def identifying_settings(run: RunSettings) -> dict[str, Any]:
    """The run settings that make a case what it is, by each one's `in_id` (no field left out)."""
    chosen: dict[str, Any] = {}
    declared = fields(RunSettings)
    for f in declared:
        how = f.metadata.get("in_id", IN_ID_CHANGED)
        value = getattr(run, f.name)
        if how == IN_ID_ALWAYS or (how == IN_ID_CHANGED and value != f.default):
            chosen[f.name] = value
    for f in declared:  # settings that come with another (input_sets with inputs: rotate)
        how = f.metadata.get("in_id", IN_ID_CHANGED)
        if how not in OWN_POLICIES and how in chosen:
            chosen[f.name] = getattr(run, f.name)
    return {k: v for k, v in chosen.items() if v is not None}


@dataclass(frozen=True)
class Outputs:
    csv_path: str
    trace_dir: str | None = None
    # the profiler session's name under the case's trace folder: one per case and run (the session
    # names it when the run starts; a case's later rounds replace its earlier ones)
    trace_session: str | None = None
    xla_dump_dir: str | None = None
    xlml_metrics_dir: str | None = None


@dataclass(frozen=True)
class Case:
    op: str
    backend: str
    params: Any  # the op's typed parameters (catalogue.OpParams)
    run: RunSettings
    outputs: Outputs
    benchmark: str
    config_id: str = ""
    implementation: str | None = None  # a registered implementation of the op on this backend
    pair_key: str = field(default="", compare=False)
    # what the dialect whose file named it knows of the case (a reference benchmark's typed fields,
    # benchmarks.Upstream), for that dialect's outputs; opaque here
    origin: Any = field(default=None, compare=False)
    # environment the case's process must start with (libtpu reads its flags once, at start-up)
    process_env: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # the same case asked for again (a jax-bench file under upstream's conditions runs it again)
    occurrence: int = 0

    @property
    def id(self) -> str:
        """Stable across runs: the op, backend, parameters and run settings, nothing else."""
        own = (("implementation", self.implementation), ("occurrence", self.occurrence))
        ident = {
            "op": self.op,
            "backend": self.backend,
            "params": self.params.as_dict(),  # by value: the typed class does not enter the id
            **identifying_settings(self.run),
            **{k: v for k, v in own if v},
        }
        return content_id(ident)

    def distinctions(self) -> dict[str, Any]:
        """What tells this case from another of its op: parameters, settings in its id, repeat."""
        repeat = {"repeat_count": self.occurrence} if self.occurrence else {}
        return {**self.params.as_dict(), **identifying_settings(self.run), **repeat}

    @property
    def label(self) -> str:
        parts = (self.op, self.backend, shape_label(self.params.as_dict()), self.id[:6])
        return "-".join(p for p in parts if p)
