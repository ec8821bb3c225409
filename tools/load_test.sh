#!/usr/bin/env bash
# load_test.sh: do the checks hold when other programs compete for the cores?
#
#   tools/load_test.sh [-n RUNS] [-l LOOPS] [-p PRESET] [-d DEVICES] [LAB...]   every solution check
#   tools/load_test.sh --suite [-n RUNS] [-j JOBS] [-p PRESET]        the whole suite
#
# Starts LOOPS busy loops (default 2, `sh -c 'while :; do :; done'`), then runs
# every solution check of the labs named (default: all) RUNS times (default 20)
# on cpu and on sim:0 (or on DEVICES: -d sim:0), or the whole suite RUNS times
# (default 10) with ctest -j JOBS, and prints how many runs passed. Failed runs keep their output under
# build/PRESET/load-test/. The loops stop when it ends, however it ends.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

runs="" loops=2 preset=${LABKIT_PRESET:-default} suite=0 jobs=2 labs=() devices="cpu sim:0"
while (($# > 0)); do
  case $1 in
    -n) runs=$2; shift ;;
    -l) loops=$2; shift ;;
    -p) preset=$2; shift ;;
    -j) jobs=$2; shift ;;
    -d) devices=$2; shift ;;
    --suite) suite=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) labs+=("$1") ;;
  esac
  shift
done
[[ -n $runs ]] || runs=$((suite ? 10 : 20))
build=build/$preset
[[ -d $build ]] || { echo "load_test: $build is not built (./lab test first)" >&2; exit 2; }
out=$build/load-test
mkdir -p "$out"
export LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G
if [[ -z ${OPENBLAS_CORETYPE:-} && -x $build/common/labkit-devices ]]; then
  better=$("$build/common/labkit-devices" --openblas-coretype || true)
  [[ -z $better ]] || export OPENBLAS_CORETYPE=$better
fi

pids=()
stop_loops() { ((${#pids[@]} == 0)) || kill "${pids[@]}" 2>/dev/null || true; }
trap stop_loops EXIT
for ((i = 0; i < loops; ++i)); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "load_test: $loops busy loops on $(nproc) cores; $runs runs each"

if ((suite)); then
  passed=0
  for ((r = 1; r <= runs; ++r)); do
    if ctest --test-dir "$build" -LE '^lab$' -j "$jobs" --timeout 300 >"$out/suite-$r.log" 2>&1; then
      passed=$((passed + 1))
      rm -f "$out/suite-$r.log"
    else
      echo "  run $r failed: $(grep -A20 'The following tests FAILED' "$out/suite-$r.log" | sed -n '2,20p' | tr -s ' ' | paste -sd';' -)"
    fi
  done
  echo "suite with ctest -j $jobs: $passed of $runs runs passed"
  ((passed == runs))
  exit
fi

((${#labs[@]} > 0)) || mapfile -t labs < <(cd labs && ls -d [0-9][0-9]_* )
status=0
for lab in "${labs[@]}"; do
  # 5, 05 or 05_training_loop, as ./lab takes it
  [[ $lab == *_* ]] || lab=$(cd labs && ls -d "$(printf '%02d' "$((10#$lab))")"_* 2>/dev/null || echo "$lab")
  nn=${lab%%_*}
  program=$build/labs/$lab/check$nn-solution
  [[ -x $program ]] || { echo "  $lab: no $program (skipped)"; continue; }
  for device in $devices; do
    passed=0
    start=$SECONDS
    for ((r = 1; r <= runs; ++r)); do
      log=$out/$lab-${device/:/}-$r.log
      if timeout 600 "$program" --device "$device" >"$log" 2>&1; then
        passed=$((passed + 1))
        rm -f "$log"
      fi
    done
    printf '  %-18s %-6s %2d of %d passed (%d s for all)%s\n' "$lab" "$device" "$passed" "$runs" \
      $((SECONDS - start)) "$( ((passed == runs)) || echo "   failures: $out/$lab-${device/:/}-*.log")"
    ((passed == runs)) || status=1
  done
done
exit "$status"
