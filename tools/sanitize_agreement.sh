#!/usr/bin/env bash
# sanitize_agreement.sh BUILD_DIR LOG_DIR: does NVIDIA's compute-sanitizer on
# a real GPU find what the simulated GPU's kernel sanitizer finds?
#
# Every known-wrong version whose patch says that the kernel sanitizer reports
# an out-of-bounds access, a race or a read of uninitialized shared memory
# ("# kernels: out-of-bounds read "<line>"") runs its check on cuda:0 under
# compute-sanitizer: memcheck for an access out of bounds; racecheck for a
# race and for an uninitialized shared read (initcheck watches global memory
# only: on a GPU the same missing barrier is a read-after-write hazard). Only
# the check's kernels claim runs (LABKIT_CHECK_KERNELS=cuda: the launches
# that ./lab check NN --kernels watches on sim:0, the same shapes and the
# same exact-size buffers, made on cuda:0 unwatched), and compute-sanitizer
# watches the kernel that holds the reported line alone (--kernel-name).
#
# One row a version, and two a lab for its solution (memcheck, racecheck): the simulated sanitizer's report (its kind and the line
# the patch names, found in the patched file), compute-sanitizer's (its error
# count, its first report's kind and the lines of that file it names), and
# whether the line agrees. Each run's whole output is in LOG_DIR. Exits 0 when
# every row agrees, 1 when one does not (or compute-sanitizer printed no
# summary for it: a run it did not check), 2 when it could not run at all.
#
#   cmake -S . -B build-gpu -DLABKIT_WRONG_ON_CUDA=ON -DCMAKE_CUDA_FLAGS=-lineinfo
#   cmake --build build-gpu --target <the check<NN>-wrong-<mistake> programs>
#   tools/sanitize_agreement.sh build-gpu /tmp/agreement
#
# -lineinfo lets compute-sanitizer name file and line, not only an offset in
# the kernel; LABKIT_WRONG_ON_CUDA builds a wrong version's kernels with nvcc
# too (the suite runs them on sim:0 alone). Needs a GPU: exits 2 without one.
#
# `tools/sanitize_agreement.sh --targets` prints the programs it runs, a line
# each, for the build to make (./lab sanitize --agreement).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The known-wrong versions whose patch names a report of the kit's sanitizer;
# AGREEMENT_PATCHES (paths, space-separated) picks some of them: the kit's test
# of this script runs two.
patches=()
if [[ -n ${AGREEMENT_PATCHES:-} ]]; then
  read -r -a patches <<<"$AGREEMENT_PATCHES"
