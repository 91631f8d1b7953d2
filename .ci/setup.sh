#!/usr/bin/env bash
# Installs everything kinetoscope needs into ./.venv and ./node_modules, then builds the
# frontend into the package. Safe to run again; used by samples/demo.sh, tests/run.sh
# and CI, so all three install the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch is only needed by the handler and the samples. 2.13.0 is a CPU build; an
# unpinned torch may pull a multi-GB CUDA build.
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/pip install --quiet "torch==2.13.0"
# setuptools says "Editable installation." in a box on every editable install: news to nobody.
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/pip install --quiet -e ".[dev]"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm (Node.js 20+) is needed to build the frontend" >&2
  exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
npm run --silent build | tail -n 1  # the bundle's total size; errors go to stderr
