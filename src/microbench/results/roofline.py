"""Derived metrics: throughput from the op's models, share of peak, and the roofline bound."""

from __future__ import annotations

from microbench.platform.hardware import Peaks


def derive(
    flops: float, nbytes: float, seconds: float, peaks: Peaks, peak_family: str
) -> dict[str, float | str | None]:
    """TFLOP/s, GB/s, intensity, % of peak and the roofline bound for one median time."""
    tflops = flops / seconds / 1e12 if seconds > 0 and flops else None
    gbps = nbytes / seconds / 1e9 if seconds > 0 and nbytes else None
    peak_tflops = peaks.tflops(peak_family)
    peak_gbps = peaks.hbm_gbps
    compute_s = flops / (peak_tflops * 1e12) if peak_tflops and flops else None
    memory_s = nbytes / (peak_gbps * 1e9) if peak_gbps and nbytes else None
    bound_s = None
    bound_by = None
    if compute_s is not None and memory_s is not None:
        bound_s, bound_by = (
            (compute_s, "compute") if compute_s >= memory_s else (memory_s, "memory")
        )
    return {
        "flops": flops,
        "bytes": nbytes,
        "tflops": tflops,
        "gbps": gbps,
        "arithmetic_intensity": flops / nbytes if nbytes else None,
        "peak_family": peak_family,
        "peak_chip": peaks.chip,
        "peak_tflops": peak_tflops,
        "peak_gbps": peak_gbps,
        "pct_peak_tflops": 100 * tflops / peak_tflops if tflops and peak_tflops else None,
        "pct_peak_gbps": 100 * gbps / peak_gbps if gbps and peak_gbps else None,
        "roofline_bound_s": bound_s,
        "roofline_bound_by": bound_by,
        "pct_of_roofline": 100 * bound_s / seconds if bound_s and seconds > 0 else None,
    }
