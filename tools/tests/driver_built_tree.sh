#!/usr/bin/env bash
# driver_built_tree.sh: one round of three real ./lab commands at once on this
# built tree (the other driver tests use a copy with a stand-in for CMake):
# each gives its own right answer, and none says the lab does not build.
#
#   tools/tests/driver_built_tree.sh BUILD_DIR
# BUILD_DIR must be build/<preset> of this kit (where ./lab builds); else skipped.
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
built_tree_env "$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
commands=("check 01" "devices" "run 01 -- --help")
expect=("^lab 01: (done|not yet — .+)$" "^try_gpu\(0\) = " "^usage: ")
pids=()
for i in "${!commands[@]}"; do
  read -ra args <<<"${commands[i]}"
  "$KIT/lab" "${args[@]}" >"$work/$i" 2>&1 &
  pids+=($!)
done
failures=0
for i in "${!commands[@]}"; do
  rc=0
  wait "${pids[i]}" || rc=$?
  if ! grep -qE -- "${expect[i]}" "$work/$i" || grep -q 'does not build' "$work/$i" || ((rc > 1)); then
    echo "FAIL: ./lab ${commands[i]} (exit status $rc):"
    sed 's/^/    /' "$work/$i"
    failures=$((failures + 1))
  else
    echo "ok: ./lab ${commands[i]}: $(grep -m1 -E -- "${expect[i]}" "$work/$i")"
  fi
done
((failures == 0)) || exit 1
echo "driver_built_tree: three ./lab commands at once on build/$LABKIT_PRESET, each right"
