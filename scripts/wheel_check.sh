#!/usr/bin/env bash
# Build the wheel, install it apart from this checkout, and run the default job from another directory:
# proves a wheel install carries its default config and both backends' code. Takes about a minute
# (dependencies come from .venv, made by scripts/setup.sh). Usage: bash scripts/wheel_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$PWD/.venv/bin/python"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" -m pip wheel -q --no-deps --no-build-isolation . -w "$work/dist"
"$PY" -m pip install -q --no-deps --target "$work/site" "$work"/dist/*.whl
cd "$work"
PYTHONPATH="$work/site" "$PY" - <<'PY'
import accelbench, torch_backend
assert accelbench.__file__.startswith(__import__("os").getcwd()), accelbench.__file__
print("from the wheel:", accelbench.__file__)
PY
PYTHONPATH="$work/site" "$PY" -m accelbench run --num-runs 2 --no-progress 2>&1 | grep -E " ok, |rows:"
test -s results/quickstart.csv
