#!/usr/bin/env bash
# suite_complete.sh: every test of the suite says which targets it needs built
# (labkit_test_needs, cmake/suite.cmake), so that ./lab test -L LABEL and -R
# REGEX build exactly what they run. A test missing from suite-targets.txt
# would make them build everything, or, worse, run a program never built.
#
#   tools/tests/suite_complete.sh BUILD_DIR
set -uo pipefail
build=$1
list=$build/suite-targets.txt
[[ -f $list ]] || { echo "FAIL: $list is missing (labkit_write_suite did not run)"; exit 1; }
missing=$(comm -23 <(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort) \
  <(awk '{print $1}' "$list" | sort))
if [[ -n $missing ]]; then
  echo "FAIL: these tests do not say what they need built (labkit_test_needs in their CMakeLists):"
  sed 's/^/    /' <<<"$missing"
  exit 1
fi
echo "suite_complete: all $(wc -l <"$list") tests say what they need built"
