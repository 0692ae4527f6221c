"""The CSV column order, owned in one place so every backend's rows line up."""

from __future__ import annotations

from collections.abc import Iterable

IDENTITY = ("case_id", "run_id", "timestamp", "status", "error", "suite", "benchmark", "op", "backend",
            "implementation", "label")
STATS = ("time_median_s", "time_mean_s", "time_min_s", "time_max_s", "time_p10_s", "time_p90_s", "time_std_s",
         "samples", "iqr_over_median", "noisy")
TIMING = ("timing_source", "timing_fallback", "wall_median_s", "compile_s", "dominant_kernel",
          "dominant_kernel_share", "dominant_kernel_s", "kernels_per_iter", "max_rel_error", "check", "trace_path")
DERIVED = ("flops", "bytes", "tflops", "gbps", "arithmetic_intensity")
ROOFLINE = ("peak_chip", "peak_family", "peak_tflops", "peak_gbps", "pct_peak_tflops", "pct_peak_gbps",
            "roofline_bound_s", "roofline_bound_by", "pct_of_roofline")
ENVIRONMENT = ("device_kind", "device_count", "platform", "framework", "framework_version", "host",
               "git_commit", "config_id")

# Columns a suite adds after the roofline block (declared here so headers are known up front).
SUITE_COLUMNS: dict[str, tuple[str, ...]] = {
    "compute": ("devices_used", "sharding", "per_device_tflops", "cross_backend_rel_error", "paired_with"),
    "quantization": (
        "shape_name", "model_type", "recipe", "sparsity", "recipe_status", "compile_mode", "torch_compile_mode",
        "baseline_eager_ms", "quantized_eager_ms", "baseline_compile_ms", "quantized_compile_ms",
        "eager_speedup", "compile_speedup", "eager_vs_compile_speedup",
        "baseline_compile_time_s", "quantized_compile_time_s", "sqnr_db",
        "weight_bytes_baseline", "weight_bytes_quantized",
        "baseline_peak_memory_mb", "quantized_peak_memory_mb",
        "cpu_threads", "profiler_trace_path", "memory_profile_path", "memory_profile_note"),
    "fusion": ("fusion_pattern", "input_shape", "unfused_latency_ms", "fused_latency_ms", "unfused_gflops",
               "fused_gflops", "unfused_bytes", "fused_bytes", "speedup_factor", "memory_reduction",
               "unfused_kernels", "fused_kernels", "fusion_verdict", "fused_impl", "unfused_peak_memory_mb",
               "fused_peak_memory_mb"),
    "elementwise": ("time_ms", "memory_mb", "inference_speed", "elements_per_s", "throughput_gbps",
                    "gpu_efficiency"),
    "faults": (),
}


def header(param_names: Iterable[str], suites: Iterable[str]) -> list[str]:
    """Stable ordered union: identity, params, statistics, timing, derived, roofline, suite, environment."""
    ordered: list[str] = []
    for name in (*IDENTITY, *param_names, *STATS, *TIMING, *DERIVED, *ROOFLINE,
                 *(c for s in suites for c in SUITE_COLUMNS.get(s, ())), *ENVIRONMENT):
        if name not in ordered:
            ordered.append(name)
    return ordered
