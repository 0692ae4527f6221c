#!/bin/sh
# Shared by the run_*_benchmark.sh scripts: run Ironwood/configs/<group>/<name>.yaml for each name, in order.
# Usage: run_configs.sh <group> "<name> <name> ..." [options for every run, e.g. --resume or --max-dim 64]
# LIBTPU_FLAGS, when set, is passed to libtpu as LIBTPU_INIT_ARGS for these runs only, and only on a TPU host.
set -e
group=$1; names=$2; shift 2
cd "$(dirname "$0")/../.."
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
if [ -n "${LIBTPU_FLAGS:-}" ] && ls /dev/accel* /dev/vfio/[0-9]* >/dev/null 2>&1; then
  export LIBTPU_INIT_ARGS="${LIBTPU_INIT_ARGS:-} $LIBTPU_FLAGS"
fi
for config in $names; do
  echo "== $group/$config"
  "$PY" Ironwood/src/run_benchmark.py --config="Ironwood/configs/$group/$config.yaml" "$@"
done
