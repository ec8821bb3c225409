#!/usr/bin/env bash
# build_progress.sh: while ./lab test builds, a line at least every 20 s says
# how far the build is (a long silence in a CI log reads as a hang). The
# progress reads the build's log while it is written, under its temporary
# name lab-build-<targets>.log.<pid>: a watcher that looked for *.log only
# printed nothing for the whole build.
set -euo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
work=$(mktemp -d)
trap 'kill "${watcher:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
say() { printf 'lab: %s\n' "$*"; }
source "$KIT/tools/lab/suite.sh"

mkdir -p build/p
: >build/p/.lab-test-start
sleep 0.1
printf '[1/10] Building C object a.o\n[5/10] Linking C executable check04\n' >build/p/lab-build-suite-unit.log.4242
LAB_PROGRESS_SECONDS=0.5 build_progress p build/p/.lab-test-start "$SECONDS" >progress.txt &
watcher=$!
sleep 1.8
kill "$watcher"
wait "$watcher" 2>/dev/null || true
if ! grep -q 'lab: building: 5 of 10 steps done' progress.txt; then
  echo "FAIL: no progress line from a build log being written (lab-build-suite-unit.log.4242); got:"
  sed 's/^/    /' progress.txt
  exit 1
fi
echo "ok: $(grep -c 'steps done' progress.txt) progress lines in 1.8 s, e.g. \"$(head -n1 progress.txt)\""
