#!/usr/bin/env bash
# driver_misreports.sh: what ./lab says where it used to say "it does not
# build" or "done" wrongly: a read-only checkout (built, and never built), a
# full disk during configure, LABKIT_PRESET taken as a pattern, kit settings
# that cannot be honoured, and a device skipped or never checked. On a small
# copy of the driver with a stand-in for CMake (fixture.sh).
#
# A read-only checkout and a full disk need a mount of their own: made in a
# user and mount namespace (unshare -rm), where the test skips those parts if
# the system allows none.
set -euo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 skipped=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

dir=$work/kit
make_fixture "$dir"
fixture_env "$dir"
export XDG_CACHE_HOME=$work/cache

# Runs ./lab "$@" in the fixture: its output in $out, its exit status in rc.
lab() {
  rc=0
  out=$(cd "$dir" && ./lab "$@" 2>&1) || rc=$?
}

# expect RC TEXT WHAT: the last command exited with RC and said TEXT.
expect() {
  if [[ $rc == "$1" ]] && grep -qF -- "$2" <<<"$out"; then
    echo "ok: $3"
  else
    fail "$3: expected exit status $1 and \"$2\", got $rc:"
    sed 's/^/    /' <<<"$out"
  fi
}

# Whether this system lets us mount in a namespace of our own.
can_mount=0
mkdir -p "$work/probe"
unshare -rm sh -c "mount -t tmpfs -o size=64k tmpfs '$work/probe'" 2>/dev/null && can_mount=1

# ---- LABKIT_PRESET is a name, not a pattern ----------------------------------------
for preset in cpu.only '.*' 'cpu-only ' default2; do
  LABKIT_PRESET=$preset lab check 04
  expect 2 "LABKIT_PRESET='$preset' is not a preset" "LABKIT_PRESET='$preset' is refused, exit status 2"
done
LABKIT_PRESET=cpu-only lab check 04
expect 0 "lab 04: done" "LABKIT_PRESET=cpu-only builds build/cpu-only"
[[ -d $dir/build/cpu-only ]] || fail "LABKIT_PRESET=cpu-only did not use build/cpu-only"
LABKIT_PRESET= lab run 04
expect 0 "lab04 ran" "LABKIT_PRESET empty is the default preset"
rm -rf "$dir/build"

# ---- settings that cannot be honoured stop ./lab before any build -------------------
# The driver's own test of them (tools/lab/build.sh: check_settings), each
# value in a subshell of this one; then two whole commands, which must stop
# before building.
say() { printf 'lab: %s\n' "$*"; }
warn() { printf 'lab: %s\n' "$*" >&2; }
die() { warn "$@"; exit 1; }
source "$dir/tools/lab/build.sh"
settings() { # VARIABLE VALUE: out and rc of check_settings with VARIABLE=VALUE alone
  rc=0
  out=$(unset LABKIT_SIM_GPUS LABKIT_SIM_MEMORY LABKIT_GNUPLOT LABKIT_PYTHON
    export "$1=$2"
    check_settings 2>&1) || rc=$?
}
bad() {
  local variable=$1 value
  shift
  for value in "$@"; do
    settings "$variable" "$value"
    expect 2 "$variable=\"$value\"" "$variable=\"$value\" is refused with exit status 2 and why"
  done
}
bad LABKIT_SIM_GPUS -1 9 two 2x 1.5 " 2" 99999999999999999999 "2 " 0x2 +2
bad LABKIT_SIM_MEMORY 0 -1 12X 1.5G 2g " 1G" 99999999999999999999 17179869184G 18014398509481984K 1GB
bad LABKIT_GNUPLOT /nonexistent/gnuplot no-such-gnuplot-here /etc/passwd /tmp
bad LABKIT_PYTHON /nonexistent/python3 no-such-python-here
# Unset or empty keeps the default; the edges of the valid values are accepted.
good() {
  local variable=$1 value
  shift
  for value in "$@"; do
    settings "$variable" "$value"
    expect 0 "" "$variable=\"$value\" is accepted"
  done
}
good LABKIT_SIM_GPUS "" 0 8 0008
good LABKIT_SIM_MEMORY "" 1 512M 18446744073709551615 17179869183G 18014398509481983K
good LABKIT_GNUPLOT "" sh /bin/sh
good LABKIT_PYTHON "" sh
for setting in LABKIT_SIM_GPUS=two LABKIT_PYTHON=no-such-python-here; do
  rc=0
  out=$(env "$setting" bash -c "cd '$dir' && ./lab run 04" 2>&1) || rc=$?
  expect 2 "${setting%%=*}=\"${setting#*=}\"" "./lab run 04 with $setting stops with exit status 2"
  [[ ! -e $dir/build ]] || { fail "$setting: ./lab built before refusing it"; rm -rf "$dir/build"; }
