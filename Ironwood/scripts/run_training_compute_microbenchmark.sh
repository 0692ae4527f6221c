#!/bin/sh
# Every Ironwood training compute config in turn (GEMMs, quantized GEMMs, quantization, swiglu, rmsnorm, add).
# Extra arguments go to every run, e.g.: sh ./Ironwood/scripts/run_training_compute_microbenchmark.sh --resume
exec sh "$(dirname "$0")/run_configs.sh" training "gemm_multiple_run gemm_simple gemm gemm_accum \
  gemm_fp8_rowwise gemm_fp8_rowwise_static_scaling gemm_fp8_rowwise_w_dequantize \
  gemm_fp8_b128_fp32 gemm_fp8_b128_fp32_static_scaling gemm_mxfp8_b32 gemm_mxfp8_b32_static_scaling \
  quantization quantization_static_scaling transpose_quantization transpose_quantization_static_scaling \
  swiglu_fwd swiglu_bwd rmsnorm_fwd rmsnorm_bwd add" "$@"
