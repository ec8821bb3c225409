#!/usr/bin/env bash
# driver_kernels_verdict.sh: `./lab check NN` says done only when a lab's
# kernels claim holds too, under the kernel sanitizer on a simulated GPU,
# where the build has the kernel tools and the lab's check has the claim (a
# kernel that walks memory uncoalesced, or reads past a shared tile, gives
# every right value there); `./lab progress` agrees. On a copy of the driver
# with a stand-in for CMake (fixture.sh), whose lab 04 holds every claim.
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_fixture "$work/kit"
fixture_env "$work/kit"
cd "$work/kit" || exit 1
failures=0
# expect WHAT OUTPUT PATTERN: OUTPUT has a line matching PATTERN (grep -E).
expect() {
  if grep -qE -- "$3" <<<"$2"; then
    echo "ok: $1"
  else
    echo "FAIL: $1: no line matches '$3' in:"
    sed 's/^/    /' <<<"$2"
    failures=$((failures + 1))
  fi
}
# A build without the kernel tools: the check alone, as before.
out=$(./lab check 04 2>&1)
expect "no kernel tools: the check's verdict alone" "$out" '^lab 04: done \(every claim holds on cpu, sim:0\)$'
rm -rf build
export FIXTURE_KERNEL_TOOLS=1
out=$(./lab check 04 2>&1)
expect "kernels claim holds: done, and said" "$out" \
  '^lab 04: done \(every claim holds on cpu, sim:0\); your kernels run clean under the kernel sanitizer$'
expect "kernels claim holds: its run is shown" "$out" '^sim:0 under the kernel sanitizer PASS'
out=$(FIXTURE_KERNELS_FAIL=1 ./lab check 04 2>&1)
expect "kernels claim fails: not yet" "$out" \
  '^lab 04: not yet — every claim holds, but under the kernel sanitizer \(\./lab check 04 --kernels\) on sim:0: .*coalesced'
expect "kernels claim fails: the failing claim is shown" "$out" '^ +FAIL +your kernel reads global memory coalesced'
rc=0
FIXTURE_KERNELS_FAIL=1 ./lab check 04 >/dev/null 2>&1 || rc=$?
((rc == 1)) || { echo "FAIL: kernels claim fails: ./lab check 04 exited with $rc, not 1"; failures=$((failures + 1)); }
out=$(FIXTURE_KERNELS_FAIL=1 ./lab check 04 --solution 2>&1)
expect "the solution's check too" "$out" '^lab 04 \(solution\): not yet — every claim holds, but under the kernel sanitizer'
out=$(FIXTURE_KERNELS_FAIL=1 ./lab progress 2>&1)
expect "progress: not done while the kernels claim fails" "$out" '^04_matmul +1 of 1 steps written +every claim holds, but under the kernel sanitizer'
out=$(./lab progress 2>&1)
expect "progress: done once it holds" "$out" '^1 of 1 labs done\.$'
# Without a simulated GPU among the devices checked, nothing is watched (a real GPU's own claims judge there).
out=$(LABKIT_SIM_GPUS=0 ./lab check 04 2>&1)
if grep -q "kernel sanitizer" <<<"$out"; then
  echo "FAIL: without a simulated GPU the kernel sanitizer still ran:"; sed 's/^/    /' <<<"$out"
  failures=$((failures + 1))
else
  echo "ok: without a simulated GPU, no kernel sanitizer"
fi
((failures == 0)) || exit 1
echo "driver_kernels_verdict: done means the kernels claim holds too"
