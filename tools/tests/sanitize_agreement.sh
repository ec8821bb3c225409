#!/usr/bin/env bash
# sanitize_agreement.sh (the test): tools/sanitize_agreement.sh passes only
# when compute-sanitizer ran every row and agreed with the kit's sanitizer.
# A fake build folder holds, for two known-wrong kernels that name a report
# (AGREEMENT_PATCHES), a patched file with the reported line at line 3 and a
# check that does nothing; fake compute-sanitizers on PATH answer: one that agrees (line 3 for
# a known-wrong version, nothing for a solution: the script must pass, so
# that the test can tell it from the others), one that prints nothing (the
# tool did not run), one that names another line, one that finds errors in a
# solution. Each of the last three must fail the script.
#
#   tools/tests/sanitize_agreement.sh
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

build=$work/build
# Two known-wrong kernels are enough, one for each tool: an access out of
# bounds (memcheck) and a race (racecheck).
chosen=("$(grep -lE '^# kernels: out-of-bounds' "$KIT"/solutions/*/wrong/*.patch | head -1)"
  "$(grep -lE '^# kernels: race on' "$KIT"/solutions/*/wrong/*.patch | head -1)")
export AGREEMENT_PATCHES="${chosen[*]}"
rows=0
for patch in "${chosen[@]}"; do
  lab=$(basename "$(dirname "$(dirname "$patch")")") mistake=$(basename "$patch" .patch)
  snippet=$(sed -nE 's/^# kernels: [^"]+ "(.*)"$/\1/p' "$patch")
  mkdir -p "$build/labs/$lab" "$build/labs/wrong/$lab/$mistake"
  printf '__global__ void fake_kernel(int x)\n{\n%s\n}\n' "$snippet" >"$build/labs/wrong/$lab/$mistake/kernels.cuh"
  for program in "check${lab%%_*}-wrong-$mistake" "check${lab%%_*}-solution"; do
    printf '#!/bin/sh\nexit 1\n' >"$build/labs/$lab/$program"
    chmod +x "$build/labs/$lab/$program"
  done
  rows=$((rows + 1))
done
((rows == 2)) || { echo "FAIL: no known-wrong kernel names an out-of-bounds access or a race: nothing to test"; exit 1; }

# fake NAME LINE SOLUTION_ERRORS: a compute-sanitizer that reports a known-wrong
# version's error at LINE of kernels.cuh (none: prints nothing at all), and
# SOLUTION_ERRORS errors for a solution.
fake() {
  mkdir -p "$work/$1"
  sed -e "s/@LINE@/$2/g" -e "s/@ERRORS@/$3/g" >"$work/$1/compute-sanitizer" <<'FAKE'
#!/usr/bin/env bash
[[ $1 == --help ]] && { echo "  --kernel-name <filter>"; exit 0; }
[[ -n "@LINE@" ]] || exit 0
tool=memcheck wrong=0
for ((i = 1; i <= $#; ++i)); do
  [[ ${!i} == --tool ]] && { j=$((i + 1)); tool=${!j}; }
  [[ ${!i} == *-wrong-* ]] && wrong=1
done
if ((wrong)) && [[ $tool == racecheck ]]; then
  echo "========= Error: Race reported between Write access at fake_kernel(int)+0x10 in kernels.cuh:@LINE@"
  echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
elif ((wrong)); then
  echo "========= Invalid __global__ read of size 4 bytes"
  echo "=========     at fake_kernel(int)+0x10 in /somewhere/kernels.cuh:@LINE@"
  echo "========= ERROR SUMMARY: 1 error"
elif [[ $tool == racecheck ]]; then
  echo "========= RACECHECK SUMMARY: @ERRORS@ hazards displayed (@ERRORS@ errors, 0 warnings)"
else
  echo "========= ERROR SUMMARY: @ERRORS@ errors"
fi
FAKE
  chmod +x "$work/$1/compute-sanitizer"
}
fake agrees 3 0
fake silent "" 0
fake elsewhere 4 0
fake dirty 3 2

# run NAME: the script with fake NAME first on PATH; its status.
run() {
  PATH="$work/$1:$PATH" AGREEMENT_SECONDS=20 "$KIT/tools/sanitize_agreement.sh" "$build" "$work/logs-$1" >"$work/$1.out" 2>&1
}

run agrees
status=$?
expected=$((rows + 2 * $(printf '%s\n' "${chosen[@]}" | sed -E 's#.*/solutions/([^/]+)/wrong/.*#\1#' | sort -u | wc -l)))
((status == 0)) || fail "an agreeing compute-sanitizer: exit $status, want 0 ($(tail -1 "$work/agrees.out"))"
grep -q "$expected of $expected rows agree" "$work/agrees.out" ||
  fail "an agreeing compute-sanitizer: no \"$expected of $expected rows agree\" ($(tail -1 "$work/agrees.out"))"
for name in silent elsewhere dirty; do
  run "$name"
  status=$?
  ((status == 1)) || fail "compute-sanitizer '$name': exit $status, want 1 ($(tail -1 "$work/$name.out"))"
done
grep -q "no summary" "$work/silent.out" || fail "a silent compute-sanitizer's rows do not say \"no summary\""
grep -q "no: other lines" "$work/elsewhere.out" || fail "another line's rows do not say \"no: other lines\""
grep -q "no: 2 errors" "$work/dirty.out" || fail "a solution with errors does not say \"no: 2 errors\""

((failures == 0)) || { echo "sanitize_agreement: $failures failures"; exit 1; }
echo "sanitize_agreement: $expected rows agree with an agreeing compute-sanitizer; a silent one, another line and a solution's errors each fail the script"
