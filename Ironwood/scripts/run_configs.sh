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
mkdir -p "results/ironwood/$group"
started=$(mktemp "results/ironwood/$group/.started.XXXXXX")  # what this run writes is newer
trap 'rm -f "$started"' EXIT
for config in $names; do
  echo "== $group/$config"
  "$PY" Ironwood/src/run_benchmark.py --config="Ironwood/configs/$group/$config.yaml" "$@"
done
# one overview of this run's files (a table and a page beside the per-config ones)
written=$(find "results/ironwood/$group" -maxdepth 1 -name '*.csv' -newer "$started" | sort)
if [ -n "$written" ]; then
  echo "== overview: results/ironwood/$group/overview (summary.md, report.html)"
  # shellcheck disable=SC2086  # one argument per file
  "$PY" -m microbench report $written --output-dir "results/ironwood/$group/overview" --sort op
fi
