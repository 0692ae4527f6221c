"""Derived metrics: throughput from the op's models, share of peak, and the roofline bound."""

from __future__ import annotations

from microbench.platform.hardware import Peaks


def derive(
    flops: float, nbytes: float, seconds: float, peaks: Peaks, peak_family: str
) -> dict[str, float | str | None]:
    """TFLOP/s, GB/s, intensity, % of peak and the roofline bound for one median time."""
    tflops = flops / seconds / 1e12 if seconds > 0 and flops else None
    gbps = nbytes / seconds / 1e9 if seconds > 0 and nbytes else None
    peak_tflop_per_s = peaks.tflops(peak_family)
    peak_gb_per_s = peaks.hbm_gbps
    compute_s = flops / (peak_tflop_per_s * 1e12) if peak_tflop_per_s and flops else None
    memory_s = nbytes / (peak_gb_per_s * 1e9) if peak_gb_per_s and nbytes else None
    bound_s = None
    bound_by = None
    if compute_s is not None and memory_s is not None:
        bound_s, bound_by = (
            (compute_s, "compute") if compute_s >= memory_s else (memory_s, "memory")
        )
    return {
        "model_flop": flops,
        "model_bytes": nbytes,
        "tflop_per_s": tflops,
        "gb_per_s": gbps,
        "intensity_flop_per_byte": flops / nbytes if nbytes else None,
        "peak_family": peak_family,
        "peak_chip": peaks.chip,
        "peak_tflop_per_s": peak_tflop_per_s,
        "peak_gb_per_s": peak_gb_per_s,
        "compute_of_peak_pct": 100 * tflops / peak_tflop_per_s
        if tflops and peak_tflop_per_s
        else None,
        "bandwidth_of_peak_pct": 100 * gbps / peak_gb_per_s if gbps and peak_gb_per_s else None,
        "roofline_bound_s": bound_s,
        "roofline_bound_by": bound_by,
        "roofline_attained_pct": 100 * bound_s / seconds if bound_s and seconds > 0 else None,
    }