done
LABKIT_SIM_GPUS= lab check 04
expect 0 "lab 04: done (every claim holds on cpu, sim:0)" "LABKIT_SIM_GPUS empty: the default two simulated GPUs"

# ---- a device skipped, or never checked, is no pass -----------------------------------
FIXTURE_SKIP_SIM=1 lab check 04
expect 1 "lab 04: not yet — no GPU, real or simulated, was checked (skipped: sim:0)" \
  "a skipped sim:0 makes no \"done\""
grep -q '^sim:0 *skipped, not checked (sim:0 does not exist here)' <<<"$out" ||
  fail "the skipped sim:0 is not shown as skipped: $out"
LABKIT_SIM_GPUS=0 lab check 04
expect 1 "lab 04: not yet — no GPU, real or simulated, was checked (LABKIT_SIM_GPUS=0" \
  "LABKIT_SIM_GPUS=0 without a real GPU makes no \"done\""
lab check 04
expect 0 "lab 04: done (every claim holds on cpu, sim:0)" "cpu and sim:0 checked: done"

# ---- a read-only checkout ---------------------------------------------------------------
# In a namespace where the fixture is mounted read-only (as a checkout on a
# read-only file system, or another user's, is).
read_only() { # COMMAND...: out and rc
  rc=0
  out=$(unshare -rm bash -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$1" && shift && "$@"' \
    _ "$dir" "$@" 2>&1) || rc=$?
}
if ((can_mount)); then
  rm -rf "$dir/build" "$XDG_CACHE_HOME"
  read_only ./lab check 04
  expect 1 "build/default cannot be created here (a read-only checkout?)" "a read-only checkout never built: said so"
  grep -q 'does not build' <<<"$out" && fail "a read-only checkout never built: \"does not build\""
  lab check 04 >/dev/null # built, writable
  read_only ./lab check 04
  expect 0 "lab 04: done (every claim holds on cpu, sim:0)" "a read-only checkout already built: checked"
  grep -qF "build/default cannot be written here (a read-only checkout?)" <<<"$out" ||
    fail "a read-only checkout: the command did not say that its build cannot be written: $out"
  grep -qF "the logs go to $XDG_CACHE_HOME/labkit$dir/default" <<<"$out" ||
    fail "a read-only checkout: the command did not say where its logs go: $out"
  [[ -n $(find "$XDG_CACHE_HOME" -name 'check-04_matmul-cpu.log') ]] || fail "no check log in $XDG_CACHE_HOME"
  read_only ./lab run 04 -- --quick
  expect 1 "lab04 was never built in build/default, and build/default cannot be written here" \
    "a read-only checkout where one program was never built: said so"
  lab run 04 >/dev/null
  read_only ./lab run 04 -- --quick
  expect 0 "lab04 ran: --quick" "a read-only checkout already built: ./lab run runs"
else
  echo "skipped: a read-only checkout (no mount namespace here: unshare -rm)"
  skipped=$((skipped + 1))
fi

# ---- a full disk during configure --------------------------------------------------------
if ((can_mount)); then
  rm -rf "$dir/build"
  mkdir -p "$dir/build"
  rc=0
  out=$(unshare -rm bash -c 'mount -t tmpfs -o size=32k tmpfs "$1/build" && head -c 1M /dev/zero >"$1/build/filler" 2>/dev/null; cd "$1" && ./lab check 04' \
    _ "$dir" 2>&1) || rc=$?
  expect 1 "failed: the disk that holds build/default is full" "a full disk during configure is named"
  grep -q 'does not build' <<<"$out" && fail "a full disk: \"does not build\""
else
  echo "skipped: a full disk (no mount namespace here: unshare -rm)"
  skipped=$((skipped + 1))
fi

((failures == 0)) || { echo "driver_misreports: $failures failures"; exit 1; }
echo "driver_misreports: every case said what happened$( ((skipped == 0)) || echo " ($skipped parts skipped)")"
