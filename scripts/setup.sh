#!/usr/bin/env bash
# Create .venv, install the project and its dependencies, then run the default (CPU quick-start) job.
#   scripts/setup.sh             install and run configs/quickstart.yaml
#   scripts/setup.sh --no-run    install only
# PYTHON picks the interpreter (default python3). Without a GPU and without torch installed, the
# CPU build of torch is installed first (TORCH_SPEC, default torch==2.13.0) from PyTorch's CPU index
# (TORCH_INDEX, default https://download.pytorch.org/whl/cpu) so pip does not pull the CUDA build; where
# that index cannot be reached (an offline mirror), pip's own configuration decides.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null && ! command -v nvidia-smi >/dev/null 2>&1; then
  index=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
  if .venv/bin/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=5)" "$index" 2>/dev/null; then
    .venv/bin/python -m pip install -q --index-url "$index" "${TORCH_SPEC:-torch==2.13.0}"
  else
    .venv/bin/python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
  fi
fi
.venv/bin/python -m pip install -q -r requirements.txt
.venv/bin/python -m pip install -q --no-deps -e .
if [ "${1:-}" != "--no-run" ]; then
  .venv/bin/microbench run --config configs/quickstart.yaml  # a re-run is kept as run 2, 3, ...
fi
