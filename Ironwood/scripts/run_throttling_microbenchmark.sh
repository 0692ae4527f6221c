#!/bin/sh
# The GEMM throttling runs (10000 fp8 16K GEMMs per gap strategy, then 1000 bf16 back to back).
# Extra arguments go to every run, e.g.: sh ./Ironwood/scripts/run_throttling_microbenchmark.sh --num-runs 500
exec sh "$(dirname "$0")/run_configs.sh" throttling \
  "throttling_1 throttling_2 throttling_3 throttling_all_devices_16k" "$@"
