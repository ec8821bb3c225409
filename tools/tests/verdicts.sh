#!/usr/bin/env bash
# verdicts.sh: the one line ./lab check gives (tools/lab/verdict.sh), from
# what a check printed: never empty; a crash named by its first frame in the
# student's files; a sanitizer's finding with its first line and frame; a
# skipped device never counted as a pass, with every lab's own check program.
#
#   tools/tests/verdicts.sh BUILD_DIR CRASH_PROGRAM CC
#
# BUILD_DIR holds the labs' check programs; CRASH_PROGRAM is the test's own
# program that crashes in tools/tests/crash/labs/04_matmul/lab.c; CC compiles
# a small program with AddressSanitizer (that part skips without one).
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
build=$1 crash_program=$2 cc=$3
ROOT=$KIT
source "$KIT/tools/lab/verdict.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# verdict_of LAB_DIR OUTCOME LOG: the one line for a run on cpu.
verdict_of() {
  LAB=$1 LAB_NN=${1%%_*}
  next_step_line cpu "$2" "$3"
}

# expect_line WHAT GOT WANTED...: GOT contains every WANTED text.
expect_line() {
  local what=$1 got=$2 wanted
  shift 2
  for wanted in "$@"; do
    if [[ $got != *"$wanted"* ]]; then
      fail "$what: \"$got\" does not say \"$wanted\""
      return
    fi
  done
  echo "ok: $what: $got"
}

# ---- a claim, a failed call, nothing at all: never an empty verdict -------------------
printf '  ok    one\n  FAIL  the rows sum to 1: 3 rows of 4 do not\n' >"$work/claim.log"
expect_line "a failed claim" "$(verdict_of 07_layers fail "$work/claim.log")" 'on cpu: "the rows sum to 1" does not hold'
printf 'labs/02_copying/check.c:57: lab_add_across(a, b, sum) failed (STATUS_BAD_ARGUMENT): injected failure\n' \
  >"$work/call.log"
expect_line "a CHECK() that stopped the check" "$(verdict_of 02_copying fail "$work/call.log")" \
  "on cpu: a call failed: labs/02_copying/check.c:57: lab_add_across(a, b, sum) failed (STATUS_BAD_ARGUMENT): injected failure"
: >"$work/empty.log"
got=$(verdict_of 02_copying fail "$work/empty.log")
[[ -n $got && $got != *'""'* ]] && echo "ok: a check that failed and said nothing: $got" ||
  fail "a check that failed and said nothing gives \"$got\""
printf 'labkit-devices: LABKIT_SIM_GPUS="two" is not a number of simulated GPUs.\n' >"$work/error.log"
expect_line "a check that stopped with 2" "$(verdict_of 04_matmul "error 2" "$work/error.log")" \
  'on cpu the check stopped with exit status 2: labkit-devices: LABKIT_SIM_GPUS="two"'

# ---- a TODO: the hint of the lab whose step it is ----------------------------------------
printf 'TODO: step 2: lab_add_across is not written yet (labs/02_copying/lab.c:31)\n' >"$work/todo.log"
expect_line "a TODO of the lab's own" "$(verdict_of 02_copying todo "$work/todo.log")" \
  "step 2: lab_add_across is not written yet (labs/02_copying/lab.c:31); ./lab hint 02 gives a nudge"
printf 'TODO: step 1: lab_layer_backward is not written yet (labs/05_training_loop/lab.c:20)\n' >"$work/used.log"
expect_line "a TODO of a lab it uses (lab 10's check, lab 05's step)" \
  "$(verdict_of 10_distributed todo "$work/used.log")" "(labs/05_training_loop/lab.c:20); lab 10 uses your lab 05: ./lab hint 05 gives a nudge"

# ---- crashes: the first frame in the student's files ------------------------------------
cat >"$work/crash.log" <<'EOF'
  ok    a claim before
crash: SIGSEGV: a read or write outside the memory this program owns
where (innermost first; your lab.c and kernel files are the place to look):
  fixture_store at labs/04_matmul/given.c:12
  lab_matmul_ikj at labs/04_matmul/lab.c:41 (discriminator 3)
  main at labs/04_matmul/check.c:88
next: fix the line above.
EOF
got=$(verdict_of 04_matmul crash "$work/crash.log")
expect_line "a crash in a helper called from lab.c" "$got" "it crashed on cpu, in lab_matmul_ikj at labs/04_matmul/lab.c:41"
[[ $(sed -n '/^where/{n;p;}' "$work/crash.log") != *lab.c* ]] || fail "the crash above does not test the frame's choice"
cat >"$work/kernel.log" <<'EOF'
crash: SIGSEGV: a read or write outside the memory this program owns
where (innermost first; your lab.c and kernel files are the place to look):
  launch_block at common/core/src/launch.c:200
  (inlined by) naive_matmul_kernel at labs/04_matmul/naive_kernel.cuh:22
  lab_matmul_naive_gpu at labs/04_matmul/lab.c:90
