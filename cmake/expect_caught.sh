#!/bin/sh
# expect_caught.sh: runs a check built with a known-wrong version of a lab's
# solution and passes only if the check catches it: exit status 1 and a "FAIL"
# line whose claim begins with CLAIM (the claim the wrong version's patch
# names). A check that passes, crashes, stops elsewhere or blames another claim
# fails this test. A CLAIM "crash in <function>" asks instead for a crash whose
# report names that function of the student's files, with its line.
#   sh cmake/expect_caught.sh DEVICE CLAIM [LAUNCHER...] PROGRAM
# LAUNCHER: the lab's launcher (LAB_LAUNCHER: lab 10's), or nothing.
# A shell script, not `cmake -P`: the suite runs it about 330 times, and a
# CMake process costs 30 ms of CPU to start where sh costs 1.
device=$1 claim=$2
shift 2
# The check stops as soon as that claim fails (LABKIT_CHECK_UNTIL, check.c):
# what it would check after it cannot change this test's verdict.
LABKIT_CHECK_UNTIL=$claim
export LABKIT_CHECK_UNTIL

fail() {
  printf '%s\n' "expect_caught: $*" >&2
  exit 1
}

case $claim in
  "crash in "*)
    function=${claim#crash in }
    # An index past the end of an array stops at its own line (the arrays a
    # check hands to lab.c end at a guard page): the mistake is caught when the
    # program dies of the signal and its report names the function and line.
    out=$("$@" --device "$device" 2>&1)
    status=$?
    printf '%s\n' "$out"
    [ "$status" -ne 77 ] || fail "the check skipped $device: it is not here"
    # sh reports a death by signal N as 128 + N; the kit's checks exit 0, 1 or 77.
    [ "$status" -gt 128 ] ||
      fail "the check exited with $status: this known-wrong version must make it crash in $function"
    if ! printf '%s\n' "$out" | grep -q '^crash: SIG[A-Z]' ||
      ! printf '%s\n' "$out" | grep -Eq "^  $function at .+:[0-9]+"; then
      fail "the check died ($status), but no crash report names the line of $function"
    fi
    ;;
  *)
    # The claim is looked for in what the check prints on stdout; its
    # messages on stderr go to the test's output as they come.
    out=$("$@" --device "$device")
    status=$?
    printf '%s\n' "$out"
    [ "$status" -ne 77 ] || fail "the check skipped $device: it is not here"
    [ "$status" -eq 1 ] || fail "the check exited with $status: a known-wrong version must make it fail with 1"
    case $out in
      *"  FAIL  $claim"*) ;;
      *) fail "the check failed, but not by the claim \"$claim\" that must catch this mistake" ;;
    esac
    ;;
esac
