"""The CSV column order, generated from the typed row, and the unit every numeric column's name ends in."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import fields

from accelbench.results.records import BODY_GROUPS, HEAD_GROUPS, TAIL_GROUPS, group_columns

IDENTITY = group_columns(HEAD_GROUPS)
STATS = group_columns(BODY_GROUPS[:1])
BODY = group_columns(BODY_GROUPS)
ENVIRONMENT = group_columns(TAIL_GROUPS)

# A numeric column's name ends in its unit, one of these (longest first: `_gb_per_s` before `_s`).
# The op's parameters are the exception: they keep the names the configs give them.
UNIT_SUFFIXES: dict[str, str] = {
    "_tflop_per_s": "10^12 floating-point operations per second",
    "_gflop_per_s": "10^9 floating-point operations per second",
    "_gib_per_s": "2^30 bytes per second",
    "_gb_per_s": "10^9 bytes per second",
    "_flop_per_byte": "floating-point operations per byte moved",
    "_per_s": "events (calls, elements) per second",
    "_per_iter": "kernel launches per timed iteration",
    "_flop": "floating-point operations",
    "_bytes": "bytes",
    "_count": "things counted (samples, devices, threads)",
    "_ratio": "a quotient of like quantities: speedup, drift, relative error",
    "_pct": "percent, 0 to 100",
    "_db": "decibels",
    "_mhz": "megahertz",
    "_c": "degrees Celsius",
    "_w": "watts",
    "_s": "seconds",
}


# Files written before the convention: old name -> (new name or None where the column was a duplicate,
# factor to the new unit). `read_rows` applies it, so compare, report and bench/ read either vintage.
EARLIER_NAMES: dict[str, tuple[str | None, float]] = {
    "samples": ("sample_count", 1),
    "iqr_over_median": ("iqr_over_median_ratio", 1),
    "decile_drift": ("decile_drift_ratio", 1),
    "decile_samples": ("decile_sample_count", 1),
    "threads": ("thread_count", 1),
    "dominant_kernel_share": ("dominant_kernel_pct", 100),
    "max_rel_error": ("max_rel_error_ratio", 1),
    "sm_clock_mhz_first": ("sm_clock_first_mhz", 1),
    "sm_clock_mhz_last": ("sm_clock_last_mhz", 1),
    "sm_clock_mhz_min": ("sm_clock_min_mhz", 1),
    "temperature_c_max": ("temperature_max_c", 1),
    "power_w_max": ("power_max_w", 1),
    "flops": ("model_flop", 1),
    "bytes": ("model_bytes", 1),
    "tflops": ("tflop_per_s", 1),
    "gbps": ("gb_per_s", 1),
    "arithmetic_intensity": ("intensity_flop_per_byte", 1),
    "per_device_tflops": ("per_device_tflop_per_s", 1),
    "peak_tflops": ("peak_tflop_per_s", 1),
    "peak_gbps": ("peak_gb_per_s", 1),
    "pct_peak_tflops": ("compute_of_peak_pct", 1),
    "pct_peak_gbps": ("bandwidth_of_peak_pct", 1),
    "pct_of_roofline": ("roofline_attained_pct", 1),
    "cross_backend_rel_error": ("cross_backend_rel_error_ratio", 1),
    "host_cpus": ("host_cpu_count", 1),
    "devices_used": ("used_device_count", 1),
    "group_size": ("group_device_count", 1),
    "groups": ("group_count", 1),
    "processes": ("process_count", 1),
    "devices": ("used_device_count", 1),
    "algbw_gbps": ("algbw_gb_per_s", 1),
    "bus_factor": ("bus_factor_ratio", 1),
    "busbw_gbps": ("busbw_gb_per_s", 1),
    "transferred_gb": ("transferred_bytes", 1e9),
    "achieved_bw_gbps": ("achieved_bw_gb_per_s", 1),
    "theoretical_bw_gbps": ("theoretical_bw_gb_per_s", 1),
    "unfused_latency_ms": ("unfused_latency_s", 1e-3),
    "fused_latency_ms": ("fused_latency_s", 1e-3),
    "unfused_gflops": ("unfused_gflop_per_s", 1),
    "fused_gflops": ("fused_gflop_per_s", 1),
    "speedup_factor": ("speedup_ratio", 1),
    "memory_reduction": ("memory_reduction_pct", 100),
    "unfused_kernels": ("unfused_kernels_per_iter", 1),
    "fused_kernels": ("fused_kernels_per_iter", 1),
    "unfused_peak_memory_mb": ("unfused_peak_memory_bytes", 2**20),
    "fused_peak_memory_mb": ("fused_peak_memory_bytes", 2**20),
    "gibps": ("gib_per_s", 1),
    "baseline_eager_ms": ("baseline_eager_s", 1e-3),
    "quantized_eager_ms": ("quantized_eager_s", 1e-3),
    "baseline_compile_ms": ("baseline_compiled_s", 1e-3),
    "quantized_compile_ms": ("quantized_compiled_s", 1e-3),
    "eager_speedup": ("eager_speedup_ratio", 1),
    "compile_speedup": ("compiled_speedup_ratio", 1),
    "eager_vs_compile_speedup": ("compiled_over_eager_speedup_ratio", 1),
    "weight_density": ("weight_density_pct", 100),
    "weight_bytes_baseline": ("baseline_weight_bytes", 1),
    "weight_bytes_quantized": ("quantized_weight_bytes", 1),
    "baseline_peak_memory_mb": ("baseline_peak_memory_bytes", 2**20),
    "quantized_peak_memory_mb": ("quantized_peak_memory_bytes", 2**20),
    "speedup": ("speedup_ratio", 1),
    "baseline_ms": ("baseline_s", 1e-3),
    "float8_ms": ("float8_s", 1e-3),
    "memory_mb": ("peak_memory_bytes", 2**20),
    "inference_speed": ("calls_per_s", 1),
    "cpu_threads": (None, 1),  # thread_count
    "time_ms": (None, 1),  # time_median_s
    "throughput_gbps": (None, 1),  # gb_per_s
    "gpu_efficiency": (None, 1),  # bandwidth_of_peak_pct
}


def _scaled(value: str, factor: float) -> str:
    if factor == 1 or value == "":
        return value
    try:
        number = float(value) * factor
    except ValueError:
        return value
    return str(round(number)) if math.isfinite(number) and factor >= 1e6 else f"{number:.6g}"


def upgrade(row: dict[str, str]) -> dict[str, str]:
    """A row of either vintage in today's names and units (today's columns are left as they are)."""
    if "sample_count" in row or "samples" not in row:  # today's file, or not one of this harness's
        return row
    out: dict[str, str] = {}
    for name, value in row.items():
        new, factor = EARLIER_NAMES.get(name, (name, 1))
        # today's column as it is; of two old names of one column, the filled one wins
        if new is not None and (new == name or not out.get(new)):
            out[new] = _scaled(value, factor)
    return out


def header(param_names: Iterable[str], extras: Iterable[type | None] = ()) -> list[str]:
    """Stable ordered union: identity, params, the body groups, extras, environment."""
    extra = [f.name for cls in extras if cls is not None for f in fields(cls)]
    return list(dict.fromkeys((*IDENTITY, *param_names, *BODY, *extra, *ENVIRONMENT)))