gpu thread: block (1, 0, 0) thread (5, 0, 0) of sim:0
EOF
expect_line "a crash in a kernel on the simulated GPU" "$(verdict_of 04_matmul crash "$work/kernel.log")" \
  "in naive_matmul_kernel at labs/04_matmul/naive_kernel.cuh:22" "(gpu thread: block (1, 0, 0) thread (5, 0, 0) of sim:0)"
cat >"$work/library.log" <<'EOF'
crash: SIGFPE: an integer division by zero
where (innermost first; your lab.c and kernel files are the place to look):
  tensor_numel at common/core/src/tensor.c:80
  main at labs/04_matmul/main.c:12
EOF
expect_line "a crash with no frame in the student's files" "$(verdict_of 04_matmul crash "$work/library.log")" \
  "in tensor_numel at common/core/src/tensor.c:80"
# A run that exits 0 without the check's last line is no pass: a lab.c can
# end the program before any claim (exit(0) in a constructor of its own).
printf '  ok    one\n' >"$work/early.log"
outcome=$(check_outcome 0 "$work/early.log")
[[ $outcome == "error 0" ]] || fail "a run that ended with 0 before its summary read as \"$outcome\""
expect_line "a run that ended early" "$(verdict_of 01_devices "$outcome" "$work/early.log")" \
  "on cpu the check ended before its last line" "does your lab.c end the program itself (exit)?"
printf '  ok    one\n01_devices on sim:0: PASS (1 claim holds)\n' >"$work/whole.log"
[[ $(check_outcome 0 "$work/whole.log") == pass ]] || fail "a run with its summary read as \"$(check_outcome 0 "$work/whole.log")\""

# A crash of one of lab 10's ranks: every line of its report starts with
# "[rank N] " (crash.c), and the other rank's claims come first.
cat >"$work/rank.log" <<'EOF'
  ok    lab_ranks gives every rank its own number
[rank 1] 
[rank 1] crash: SIGABRT: the program aborted itself
[rank 1] where (innermost first; your lab.c and kernel files are the place to look):
[rank 1]   abort at libc.c:1
[rank 1]   lab_ring_allreduce at labs/10_distributed/lab.c:84
[rank 1] next: fix the line above.
EOF
outcome=$(check_outcome 134 "$work/rank.log")
[[ $outcome == crash ]] || fail "a rank's crash report read as \"$outcome\", not crash"
expect_line "a crash of a rank" "$(verdict_of 10_distributed crash "$work/rank.log")" \
  "it crashed on cpu, in lab_ring_allreduce at labs/10_distributed/lab.c:84"
expect_line "a rank's crash, highlighted" "$(log_highlights "$work/rank.log" | paste -sd'|' -)" \
  "[rank 1] crash: SIGABRT" "[rank 1]   lab_ring_allreduce at labs/10_distributed/lab.c:84"
expect_line "a stop that is no crash names no claim that held" \
  "$(verdict_of 10_distributed "error 134" "$work/claim.log")" "on cpu the check stopped with exit status 134: "
[[ $(verdict_of 10_distributed "error 134" "$work/claim.log") != *"ok    one"* ]] ||
  fail "a stop's reason was a claim that held: $(verdict_of 10_distributed "error 134" "$work/claim.log")"

# The real report of a real crash (labkit/crash.h), made by this test's own
# program; under AddressSanitizer (the debug-asan preset) it is the
# sanitizer's report instead, which must name the same line.
# (bash's own "Segmentation fault" line kept out of this test's output)
rc=$("$crash_program" >"$work/real-crash.log" 2>&1; echo $?) 2>/dev/null
outcome=$(check_outcome "$rc" "$work/real-crash.log")
line=$(grep -n 'the crashing call' "$KIT/tools/tests/crash/labs/04_matmul/lab.c" | cut -d: -f1)
case $outcome in
  crash)
    expect_line "a real crash report" "$(verdict_of 04_matmul crash "$work/real-crash.log")" \
      "in lab_matmul_ikj at tools/tests/crash/labs/04_matmul/lab.c:$line" ;;
  sanitizer)
    expect_line "a real crash under AddressSanitizer" "$(verdict_of 04_matmul sanitizer "$work/real-crash.log")" \
      "AddressSanitizer: SEGV, in lab_matmul_ikj at tools/tests/crash/labs/04_matmul/lab.c:$line" ;;
  *) fail "the crash program gave the outcome \"$outcome\" (exit status $rc):"; sed 's/^/    /' "$work/real-crash.log" ;;
