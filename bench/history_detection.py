"""How often `history` finds a step, at the right commit, in series like the ones it reads: random
series of 60 runs with one step of 2-10% at a random commit, a 2% drift over the series, and
run-to-run noise as measured between repeated runs of real rows (docs/data): GPU device-timed rows
(the JAX targets on an H100 and an H200), GPU small-kernel rows (the elementwise targets on an
H200), and CPU rows (the quick-start, five runs on this shared 2-core host). The noise is drawn from a
Student t with 3 degrees of freedom scaled to each source's robust sigma: heavier tails than the
normal, as benchmark rows have. Not a test.

    python bench/history_detection.py [--series 1000] [--length 60]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from accelbench.results.change_points import EDGE, steps
from accelbench.results.compare import CaseKey
from accelbench.results.reading import read_rows

DATA = Path(__file__).resolve().parent.parent / "docs" / "data"
SOURCES = {  # the repeated runs each source's noise is measured from
    "GPU, device timer (H100, H200)": [
        ("h100_jax_targets_run1.csv", "h100_jax_targets_run2.csv"),
        ("h200_jax_targets_run1.csv", "h200_jax_targets_run2.csv"),
    ],
    "GPU, small kernels (H200 elementwise)": [
        ("h200_elementwise_target_run4.csv", "h200_elementwise_target_run5.csv")
    ],
    "CPU, this shared 2-core host": [
        (f"cpu_quickstart_runs/{a}", f"cpu_quickstart_runs/{b}")
        for a, b in zip(
            ["quickstart.csv", *(f"quickstart.{i}.csv" for i in range(2, 5))],
            [f"quickstart.{i}.csv" for i in range(2, 6)],
            strict=True,
        )
    ],
}
STEPS = (0.0, 0.02, 0.03, 0.04, 0.05, 0.07, 0.10)
DRIFT = 0.02
T_DOF = 3


def sigma(pairs: list[tuple[str, str]]) -> tuple[float, int]:
    """The robust sigma of one run's median (MAD of the log ratios between two runs of each case,
    over the square root of 2), and how many case pairs it is measured on."""
    ratios = []
    for a, b in pairs:
        first, second = (
            {CaseKey.of(r): r.median_s for r in read_rows(str(DATA / f)) if r.ok and r.median_s}
            for f in (a, b)
        )
        ratios += [math.log(second[k] / v) for k, v in first.items() if k in second]
    x = np.asarray(ratios)
    return 1.4826 * float(np.median(np.abs(x - np.median(x)))) / math.sqrt(2), len(x)


def rates(
    noise: float, step: float, rng: np.random.Generator, series: int, n: int
) -> tuple[float, float, float]:
    """The share of series whose step is found at its commit, found within two runs of it, and the
    false steps per series (anywhere else)."""
    exact = near = false = 0
    t_scale = noise / math.sqrt(T_DOF / (T_DOF - 2))
    for _ in range(series):
        at = int(rng.integers(EDGE, n - EDGE + 1))
        x = np.linspace(0, DRIFT, n) + rng.standard_t(T_DOF, n) * t_scale
        x[at:] += math.log1p(step)
        found = [s.at for s in steps(list(np.exp(x)))]
        exact += step > 0 and at in found
        near += step > 0 and any(abs(s - at) <= 2 for s in found)
        false += sum(not step or abs(s - at) > 2 for s in found)
    return exact / series, near / series, false / series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--length", type=int, default=60)
    args = parser.parse_args()
    rng = np.random.default_rng(60)
    head = " | ".join(f"{s:.0%} step" if s else "no step" for s in STEPS)
    print(
        f"{args.series} series of {args.length} runs a cell, drift {DRIFT:.0%}; each cell: found at "
        "its commit / within two runs / false steps per series\n"
    )
    print(f"| noise (sigma of one run, measured) | {head} |\n|---|{'---|' * len(STEPS)}")
    for source, pairs in SOURCES.items():
        noise, count = sigma(pairs)
        cells = []
        for step in STEPS:
            exact, near, false = rates(noise, step, rng, args.series, args.length)
            cells.append(
                f"{false:.3f} false" if not step else f"{exact:.2f} / {near:.2f} / {false:.3f}"
            )
        print(f"| {source}: {noise:.2%} ({count} pairs) | {' | '.join(cells)} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
