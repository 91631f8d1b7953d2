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

# Two workers, a test file to each at a time, then the tests that assert a wall-clock bound
# (marked `timed`) alone, so that the other worker's load cannot push one past its bound.
# Exit 5 is "no test selected" (arguments that name only one kind): not a failure.
pytest_pass() {
  local code=0
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || code=$?
  [ "$code" = 0 ] || [ "$code" = 5 ]
}
echo "== pytest (${KINETOSCOPE_TEST_WORKERS:-2} workers)"
failed=0
pytest_pass -n "${KINETOSCOPE_TEST_WORKERS:-2}" --dist loadfile -m "not timed" "$@" || failed=1
echo "== pytest: the timed tests, alone"
pytest_pass -m timed "$@" || failed=1
[ "$failed" = 0 ]

if command -v chromium >/dev/null 2>&1; then
  echo "== real browser (Chromium)"
  # What still runs after pytest, should a TensorBoard start late.
  uptime
  ps -eo pcpu,etimes,args --sort=-pcpu | head -6 | cut -c1-160
  npm run --silent e2e
else
  echo "== real browser: SKIPPED (no chromium; install Debian's chromium package)" >&2
fi
