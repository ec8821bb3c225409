#!/usr/bin/env bash
# omp_settings.sh: lab 08's check under OpenMP settings a student may have.
# OMP_DYNAMIC=true (OpenMP may give fewer threads than asked) is turned off by
# the check itself, so the solution holds; OMP_THREAD_LIMIT=1 (which no program
# can lift) stops the check with exit status 2 and says what it prevents,
# instead of failing an empty claim.
#
#   tools/tests/omp_settings.sh CHECK08_SOLUTION
set -uo pipefail
program=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failures=0
rc=0
OMP_THREAD_LIMIT=1 "$program" --device cpu >"$out" 2>&1 || rc=$?
if ((rc == 2)) && grep -q 'OMP_THREAD_LIMIT=1 allows OpenMP teams of 1 thread' "$out"; then
  echo "ok: OMP_THREAD_LIMIT=1: $(grep -m1 OMP_THREAD_LIMIT "$out")"
else
  echo "FAIL: OMP_THREAD_LIMIT=1 gave exit status $rc:"; sed 's/^/    /' "$out"; failures=$((failures + 1))
fi
rc=0
OMP_DYNAMIC=true "$program" --device cpu >"$out" 2>&1 || rc=$?
if ((rc == 0)); then
  echo "ok: OMP_DYNAMIC=true: $(tail -n1 "$out")"
else
  echo "FAIL: OMP_DYNAMIC=true gave exit status $rc:"; sed 's/^/    /' "$out"; failures=$((failures + 1))
fi
((failures == 0))
