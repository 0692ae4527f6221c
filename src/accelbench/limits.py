"""Ceilings on every count and duration a config or command line may give, far above any real use: a
value past one is a typo or hostile, refused in one line before anything runs."""

from __future__ import annotations

MAX_ITERATIONS = 10_000_000  # num_runs, warmup, max_runs: ten million timed calls of one case
MAX_ROUNDS = 10_000  # ab's rounds: each measures both sides once
MAX_THREADS = 4096  # threads: no host has more cores
MAX_SECONDS = 7 * 24 * 3600.0  # timeout_s, max_time_s, --timeout: a week
MAX_SOAK_S = 3600.0  # min_duration_s: an hour of one case is a typo, not a soak
MAX_CASES = 1_000_000  # max_cases / --max-cases: the cap on a sweep itself has a ceiling
MAX_INPUT_SETS = 1024  # input_sets
MAX_PROCESSES = 4096  # --processes, --num-processes, --process-id
MAX_QUOTED = 100  # characters of a user's value quoted in an error line
