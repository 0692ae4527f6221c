"""Checking an op's output against its float64 reference before anything is timed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from accelbench.catalogue import Arrays, OpSpec, Params
from accelbench.errors import wrong_result
from accelbench.platform.dtypes import of_array

# Relative Frobenius error allowed per output dtype: a few units of the dtype's rounding.
TOLERANCE = {
    "float64": 1e-9,
    "float32": 1e-3,  # fp32 accumulation order; tf32 paths are not used for fp32 GEMMs
    "float16": 3e-3,
    "bfloat16": 1e-2,
    "float8_e4m3fn": 3e-2,  # rare one-ulp differences from a different division rounding
    "float8_e5m2": 6e-2,
    "float4_e2m1fn": 0.15,
}
# fp8 tensor-core GEMMs: XLA on Hopper uses the fast-accumulation mode, whose partial sums keep
# fewer bits than fp32 (measured 2e-3 relative error at K=8192 on an H200, against 1e-6 for
# torch._scaled_mm); outputs of fp8 GEMMs are allowed this much whatever their dtype.
FP8_GEMM_FLOOR = 5e-3
FULL_CHECK_ELEMENTS = 1 << 22
SAMPLED_ROWS = 64


def tolerance(dtype_name: str) -> float:
    """The relative error allowed for an output of this dtype (1e-2 for one not in the table)."""
    return TOLERANCE.get(dtype_name, 1e-2)


def spread_rows(n_rows: int) -> np.ndarray:
    """Up to SAMPLED_ROWS rows spread evenly from the first to the last."""
    return np.unique(np.linspace(0, n_rows - 1, min(SAMPLED_ROWS, n_rows)).astype(np.int64))


def check_rows(n_rows: int, row_len: int) -> np.ndarray:
    """Output rows to compare: all of them when small, else an even spread incl. first and last."""
    return np.arange(n_rows) if n_rows * row_len <= FULL_CHECK_ELEMENTS else spread_rows(n_rows)


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    a = np.asarray(actual).astype(np.float64)
    e = np.asarray(expected).astype(np.float64)
    if a.shape != e.shape:
        return float("inf")
    if not np.all(np.isfinite(a)):
        return float("nan")
    denom, diff = np.linalg.norm(e), np.linalg.norm(a - e)
    return float(diff / denom) if denom > 0 else float(diff)


def check_outputs(
    spec: OpSpec, params: Params, inputs: Arrays, fetch: Callable[[str, np.ndarray], np.ndarray]
) -> float:
    """The worst relative error against the reference (`fetch(name, rows)`: those rows of an output,
    in its dtype); wrong_result where one is off by more than its dtype's tolerance (or NaN)."""
    if spec.reference is None or spec.output_rows is None:
        return float("nan")
    n_rows = spec.output_rows(params)
    first = spec.reference(inputs, params, np.arange(min(1, n_rows)))
    row_len = max(int(np.prod(v.shape[1:])) for v in first.values())
    rows = check_rows(n_rows, row_len)
    expected = spec.reference(inputs, params, rows)
    worst = 0.0
    for name, ref in expected.items():
        actual = fetch(name, rows)
        err = relative_error(actual, ref)
        tol = max(tolerance(of_array(actual).name), spec.tolerance_floor(params))
        if not err <= tol:  # also catches NaN
            raise wrong_result(
                f"output '{name}' differs from the float64 reference: "
                f"relative error {err:.3g} > tolerance {tol:.3g} ({of_array(actual).name})"
            )
        worst = max(worst, err)
    return worst


def digest_rows(
    spec: OpSpec, params: Params, inputs: Arrays, fetch: Callable[[str, np.ndarray], np.ndarray]
) -> dict[str, np.ndarray]:
    """A few output rows, kept so two backends' results for the same case can be compared."""
    if spec.output_rows is None or spec.reference is None:
        return {}
    rows = spread_rows(spec.output_rows(params))
    names = spec.reference(inputs, params, rows[:1]).keys()
    return {name: np.asarray(fetch(name, rows)).astype(np.float64) for name in names}
