"""Derived metrics and the roofline: throughput from the op's models, share of peak, the bound."""

from __future__ import annotations

from dataclasses import dataclass

from accelbench.core.column import noted
from accelbench.specs import Peaks


@dataclass(slots=True)
class Derived:
    model_flop: float | None = noted("the op's FLOP model for one call")
    model_bytes: float | None = noted("the op's byte model: inputs read once, outputs written once")
    tflop_per_s: float | None = None
    gb_per_s: float | None = None  # 1e9 bytes per second
    intensity_flop_per_byte: float | None = None
    per_device_tflop_per_s: float | None = None
    compiler_flop: float | None = noted(
        "XLA's cost analysis of the compiled call: FLOPs (JAX rows)"
    )
    compiler_bytes: float | None = noted("XLA's cost analysis: bytes accessed (JAX rows)")


@dataclass(slots=True)
class Roofline:
    peak_chip: str | None = None
    peak_family: str | None = None
    peak_tflop_per_s: float | None = None
    peak_gb_per_s: float | None = None
    compute_of_peak_pct: float | None = None
    bandwidth_of_peak_pct: float | None = None
    roofline_bound_s: float | None = noted(
        "the time the peaks allow for the modelled FLOPs and bytes"
    )
    roofline_bound_by: str | None = None
    roofline_attained_pct: float | None = noted("`roofline_bound_s` over the median")
    working_set_over_l2_ratio: float | None = noted(
        "the byte model over the device's L2: near 1 (L2_EDGE), a `cache: warm` time depends "
        "on which bytes the L2 keeps between iterations, and so on the process's history"
    )


def _pct(part: float | None, whole: float | None) -> float | None:
    return 100 * part / whole if part and whole else None


def derive(
    flops: float, nbytes: float, seconds: float, peaks: Peaks, peak_family: str
) -> tuple[Derived, Roofline]:
    """TFLOP/s, GB/s, intensity, % of peak and the roofline bound for one median time."""
    tflops = flops / seconds / 1e12 if seconds > 0 and flops else None
    gbps = nbytes / seconds / 1e9 if seconds > 0 and nbytes else None
    peak_tflops, peak_gbps = peaks.tflops(peak_family), peaks.hbm_gbps
    compute_s = flops / (peak_tflops * 1e12) if peak_tflops and flops else None
    memory_s = nbytes / (peak_gbps * 1e9) if peak_gbps and nbytes else None
    bound_s, bound_by = None, None
    if compute_s is not None and memory_s is not None:  # compute on a tie
        bound_s, bound_by = max((compute_s, "compute"), (memory_s, "memory"), key=lambda b: b[0])
    l2_bytes = peaks.l2_mib * 2**20 if peaks.l2_mib else None
    intensity = flops / nbytes if nbytes else None
    return Derived(flops, nbytes, tflops, gbps, intensity), Roofline(
        peak_chip=peaks.chip,
        peak_family=peak_family,
        peak_tflop_per_s=peak_tflops,
        peak_gb_per_s=peak_gbps,
        compute_of_peak_pct=_pct(tflops, peak_tflops),
        bandwidth_of_peak_pct=_pct(gbps, peak_gbps),
        roofline_bound_s=bound_s,
        roofline_bound_by=bound_by,
        roofline_attained_pct=_pct(bound_s, seconds if seconds > 0 else None),
        working_set_over_l2_ratio=nbytes / l2_bytes if l2_bytes and nbytes else None,
    )


# a working set within these multiples of the L2 is at its edge: the H100's 48 MiB add 2048x4096 read
# 16.58-17.26 µs under `cache: warm` as unrelated start-up work changed (docs/results_gpu.md, issue 39)
L2_EDGE = (0.75, 1.5)


def at_l2_edge(cache: str | None, ratio: float | None) -> bool:
    """A warm-cache time whose working set is about the L2's size: it varies with the process."""
    return cache == "warm" and ratio is not None and L2_EDGE[0] <= ratio <= L2_EDGE[1]
