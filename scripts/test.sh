#!/usr/bin/env bash
# The README's test command: lint, format check, type check, then the whole CPU test suite.
#   scripts/test.sh           everything (what CI runs)
#   scripts/test.sh --fast    the fast tier only (no lint or types, no tests marked slow): the edit-test loop
#   scripts/test.sh --stress [--fast]   the same under artificial load (four busy processes per core,
#                             as a shared CI runner or a laptop doing other work): run before a release
# Extra arguments go to pytest. Installs into .venv first when it is missing. Tests run on every core
# (pytest-xdist); each worker is its own process, so JAX and PyTorch state never leaks between them.
set -euo pipefail
cd "$(dirname "$0")/.."
# found, not imported: importing torch and JAX here cost ten seconds of a loaded machine
if ! .venv/bin/python -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in
    ('accelbench', 'jax', 'torch', 'torchao', 'xprof', 'xdist', 'msgspec', 'xmlschema', 'threadpoolctl')))" 2>/dev/null \
   || [ ! -x .venv/bin/ruff ] || [ ! -x .venv/bin/mypy ]; then
  bash scripts/setup.sh --no-run
fi
if [ "${1:-}" = "--stress" ]; then
  shift
  hogs=()
  for _ in $(seq $((4 * $(nproc)))); do
    .venv/bin/python -c "while True: pass" & hogs+=($!)
  done
  trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
  echo "stress: ${#hogs[@]} busy processes on $(nproc) cores" >&2
  bash "$0" "$@"
  exit $?
fi
if [ "${1:-}" = "--fast" ]; then
  shift
  exec .venv/bin/python -m pytest -q -p no:cacheprovider -n auto -m "not slow" "$@"
fi
.venv/bin/ruff check src torch_backend Ironwood tests bench
.venv/bin/ruff format --check --quiet src torch_backend Ironwood tests bench
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n auto "$@"
