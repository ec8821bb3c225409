#!/usr/bin/env bash
# check_dist.sh: the student copy gives no answer away (tests kit.dist and
# kit.dist_catches, labs/CMakeLists.txt).
#
#   tools/dist/check_dist.sh CHECK_COPY WORK_DIR            the copy passes
#   tools/dist/check_dist.sh CHECK_COPY WORK_DIR --plant    the check catches what is planted
#
# Makes the student copy of the last commit with ./lab dist into WORK_DIR and
# runs CHECK_COPY (tools/dist/check_copy.c) on it, against the solutions and
# skeletons of the same commit. With --plant, first plants in the copy what
# it must never hold: a solution's function under another name in a given
# file, a known-wrong version's patch and the authors' table; passes only when
# the check fails naming all three. Exit 77 (skipped) outside a git checkout,
# where ./lab dist cannot work.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
check=${1:?usage: check_dist.sh CHECK_COPY WORK_DIR [--plant]}
work=${2:?usage: check_dist.sh CHECK_COPY WORK_DIR [--plant]}
plant=${3:-}

if ! git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "check_dist: $root is not a git checkout with a commit: ./lab dist cannot make a copy (skipped)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/commit"
copy=$work/labkit-student
if ! "$root/lab" dist "$copy" >"$work/dist.log" 2>&1; then
  cat "$work/dist.log"
  echo "check_dist: ./lab dist failed"
  exit 1
fi
# The solutions and skeletons of the same commit as the copy.
git -C "$root" archive --format=tar HEAD solutions labs docs | tar -C "$work/commit" -xf -

if [[ -z $plant ]]; then
  exec "$check" "$work/commit/solutions" "$work/commit/labs" "$copy"
fi

# A solution function under another name, at the end of a given file.
sed -n '/^status lab_train_step(/,/^}/p' "$work/commit/solutions/05_training_loop/lab.c" |
  sed 's/lab_train_step(/planted_step(/' >>"$copy/labs/05_training_loop/train.c"
grep -q planted_step "$copy/labs/05_training_loop/train.c" || { echo "check_dist: nothing planted"; exit 1; }
# A known-wrong version, and the authors' table in the student's README.
patches=("$work/commit/solutions/01_devices/wrong/"*.patch)
cp "${patches[0]}" "$copy/labs/01_devices/notes.txt"
cat "$work/commit/docs/known-wrong.md" >>"$copy/labs/README.md"

status=0
"$check" "$work/commit/solutions" "$work/commit/labs" "$copy" >"$work/planted.log" 2>&1 || status=$?
cat "$work/planted.log"
missing=0
for finding in "labs/05_training_loop/train.c: the body of lab_train_step()" \
  "labs/01_devices/notes.txt: a known-wrong version" "labs/README.md: the authors' table"; do
  if ! grep -qF "check_copy: $finding" "$work/planted.log"; then
    echo "check_dist: the check did not report \"$finding\""
    missing=1
  fi
done
if ((status != 1 || missing)); then
  echo "check_dist: FAIL: what was planted must make the check fail (exit 1) naming each plant; it exited $status"
  exit 1
fi
echo "check_dist: every plant was caught"
