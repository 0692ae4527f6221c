#!/usr/bin/env bash
# Create .venv, install the project and its dependencies, then run the default (CPU quick-start) job.
#   scripts/setup.sh             install and run configs/quickstart.yaml
#   scripts/setup.sh --no-run    install only
# PYTHON picks the interpreter (default python3). Without a GPU and without torch installed, the
# CPU build of torch is installed first (TORCH_SPEC, default torch==2.13.0) so pip does not pull CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null && ! command -v nvidia-smi >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
fi
.venv/bin/python -m pip install -q -r requirements.txt
.venv/bin/python -m pip install -q --no-deps -e .
if [ "${1:-}" != "--no-run" ]; then
  .venv/bin/microbench run --config configs/quickstart.yaml --overwrite  # a re-run replaces the last one
fi
