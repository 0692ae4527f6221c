#!/bin/sh
# Every Ironwood inference config in turn: fp8/fp4 quantization, GEMMs by dtype, the elementwise ops.
# Extra arguments go to every run, e.g.: sh ./Ironwood/scripts/run_inference_quantization_benchmark.sh --max-dim 64
exec sh "$(dirname "$0")/run_configs.sh" inference "quantization gemm_simple gemm_decode \
  add_bf16 add_fp8 silu_mul_bf16 silu_mul_fp8 sigmoid_bf16 sigmoid_fp8 rmsnorm_bf16" "$@"
