#!/usr/bin/env bash
# Run the CPU test suite (installs into .venv first when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/python -c "import microbench, jax, torch, torchao, xprof" 2>/dev/null; then
  bash scripts/setup.sh --no-run
fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
