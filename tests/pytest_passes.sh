#!/usr/bin/env bash
# run.sh's pytest: two workers, a test file to each at a time, then the tests that assert a
# wall-clock bound (marked `timed`) alone, so that the other worker's load cannot push one
# past its bound. Arguments (paths, -k ...) go to both passes. Exit 5 ("no test selected")
# of one pass is not a failure (arguments that name only one kind); of both it is
# (arguments that select nothing, such as a mistyped name).
set -uo pipefail
cd "$(dirname "$0")/.."
workers="${KINETOSCOPE_TEST_WORKERS:-2}"
failed=0
empty=0
pytest_pass() {
  local code=0
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || code=$?
  if [ "$code" = 5 ]; then
    empty=$((empty + 1))
  fi
  [ "$code" = 0 ] || [ "$code" = 5 ]
}
echo "== pytest ($workers workers)"
pytest_pass -n "$workers" --dist loadfile -m "not timed" "$@" || failed=1
echo "== pytest: the timed tests, alone"
pytest_pass -m timed "$@" || failed=1
if [ "$empty" = 2 ]; then
  echo "pytest: no test selected by: $*" >&2
  failed=1
fi
[ "$failed" = 0 ]
