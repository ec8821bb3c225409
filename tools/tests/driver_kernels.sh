#!/usr/bin/env bash
# driver_kernels.sh: `./lab check NN --kernels` on this built tree goes to the
# lab's kernel sanitizer for every lab whose check has a kernels claim (the
# configure made its checkNN-kernels program), and for a lab without one says
# which labs have it. The driver once looked for a function the checks no
# longer called, and refused every lab, naming none.
#
#   tools/tests/driver_kernels.sh BUILD_DIR
# BUILD_DIR must be build/<preset> of this kit, with the kernel tools; else skipped.
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
built_tree_env "$1"
if ! grep -q '^LABKIT_HAVE_KERNEL_TOOLS:INTERNAL=ON' "$KIT/build/$LABKIT_PRESET/CMakeCache.txt"; then
  echo "skipped: build/$LABKIT_PRESET has no kernel tools"
  exit 77
fi
cd "$KIT" || exit 1
with=() without=()
for dir in labs/[0-9][0-9]_*/; do
  nn=${dir:5:2}
  if grep -q 'check_kernels_only()' "$dir/check.c" 2>/dev/null; then with+=("$nn"); else without+=("$nn"); fi
done
((${#with[@]} > 0 && ${#without[@]} > 0)) || { echo "FAIL: no lab with a kernels claim, or none without"; exit 1; }
failures=0
for nn in "${with[@]}"; do
  out=$("$KIT/lab" check "$nn" --kernels 2>&1)
  if grep -qE "^lab $nn \(kernel sanitizer\): (done|not yet — .+)$" <<<"$out"; then
    echo "ok: ./lab check $nn --kernels: $(grep -m1 -E "^lab $nn \(kernel sanitizer\)" <<<"$out")"
  else
    echo "FAIL: ./lab check $nn --kernels gave no kernel sanitizer's verdict:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  fi
done
nn=${without[0]}
out=$("$KIT/lab" check "$nn" --kernels 2>&1)
if grep -qF "lab $nn's check has no kernels claim: ./lab check NN --kernels is for labs ${with[*]} (" <<<"$out"; then
  echo "ok: ./lab check $nn --kernels names the labs that have the claim: ${with[*]}"
else
  echo "FAIL: ./lab check $nn --kernels (no kernels claim) did not name labs ${with[*]}:"
  sed 's/^/    /' <<<"$out"
  failures=$((failures + 1))
fi
((failures == 0)) || exit 1
echo "driver_kernels: ./lab check NN --kernels reaches the sanitizer for labs ${with[*]}"
