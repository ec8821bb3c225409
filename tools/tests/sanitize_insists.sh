#!/usr/bin/env bash
# sanitize_insists.sh: ./lab sanitize (tools/lab/suite.sh) counts a run as
# clean only when compute-sanitizer ran it and printed its summary with 0
# errors. Fake compute-sanitizers on PATH: one that prints nothing (the tool
# did not run: "no summary", a failure, never "0"), an honest one (0 errors:
# the table passes, so the test can tell them apart), one that finds errors;
# tests that skip (nothing checked) and a table with no test at all, which
# are no evidence of "no error" either.
#
#   tools/tests/sanitize_insists.sh
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
say() { printf 'lab: %s\n' "$*"; }
die() { printf 'lab: %s\n' "$*" >&2; exit 1; }
source "$KIT/tools/lab/suite.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# fake NAME BODY: a compute-sanitizer in $work/NAME/, first on PATH when used.
fake() {
  mkdir -p "$work/$1"
  printf '#!/usr/bin/env bash\n%s\n' "$2" >"$work/$1/compute-sanitizer"
  chmod +x "$work/$1/compute-sanitizer"
}
fake silent 'exit 0'
# runs the test (the arguments after --error-exitcode N), then reports as the real one does
runs='while (($# > 0)) && [[ $1 != --error-exitcode ]]; do shift; done; shift 2; "$@"; rc=$?'
fake honest "$runs"'; echo "========= ERROR SUMMARY: 0 errors"; exit $rc'
fake finds "$runs"'; echo "========= Invalid __global__ read of size 4 bytes"; echo "========= ERROR SUMMARY: 3 errors"; exit 86'

tests=$'unit.one\ttrue\ngpu.two\tsh -c "exit 0"'
skips=$'gpu.skips\tsh -c "exit 77"'
fails=$'gpu.fails\tsh -c "exit 1"'

# expect FAKE WANT_STATUS WANT_TEXT LINES: sanitize_tests with FAKE's
# compute-sanitizer (found on PATH, as ./lab finds it) on LINES.
expect() {
  local which=$1 want=$2 text=$3 lines=$4 out status found
  found=$(PATH="$work/$which:$PATH" find_sanitizer)
  if [[ $found != "$work/$which/compute-sanitizer" ]]; then
    fail "$which: find_sanitizer found '$found', not the fake on PATH"
    return
  fi
  mkdir -p "$work/logs"
  out=$(sanitize_tests "$found" "$work/logs" memcheck racecheck <<<"$lines" 2>&1)
  status=$?
  if [[ $status != "$want" || $out != *"$text"* ]]; then
    fail "$which on $(wc -l <<<"$lines") tests: status $status (want $want), output does not say '$text':"
    sed 's/^/    /' <<<"$out"
    return
  fi
  echo "ok: $which: status $status, '$text'"
}

expect silent 1 "no summary" "$tests"
expect silent 1 "no summary from the tool" "$tests"
expect honest 0 "no error in any of the 4 runs checked" "$tests"
expect finds 1 "errors found" "$tests"
expect honest 1 "exit 1" "$fails"
expect honest 1 "checked no run" "$skips"
expect honest 0 "2 runs skipped their test" "$tests"$'\n'"$skips"
expect honest 1 "checked no run" ""
# the silent tool's table has no 0 in it: a cell of its own says what happened
out=$(sanitize_tests "$work/silent/compute-sanitizer" "$work/logs" memcheck <<<"$tests" 2>&1)
if grep -qE '^(unit.one|gpu.two) +0 *$' <<<"$out"; then fail "the silent tool's run shows 0 errors: $out"; fi

((failures == 0)) || { echo "sanitize_insists: $failures failures"; exit 1; }
echo "sanitize_insists: every run without the tool's summary, skipped or absent fails ./lab sanitize"
