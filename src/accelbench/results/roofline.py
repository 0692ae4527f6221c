"""Derived metrics and the roofline: throughput from the op's models, share of peak, the bound."""

from __future__ import annotations

from dataclasses import dataclass, field

from accelbench.core.column import doc
from accelbench.specs import Peaks


@dataclass(slots=True)
class Derived:
    model_flop: float | None = field(default=None, metadata=doc("the op's FLOP model for one call"))
    model_bytes: float | None = field(
        default=None, metadata=doc("the op's byte model: inputs read once, outputs written once")
    )
    tflop_per_s: float | None = None
    gb_per_s: float | None = None  # 1e9 bytes per second
    intensity_flop_per_byte: float | None = None
    per_device_tflop_per_s: float | None = None
    compiler_flop: float | None = field(
        default=None, metadata=doc("XLA's cost analysis of the compiled call: FLOPs (JAX rows)")
    )
    compiler_bytes: float | None = field(
        default=None, metadata=doc("XLA's cost analysis: bytes accessed (JAX rows)")
    )


@dataclass(slots=True)
class Roofline:
    peak_chip: str | None = None
    peak_family: str | None = None
    peak_tflop_per_s: float | None = None
    peak_gb_per_s: float | None = None
    compute_of_peak_pct: float | None = None
    bandwidth_of_peak_pct: float | None = None
    roofline_bound_s: float | None = field(
        default=None, metadata=doc("the time the peaks allow for the modelled FLOPs and bytes")
    )
    roofline_bound_by: str | None = None
    roofline_attained_pct: float | None = field(
        default=None, metadata=doc("`roofline_bound_s` over the median")
    )
    working_set_over_l2_ratio: float | None = field(
        default=None,
        metadata=doc(
            "the byte model over the device's L2: near 1 (L2_EDGE), a `cache: warm` time depends "
            "on which bytes the L2 keeps between iterations, and so on the process's history"
        ),
    )


def derive(
    flops: float, nbytes: float, seconds: float, peaks: Peaks, peak_family: str
) -> tuple[Derived, Roofline]:
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
    derived = Derived(
        model_flop=flops,
        model_bytes=nbytes,
        tflop_per_s=tflops,
        gb_per_s=gbps,
        intensity_flop_per_byte=flops / nbytes if nbytes else None,
    )
    roofline = Roofline(
        peak_chip=peaks.chip,
        peak_family=peak_family,
        peak_tflop_per_s=peak_tflop_per_s,
        peak_gb_per_s=peak_gb_per_s,
        compute_of_peak_pct=100 * tflops / peak_tflop_per_s
        if tflops and peak_tflop_per_s
        else None,
        bandwidth_of_peak_pct=100 * gbps / peak_gb_per_s if gbps and peak_gb_per_s else None,
        roofline_bound_s=bound_s,
        roofline_bound_by=bound_by,
        roofline_attained_pct=100 * bound_s / seconds if bound_s and seconds > 0 else None,
        working_set_over_l2_ratio=nbytes / (peaks.l2_mib * 2**20)
        if peaks.l2_mib and nbytes
        else None,
    )
    return derived, roofline


# a working set within these multiples of the L2 is at its edge: the H100's 48 MiB add 2048x4096 read
# 16.58-17.26 µs under `cache: warm` as unrelated start-up work changed (docs/results_gpu.md, issue 39)
L2_EDGE = (0.75, 1.5)


def at_l2_edge(cache: str | None, ratio: float | None) -> bool:
    """A warm-cache time whose working set is about the L2's size: it varies with the process."""
    return cache == "warm" and ratio is not None and L2_EDGE[0] <= ratio <= L2_EDGE[1]