else
  while IFS= read -r patch; do patches+=("$patch"); done < <(
    grep -lE '^# kernels: (out-of-bounds|race on|read of uninitialized)' "$root"/solutions/*/wrong/*.patch)
fi
((${#patches[@]} > 0)) || { echo "sanitize_agreement: no known-wrong kernel names such a report" >&2; exit 2; }
# Their labs, once each: their solutions run too.
mapfile -t labs < <(printf '%s\n' "${patches[@]}" | sed -E 's#.*/solutions/([^/]+)/wrong/.*#\1#' | sort -u)

if (($# == 1)) && [[ $1 == --targets ]]; then
  for patch in "${patches[@]}"; do
    lab=$(basename "$(dirname "$(dirname "$patch")")")
    echo "check${lab%%_*}-wrong-$(basename "$patch" .patch)"
  done
  for lab in "${labs[@]}"; do echo "check${lab%%_*}-solution"; done
  exit 0
fi
(($# == 2)) || { echo "usage: tools/sanitize_agreement.sh BUILD_DIR LOG_DIR, or --targets" >&2; exit 2; }
build=$(cd "$1" 2>/dev/null && pwd) || { echo "sanitize_agreement: no build folder $1" >&2; exit 2; }
logs=$2
mkdir -p "$logs" || { echo "sanitize_agreement: cannot make $logs" >&2; exit 2; }
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[[ -x $sanitizer ]] || { echo "sanitize_agreement: compute-sanitizer is not installed (NVIDIA's CUDA toolkit)" >&2; exit 2; }
seconds=${AGREEMENT_SECONDS:-60}

# compute-sanitizer's option for "this kernel alone", where this version of it
# has one.
help=$("$sanitizer" --help 2>&1)
filter_option() { # kernel
  if grep -q -- '--kernel-name' <<<"$help"; then
    printf '%s\n' --kernel-name "kns=$1"
  elif grep -q -- '--filter' <<<"$help"; then
    printf '%s\n' --filter "kns=$1"
  fi
}

# The kernel whose body holds line LINE of FILE: the last __global__ before it.
enclosing_kernel() { # file line
  awk -v stop="$2" 'NR > stop { exit } match($0, /__global__ void [A-Za-z_0-9]+/) {
    name = substr($0, RSTART + 16, RLENGTH - 16) } END { print name }' "$1"
}

# compute-sanitizer's first report, in a few words.
first_report() { # log
  grep -m1 -oE 'Invalid __(global|shared|local)__ (read|write)|Race reported between [A-Za-z]+ access[^[]* and [A-Za-z]+ access|(Error|Warning): Race reported|Uninitialized __global__ memory read|Barrier error|Illegal address' "$1" |
    sed -E 's/ at [^ ]+\(.*\)\+0x[0-9a-f]+ in [^ ]+//g' | head -1
}

# The tool's summary line in a log, without its "=========" (none: empty).
tool_summary() { # log
  grep -m1 -E '========= (ERROR SUMMARY: [0-9]+ errors?$|RACECHECK SUMMARY)' "$1" | sed 's/^========= //'
}

# The lines of FILE (by its name) that the log's reports name, sorted.
named_lines() { # log file
  grep -oE "in ([^ ]*/)?$(basename "$2"):[0-9]+" "$1" | sed -E 's/.*:([0-9]+)$/\1/' | sort -nu | paste -sd, -
}

run_one() { # patch
  local patch=$1 lab mistake kind snippet nn program wrong file line kernel tool filter=() log rc summary errors report lines agree
  lab=$(basename "$(dirname "$(dirname "$patch")")")
  mistake=$(basename "$patch" .patch)
  nn=${lab%%_*}
  kind=$(sed -nE 's/^# kernels: (out-of-bounds (read|write)|race on (shared|global) memory|read of uninitialized shared memory) ".*/\1/p' "$patch")
  snippet=$(sed -nE 's/^# kernels: [^"]+ "(.*)"$/\1/p' "$patch")
  program=$build/labs/$lab/check$nn-wrong-$mistake
  wrong=$build/labs/wrong/$lab/$mistake
  log=$logs/$lab.$mistake.log
  if [[ ! -x $program ]]; then
    printf '%s\t%s\t%s\t-\tnot built\t-\t-\n' "$lab" "$mistake" "$kind" >"$log.row"
    return
  fi
  file=$(grep -rlF -- "$snippet" "$wrong" | head -1)
  line=$(grep -nF -- "$snippet" "$file" | head -1 | cut -d: -f1)
  kernel=$(enclosing_kernel "$file" "$line")
  case $kind in out-of-bounds*) tool=memcheck ;; *) tool=racecheck ;; esac
  mapfile -t filter < <(filter_option "$kernel")
  LABKIT_CHECK_KERNELS=cuda LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G timeout --kill-after=5 "$seconds" \
    "$sanitizer" --tool "$tool" "${filter[@]}" --print-limit 20 --error-exitcode 86 \
    "$program" --device cuda:0 >"$log" 2>&1
  rc=$?
  summary=$(tool_summary "$log")
  [[ -n $summary ]] || summary="no summary (exit $rc)"
  report=$(first_report "$log")
  lines=$(named_lines "$log" "$file")
  if [[ ",$lines," == *",$line,"* ]]; then agree=yes
  elif [[ -z $report ]]; then agree="no: nothing reported"
  else agree="no: other lines"; fi
  printf '%s\t%s\t%s at %s:%s (%s)\t%s\t%s\t%s\t%s\n' "$lab" "$mistake" "$kind" "$(basename "$file")" "$line" "$kernel" \
    "$tool: $summary" "${report:--}" "${lines:--}" "$agree" >"$log.row"
}

# A lab's own solution under both tools: compute-sanitizer must find nothing
# where the simulated sanitizer finds nothing.
run_solution() { # lab tool
  local lab=$1 tool=$2 nn=${1%%_*} log summary errors agree
  log=$logs/$lab.solution.$tool.log
  LABKIT_CHECK_KERNELS=cuda LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G timeout --kill-after=5 "$seconds" \
    "$sanitizer" --tool "$tool" --print-limit 20 "$build/labs/$lab/check$nn-solution" --device cuda:0 >"$log" 2>&1
  summary=$(tool_summary "$log")
  errors=$(sed -nE 's/.*(ERROR SUMMARY: |\()([0-9]+) error.*/\2/p' <<<"$summary")
  if [[ -z $summary ]]; then summary="no summary"; agree="no: no summary"
  elif [[ $errors == 0 ]]; then agree=yes
  else agree="no: $errors errors"; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$lab" "solution" "no report" "$tool: $summary" "$(first_report "$log")" \
    "-" "$agree" >"$log.row"
}

# One GPU holds them all at once; each runs its check's own small problems.
for patch in "${patches[@]}"; do run_one "$patch" & done
for lab in "${labs[@]}"; do
  for tool in memcheck racecheck; do run_solution "$lab" "$tool" & done
done
wait

{
  printf 'lab\tversion\tthe simulated sanitizer\tcompute-sanitizer\tits first report\tlines it names\tsame line\n'
  cat "$logs"/*.row
} >"$logs/agreement.tsv"
if command -v column >/dev/null; then column -t -s $'\t' "$logs/agreement.tsv"; else cat "$logs/agreement.tsv"; fi
agreed=$(grep -c $'\tyes$' "$logs/agreement.tsv")
rows=$(($(wc -l <"$logs/agreement.tsv") - 1))
echo "sanitize_agreement: $agreed of $rows rows agree (a known-wrong kernel: compute-sanitizer names the line the simulated sanitizer names; a solution: neither reports anything); logs in $logs"
# A row without compute-sanitizer's summary is a run it did not check, never
# an agreement; a disagreement is a finding to read in the logs. Either fails.
((agreed == rows))