esac

# ---- sanitizers: their first line and the frame in the student's files --------------------
cat >"$work/asan.log" <<EOF
  ok    a claim before
=================================================================
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000054 at pc 0x5581 bp 0x7ffd sp 0x7ffd
WRITE of size 4 at 0x602000000054 thread T0
    #0 0x55d1 in __interceptor_memset ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:799
    #1 0x55d2 in fill_rows $ROOT/labs/04_matmul/given.c:30:9
    #2 0x55d3 in lab_matmul_ikj $ROOT/labs/04_matmul/lab.c:41:13
    #3 0x55d4 in main $ROOT/labs/04_matmul/check.c:88:5

0x602000000054 is located 0 bytes to the right of 4-byte region
allocated by thread T0 here:
    #0 0x7f in malloc
    #1 0x55d5 in lab_other $ROOT/labs/04_matmul/lab.c:12:5
EOF
rc=1
outcome=$(check_outcome 1 "$work/asan.log")
[[ $outcome == sanitizer ]] || fail "an AddressSanitizer report that exits 1 is the outcome \"$outcome\", not sanitizer"
expect_line "AddressSanitizer" "$(verdict_of 04_matmul sanitizer "$work/asan.log")" \
  "on cpu: AddressSanitizer: heap-buffer-overflow, in lab_matmul_ikj at labs/04_matmul/lab.c:41"
cat >"$work/leak.log" <<EOF
==77==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f in malloc (/lib/x86_64-linux-gnu/libasan.so.8+0xd8)
    #1 0x55 in tensor_empty $ROOT/common/core/src/tensor.c:120:9
    #2 0x56 in lab_linear_create $ROOT/labs/01_devices/lab.c:75:5
EOF
expect_line "LeakSanitizer" "$(verdict_of 01_devices sanitizer "$work/leak.log")" \
  "LeakSanitizer: detected memory leaks, allocated in lab_linear_create at labs/01_devices/lab.c:75"
printf '%s\n' "$ROOT/labs/07_layers/lab.c:64:21: runtime error: index 9 out of bounds for type 'float [9]'" \
  "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior" >"$work/ubsan.log"
[[ $(check_outcome 1 "$work/ubsan.log") == sanitizer ]] || fail "a UBSan report is not the outcome sanitizer"
expect_line "UndefinedBehaviorSanitizer" "$(verdict_of 07_layers sanitizer "$work/ubsan.log")" \
  "UndefinedBehaviorSanitizer: index 9 out of bounds for type 'float [9]', at labs/07_layers/lab.c:64"
# A real report: a small program that writes past a heap array in a lab.c of
# its own, compiled with AddressSanitizer by the kit's compiler.
mkdir -p "$work/root/labs/04_matmul"
cat >"$work/root/labs/04_matmul/lab.c" <<'EOF'
#include <stdlib.h>
void lab_matmul_ikj(float *c, int n)
{
    for (int i = 0; i <= n; ++i) c[i] = 1.0f; /* one past the end */
}
int main(void)
{
    float *c = malloc(4 * sizeof *c);
    lab_matmul_ikj(c, 4);
    free(c);
    return 0;
}
EOF
if "$cc" -g -O0 -fsanitize=address -o "$work/asan" "$work/root/labs/04_matmul/lab.c" 2>"$work/cc.log"; then
  rc=0
  ASAN_OPTIONS=detect_leaks=0 "$work/asan" >"$work/real-asan.log" 2>&1 || rc=$?
  ROOT=$work/root
  expect_line "a real AddressSanitizer report (exit status $rc)" \
    "$(verdict_of 04_matmul "$(check_outcome "$rc" "$work/real-asan.log")" "$work/real-asan.log")" \
    "on cpu: AddressSanitizer: heap-buffer-overflow, in lab_matmul_ikj at labs/04_matmul/lab.c:4"
  ROOT=$KIT
else
  echo "skipped: a real AddressSanitizer report ($cc -fsanitize=address does not build here: $(head -n1 "$work/cc.log"))"
fi

