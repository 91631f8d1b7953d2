#!/usr/bin/env bash
# Every check and test: lint and types (Python, TypeScript), unit tests (pytest, frontend),
# the real-browser test in Debian's Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi

echo "== ruff, mypy"
.venv/bin/ruff check tb_plugin handlers tests samples bench
.venv/bin/ruff format --check tb_plugin handlers tests samples bench
.venv/bin/mypy
echo "== import layers (lint-imports)"
.venv/bin/lint-imports

echo "== typescript: tsc, eslint, prettier, unit tests"
npm run --silent typecheck
npm run --silent lint
npm run --silent test

# Two workers, then the tests that assert a wall-clock bound alone (pytest_passes.sh).
bash tests/pytest_passes.sh "$@"

if command -v chromium >/dev/null 2>&1; then
  echo "== real browser (Chromium)"
  # What still runs after pytest, should a TensorBoard start late.
  uptime
  ps -eo pcpu,etimes,args --sort=-pcpu | head -6 | cut -c1-160
  npm run --silent e2e
else
  echo "== real browser: SKIPPED (no chromium; install Debian's chromium package)" >&2
fi
