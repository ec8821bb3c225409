#!/usr/bin/env bash
# settings.sh: every LABKIT_* setting that cannot be honoured stops every kind
# of program with exit status 2 and a message naming it (labkit/environment.h):
# labkit-devices, a lab program (cli_parse), a check (check_device), a test
# (harness.h), a bench, lab 05's input test; and every lab's check and program.
# Each bad value of each variable on one program, then one bad value of each
# variable on every program.
#
#   tools/tests/settings.sh BUILD_DIR
set -uo pipefail
build=$1
failures=0 runs=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
unset LABKIT_SIM_GPUS LABKIT_SIM_MEMORY LABKIT_GNUPLOT LABKIT_PYTHON

# refused VARIABLE VALUE PROGRAM [ARGS...]
refused() {
  local variable=$1 value=$2 rc=0
  shift 2
  runs=$((runs + 1))
  env "$variable=$value" "$@" >"$out" 2>&1 </dev/null || rc=$?
  if ((rc != 2)) || ! grep -qF -- "$variable=\"$value\"" "$out"; then
    echo "FAIL: $variable=\"$value\" $*: exit status $rc (not 2), or no message naming it:"
    head -n 5 "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
}

devices=$build/common/labkit-devices
for value in -1 9 two 2x 1.5 " 2" "2 " 99999999999999999999 0x2 +2; do
  refused LABKIT_SIM_GPUS "$value" "$devices"
done
for value in 0 -1 12X 1.5G 2g " 1G" 1GB M 99999999999999999999 17179869184G; do
  refused LABKIT_SIM_MEMORY "$value" "$devices"
done
for value in /nonexistent/gnuplot no-such-gnuplot-here /etc/passwd /tmp; do
  refused LABKIT_GNUPLOT "$value" "$devices"
done

# Every kind of program, with one bad value of each variable it reads.
programs=(
  "$devices --cuda-count"
  "$build/common/tests/test_ops cpu"
  "$build/common/tests/test_devices expect 0"
  "$build/common/tests/test_safetensors cpu"
  "$build/labs/05_training_loop/test05_inputs"
)
[[ -x $build/bench/bench_copy ]] && programs+=("$build/bench/bench_copy")
for dir in "$build"/labs/[0-9][0-9]_*/; do
  lab=$(basename "$dir") nn=${lab%%_*}
  [[ -x $dir/check$nn ]] && programs+=("$dir/check$nn --device cpu")
  [[ -x $dir/lab$nn ]] && programs+=("$dir/lab$nn --quick --device cpu")
done
for program in "${programs[@]}"; do
  read -ra command <<<"$program"
  [[ -x ${command[0]} ]] || { echo "FAIL: ${command[0]} is not built"; failures=$((failures + 1)); continue; }
  refused LABKIT_SIM_GPUS two "${command[@]}"
  refused LABKIT_SIM_MEMORY 64X "${command[@]}"
  case $program in
    */tests/test_*|*/test05_inputs) ;; # the core's tests and lab 05's input test draw nothing
    *) refused LABKIT_GNUPLOT /nonexistent/gnuplot "${command[@]}" ;;
  esac
done
for program in "$build/common/tests/test_safetensors cpu" "$build/bench/bench_copy"; do
  read -ra command <<<"$program"
  [[ -x ${command[0]} ]] && refused LABKIT_PYTHON /nonexistent/python3 "${command[@]}"
done

((failures == 0)) || { echo "settings: $failures of $runs runs wrong"; exit 1; }
echo "settings: $runs runs of ${#programs[@]} programs, every bad setting refused with exit status 2 and its name"