# ---- a skipped device is never a pass -----------------------------------------------------
printf '04_matmul on cpu: PASS (3 claims hold)\n' >"$work/pass.log"
printf 'skipped: sim:0 does not exist here\n' >"$work/skip.log"
# The rule ./lab check had: a skip counted as a pass. The cases below must tell it apart.
old_rule() {
  local outcome
  for outcome in $1; do case $outcome in pass|skipped) ;; *) echo "not yet"; return ;; esac; done
  echo "done"
}
verdict_case() { # WHAT WANTED LABELS OUTCOMES LOGS (space-separated)
  local got rc=0
  got=$(check_verdict "$(tr ' ' '\n' <<<"$3")" "$(tr ' ' '\n' <<<"$4")" "$(tr ' ' '\n' <<<"$5")") || rc=$?
  if [[ $got != "$2"* ]] || { [[ $2 == done* ]] && ((rc != 0)); } || { [[ $2 != done* ]] && ((rc == 0)); }; then
    fail "$1: \"$got\" (status $rc), wanted \"$2...\""
  else
    echo "ok: $1: $got"
  fi
}
verdict_case "cpu and sim:0 pass" "done (every claim holds on cpu, sim:0)" "cpu sim:0" "pass pass" "$work/pass.log $work/pass.log"
verdict_case "sim:0 skipped" "not yet — no GPU, real or simulated, was checked (skipped: sim:0)" \
  "cpu sim:0" "pass skipped" "$work/pass.log $work/skip.log"
[[ $(old_rule "pass skipped") == done ]] || fail "the old rule would not have passed the skipped sim:0"
verdict_case "cpu skipped" "not yet — the cpu was not checked (skipped: cpu)" "cpu sim:0" "skipped pass" \
  "$work/skip.log $work/pass.log"
verdict_case "the cpu alone" "not yet — no GPU, real or simulated, was checked" "cpu" "pass" "$work/pass.log"
verdict_case "cuda:0 skipped beside sim:0" "done (every claim holds on cpu, sim:0)" "cpu sim:0 cuda:0" \
  "pass pass skipped" "$work/pass.log $work/pass.log $work/skip.log"
verdict_case "an environment beside" "done (every claim holds on cpu, sim:0, cpu.nogpu)" "cpu sim:0 cpu.nogpu" \
  "pass pass pass" "$work/pass.log $work/pass.log $work/pass.log"
# A claim the machine could not try is not a pass either (LABKIT_SIM_GPUS=1:
# lab 01's layer split across two GPUs of one kind), unless only a lab's own
# environment, which takes GPUs away on purpose, left it out.
{ cat "$work/pass.log"; printf '  (no two GPUs of one kind here: a layer split across sim:0 and sim:1 is not tried)\n'; } \
  >"$work/untried.log"
verdict_case "a claim not tried on sim:0" \
  "not yet — every claim tried holds on cpu, sim:0, but 1 claim was not tried here (on sim:0: no two GPUs of one kind here: a layer split across sim:0 and sim:1 is not tried)" \
  "cpu sim:0" "pass pass" "$work/pass.log $work/untried.log"
verdict_case "claims not tried in an environment alone" "done (every claim holds on cpu, sim:0, cpu.onegpu)" \
  "cpu sim:0 cpu.onegpu" "pass pass pass" "$work/pass.log $work/pass.log $work/untried.log"
# Every lab's own check skips a device that is absent (exit 77, "skipped:"),
# and that skip is never a pass.
for dir in "$KIT"/labs/[0-9][0-9]_*/; do
  lab=$(basename "$dir")
  program=$build/labs/$lab/check${lab%%_*}
  [[ -x $program ]] || { echo "skipped: $lab (not built here: $program)"; continue; }
  rc=0
  LABKIT_SIM_GPUS=0 LABKIT_SIM_MEMORY= "$program" --device sim:0 >"$work/$lab.log" 2>&1 </dev/null || rc=$?
  outcome=$(check_outcome "$rc" "$work/$lab.log")
  if [[ $outcome != skipped ]]; then
    fail "$lab's check on an absent sim:0: exit status $rc, outcome $outcome:"; sed 's/^/    /' "$work/$lab.log"
    continue
  fi
  LAB=$lab LAB_NN=${lab%%_*}
  verdict_case "$lab: cpu passes, sim:0 skipped by its own check" \
    "not yet — no GPU, real or simulated, was checked (skipped: sim:0)" "cpu sim:0" "pass skipped" \
    "$work/pass.log $work/$lab.log"
  summary=$(outcome_summary skipped "$work/$lab.log")
  [[ $summary == "skipped, not checked ("*sim:0* ]] || fail "$lab: the skipped sim:0 is shown as \"$summary\""
done

((failures == 0)) || { echo "verdicts: $failures failures"; exit 1; }
echo "verdicts: every verdict named what happened"
