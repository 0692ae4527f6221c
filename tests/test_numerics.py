import numpy as np
import pytest
from test_models import params

from accelbench.catalogue import get_spec
from accelbench.errors import CaseFailure
from accelbench.measure.numerics import check_outputs, check_rows, relative_error


def test_rows_are_all_when_small_and_a_spread_when_large():
    assert list(check_rows(10, 10)) == list(range(10))
    rows = check_rows(100000, 4096)
    assert rows[0] == 0 and rows[-1] == 99999 and len(rows) == 64


def test_relative_error_flags_nan_and_shape_mismatch():
    assert np.isnan(relative_error(np.array([np.nan]), np.array([1.0])))
    assert relative_error(np.zeros(2), np.zeros(3)) == float("inf")


def _run_check(op, fn, **given):
    spec = get_spec(op)
    p = params(op, **given)
    x = spec.make_inputs(p, np.random.default_rng(0))
    out = fn(x, p)
    return check_outputs(spec, p, x, lambda name, rows: out[name][rows])


def test_reference_of_itself_passes_with_zero_error():
    spec = get_spec("gemm")
    err = _run_check("gemm", lambda x, p: spec.reference(x, p, np.arange(p.m)), m=32, k=64, n=16)
    assert err == 0.0


def test_forgetting_the_scales_is_caught():
    spec = get_spec("gemm_simple")  # a GEMM that never applies S_A, S_B
    with pytest.raises(CaseFailure) as info:
        _run_check("gemm", lambda x, p: spec.reference(x, p, np.arange(p.m)), m=32, k=64, n=16)
    assert info.value.status == "wrong_result" and "output 'out'" in info.value.reason


def test_a_nan_output_never_passes():
    def bad(x, p):
        out = get_spec("add").reference(x, p, np.arange(p.m))
        out["out"][0, 0] = np.nan
        return out

    with pytest.raises(CaseFailure, match="relative error nan"):
        _run_check("add", bad, m=8, n=8)


def test_fp8_quantization_reference_rounds_like_the_cast():
    spec = get_spec("quantization")
    p = params("quantization", m=4, n=8)
    x = spec.make_inputs(p, np.random.default_rng(1))
    ref = spec.reference(x, p, np.arange(4))
    assert ref["q"].dtype.name == "float8_e4m3fn" and ref["scale"].shape == (4, 1)
    amax = np.abs(x["x"].astype(np.float64)).max(axis=1)
    np.testing.assert_allclose(ref["scale"][:, 0], amax / 448, rtol=1e-6)
    assert np.abs(ref["q"].astype(np.float64)).max() == 448


def test_fp8_gemms_get_the_accumulation_floor_and_others_do_not():
    from accelbench.measure.numerics import FP8_GEMM_FLOOR

    assert (
        get_spec("gemm_simple").tolerance_floor(params("gemm_simple", m=8, k=8, n=8))
        == FP8_GEMM_FLOOR
    )
    assert (
        get_spec("gemm_multiple_run").tolerance_floor(params("gemm_multiple_run", m=8, k=8, n=8))
        == 0.0
    )
    assert (
        get_spec("gemm_multiple_run").tolerance_floor(
            params("gemm_multiple_run", m=8, k=8, n=8, dtype="float8")
        )
        == FP8_GEMM_FLOOR
    )
    assert get_spec("add").tolerance_floor(params("add", m=8, n=8)) == 0.0
