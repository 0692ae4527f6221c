#!/bin/sh
# Shared by the run_*_benchmark.sh scripts: run Ironwood/configs/<group>/<name>.yaml for each name, in order.
# Usage: run_configs.sh <group> "<name> <name> ..." [options for every run, e.g. --resume or --max-dim 64]
# LIBTPU_FLAGS, when set, is passed to libtpu as LIBTPU_INIT_ARGS for these runs only, and only on a TPU host.
# A config with a failed case does not stop the group (its rows say why; the exit code is the worst
# one); a Ctrl-C or SIGTERM does.
set -u
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
status=0
for config in $names; do
  echo "== $group/$config"
  code=0
  "$PY" Ironwood/src/run_benchmark.py --config="Ironwood/configs/$group/$config.yaml" "$@" || code=$?
  [ "$code" -gt 128 ] && exit "$code"  # stopped by a signal: the run printed how to resume
  [ "$code" -gt "$status" ] && status=$code
done
# one overview of this run's files (a table and a page beside the per-config ones); find hands the
# names over as they are, spaces and all
overview="results/ironwood/$group/overview"
if [ -n "$(find "results/ironwood/$group" -maxdepth 1 -name '*.csv' -newer "$started" | head -n 1)" ]; then
  echo "== overview: $overview (summary.md, report.html)"
  find "results/ironwood/$group" -maxdepth 1 -name '*.csv' -newer "$started" \
    -exec "$PY" -m accelbench report --output-dir "$overview" --sort op {} + || status=1
fi
exit "$status"
