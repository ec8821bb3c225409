#!/usr/bin/env bash
# driver_concurrent.sh: two and three ./lab commands at once in one folder,
# on a fresh tree and on a built one, ROUNDS rounds each (default 10): every
# command must give its own right answer, and no two configures or builds of
# the build directory may overlap. First, the same driver without its lock
# must show an overlap: the test can see what it guards against.
#
#   tools/tests/driver_concurrent.sh [ROUNDS]
set -euo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
rounds=${1:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# Starts the commands of one round at once in fixture $1; each must exit 0
# with the line it promises.
round() {
  local dir=$1 n=$2 i pids=() expect=("lab 04: done (every claim holds on cpu, sim:0)" "lab04 ran: --quick"
    "lab04 ran: --device cpu")
  local commands=("./lab check 04" "./lab run 04 -- --quick" "./lab run 04 --solution -- --device cpu")
  for ((i = 0; i < n; i++)); do
    (cd "$dir" && ${commands[i]} >"$work/out.$i" 2>&1) &
    pids+=($!)
  done
  for ((i = 0; i < n; i++)); do
    if ! wait "${pids[i]}"; then
      echo "FAIL: '${commands[i]}' failed:"; sed 's/^/    /' "$work/out.$i"; failures=$((failures + 1))
    elif ! grep -qF -- "${expect[i]}" "$work/out.$i"; then
      echo "FAIL: '${commands[i]}' did not say \"${expect[i]}\":"; sed 's/^/    /' "$work/out.$i"
      failures=$((failures + 1))
    fi
  done
}

# ---- the driver without its lock: overlaps happen (a test that can fail) --------
nolock=$work/nolock
make_fixture "$nolock"
printf '\nlock_build() { :; }\nunlock_build() { :; }\n' >>"$nolock/tools/lab/build.sh"
fixture_env "$nolock"
export STUB_RECORD=$work/nolock.record
for ((r = 1; r <= rounds; r++)); do
  rm -rf "$nolock/build"
  round "$nolock" 3 >/dev/null
  [[ -s $STUB_RECORD ]] && break
done
if [[ -s $STUB_RECORD ]]; then
  echo "ok: without the lock, builds overlapped in round $r of $rounds ($(head -n1 "$STUB_RECORD"))"
else
  echo "FAIL: without the lock no two builds overlapped in $rounds rounds: this test cannot see the race"
  failures=$((failures + 1))
fi
failures=0 # the rounds above were meant to fail

# ---- the driver as it is -------------------------------------------------------------
kit=$work/kit
make_fixture "$kit"
fixture_env "$kit"
export STUB_RECORD=$work/kit.record
waited=0
for n in 2 3; do
  for state in fresh built; do
    for ((r = 1; r <= rounds; r++)); do
      [[ $state == built ]] || rm -rf "$kit/build"
      round "$kit" "$n"
      grep -qh 'waiting for another ./lab in this folder' "$work"/out.* && waited=$((waited + 1))
    done
    echo "$n commands at once on a $state tree: $rounds rounds"
  done
done
if [[ -s $STUB_RECORD ]]; then
  echo "FAIL: configures or builds overlapped:"; sed 's/^/    /' "$STUB_RECORD"; failures=$((failures + 1))
fi
# A command that found the lock taken said so.
if ((waited == 0)); then
  echo "FAIL: in $((4 * rounds)) rounds no command said it was waiting for another ./lab"
  failures=$((failures + 1))
else
  echo "ok: a command said \"waiting for another ./lab in this folder\" in $waited of $((4 * rounds)) rounds"
fi
((failures == 0)) || { echo "driver_concurrent: $failures failures"; exit 1; }
echo "driver_concurrent: every command right in $((4 * rounds)) rounds, no build overlapped"
