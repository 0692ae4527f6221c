#!/usr/bin/env bash
# The README's test command: lint, format check, type check, then the CPU test suite.
# Installs into .venv first when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/python -c "import microbench, jax, torch, torchao, xprof" 2>/dev/null \
   || [ ! -x .venv/bin/ruff ] || [ ! -x .venv/bin/mypy ]; then
  bash scripts/setup.sh --no-run
fi
.venv/bin/ruff check src torch_backend Ironwood tests bench
.venv/bin/ruff format --check --quiet src torch_backend Ironwood tests bench
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
