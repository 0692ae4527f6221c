#!/usr/bin/env bash
# The project on the newest releases: a separate venv (.venv-newest) with the newest jax, torch, torchao,
# protobuf and the rest, then the default job (its stderr must hold only the run's own lines) and the test
# suite. Extra arguments go to pytest (e.g. -m "not slow").
#   PYTHON   the interpreter (default: python3.12 where it exists, else python3)
#   VENV     the venv's folder (default .venv-newest)
# Where a pip configuration caps versions (a mirror's constraints file), run it with PIP_CONFIG_FILE=/dev/null.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$(command -v python3.12 || command -v python3)}
VENV=${VENV:-.venv-newest}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q --upgrade --upgrade-strategy eager -r requirements.txt
"$VENV/bin/python" -m pip install -q --no-deps -e .
"$VENV/bin/python" - <<'PY'
import importlib.metadata as m, platform
names = ("jax", "jaxlib", "torch", "torchao", "protobuf", "numpy", "xprof")
print("python", platform.python_version(), *(f"{n} {m.version(n)}" for n in names))
PY
work=$(mktemp -d)
( cd "$work" && "$OLDPWD/$VENV/bin/microbench" run --no-progress >/dev/null 2>stderr.txt ) || true
own='^(note: |warning: [0-9]+ of |rows: |[0-9]+ ok, |[0-9]+ of [0-9]+ cases|run [0-9]+ of)'
if grep -Ev "$own" "$work/stderr.txt" | grep -q .; then
  echo "stderr of the default job holds lines that are not the run's own:"
  grep -Ev "$own" "$work/stderr.txt"
  exit 1
fi
echo "default job: clean stderr"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n auto "$@"
