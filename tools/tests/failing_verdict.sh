#!/usr/bin/env bash
# failing_verdict.sh: ./lab check's verdict on a check whose student calls all
# fail (the skeleton's steps turned into failures: cmake/failing_check.cmake)
# names a claim or the failing call, never an empty claim.
#
#   tools/tests/failing_verdict.sh CHECK_PROGRAM NN_name
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
ROOT=$KIT LAB=$2 LAB_NN=${2%%_*}
source "$KIT/tools/lab/verdict.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
outcome=$(run_check_on "$1" cpu "$log")
verdict=$(check_verdict cpu "$outcome" "$log")
echo "verdict on cpu: lab $LAB_NN: $verdict"
if [[ $verdict =~ ^not\ yet\ —\ on\ cpu:\ \"[^\"]+\"\ does\ not\ hold ]] ||
  [[ $verdict =~ ^not\ yet\ —\ on\ cpu:\ a\ call\ failed:\ .*injected\ failure ]]; then
  exit 0
fi
echo "FAIL: the verdict names neither a claim nor the failing call. The check's output:"
sed 's/^/    /' "$log"
exit 1
