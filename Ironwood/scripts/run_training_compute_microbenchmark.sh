#!/bin/sh
# Run the Ironwood training compute microbenchmarks in sequence (gemm, add, quantization, ...).
# Extra arguments go to every run, e.g.: sh ./Ironwood/scripts/run_training_compute_microbenchmark.sh --resume
# LIBTPU_FLAGS, when set, is passed to libtpu as LIBTPU_INIT_ARGS for these runs only, and only on a TPU host.
set -e
cd "$(dirname "$0")/../.."
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
if [ -n "${LIBTPU_FLAGS:-}" ] && ls /dev/accel* /dev/vfio/[0-9]* >/dev/null 2>&1; then
  export LIBTPU_INIT_ARGS="${LIBTPU_INIT_ARGS:-} $LIBTPU_FLAGS"
fi
for config in gemm_multiple_run gemm_simple gemm gemm_accum gemm_fp8_rowwise add \
              quantization transpose_quantization quantization_static_scaling \
              transpose_quantization_static_scaling; do
  echo "== $config"
  "$PY" Ironwood/src/run_benchmark.py --config="Ironwood/configs/training/$config.yaml" "$@"
done
