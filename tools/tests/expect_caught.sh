#!/usr/bin/env bash
# kit.expect_caught: cmake/expect_caught.sh, the verdict of every known-wrong
# version's test, passes only what it must. A wrong version caught by its
# claim, and one that crashes where its claim says, pass; the solution (not
# caught), a wrong version caught by another claim, a crash claim of another
# function or of a program that does not crash, and a device that is absent
# each fail, with the reason named.
#   tools/tests/expect_caught.sh SOLUTION WRONG CLAIM CRASHING FUNCTION
# SOLUTION, WRONG: lab 01's check, with the solution and with a wrong version
# caught on sim:0 by CLAIM; CRASHING: lab 04's check with a wrong version that
# crashes on the cpu in FUNCTION.
set -uo pipefail
script=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)/cmake/expect_caught.sh
solution=$1 wrong=$2 claim=$3 crashing=$4 function=$5
export LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G
fails=0

expect() { # exit-status reason-or-"" device claim program
  local want=$1 reason=$2 out rc
  shift 2
  out=$(sh "$script" "$@" 2>&1)
  rc=$?
  if ((rc != want)); then
    echo "FAIL: expect_caught.sh $1 \"$2\" ${3##*/} exited with $rc, not $want"
    fails=$((fails + 1))
  elif [[ -n $reason && $(grep "^expect_caught: " <<<"$out") != *"$reason"* ]]; then
    echo "FAIL: expect_caught.sh $1 \"$2\" ${3##*/} did not say \"$reason\": $(tail -n 1 <<<"$out")"
    fails=$((fails + 1))
  else
    echo "ok    ${3##*/} $1 \"$2\": exit $rc${reason:+ ($reason)}"
  fi
}

expect 0 "" sim:0 "$claim" "$wrong"
expect 0 "" cpu "crash in $function" "$crashing"
expect 1 "the check exited with 0: a known-wrong version must make it fail with 1" sim:0 "$claim" "$solution"
expect 1 "the check failed, but not by the claim \"no such claim\"" sim:0 "no such claim" "$wrong"
expect 1 "but no crash report names the line of no_such_function" cpu "crash in no_such_function" "$crashing"
expect 1 "the check exited with 0: this known-wrong version must make it crash in $function" \
  cpu "crash in $function" "$solution"
expect 1 "the check skipped sim:5: it is not here" sim:5 "$claim" "$wrong"
((fails == 0)) || exit 1
echo "kit.expect_caught: every verdict as it must be"
