#!/usr/bin/env bash
# gpu_lend.sh OUTDIR [SECONDS]: everything a lent GPU machine should run, in
# one call, within SECONDS (default 540: under the device's 10 minutes a
# command, with room for the start and the copy back).
#
#   tools/gpu_lend.sh "$OUT"          # on the device machine, from the kit's root
#
# Such a machine is lent for minutes at a time and has no network and no
# OpenBLAS: OpenBLAS comes with the checkout as Debian packages in .gpu-debs/
# (DEVELOPERS' guide: apt-get download libopenblas0-pthread
# libopenblas-pthread-dev libgfortran5 libquadmath0), installed here under
# /usr/local. Then, in this order, each step under its own limit and skipped
# (and said so) when the time left is too short:
#
#   1. configure (a first configure compiles CUDA for the GPUs nvidia-smi
#      names) and the gpu label (./lab test -L gpu builds what it needs);
#   2. the benches of issue 25 (fusion): bench_graph 3000,
#      bench_training_epoch cuda:0, bench_precision, bench_attention;
#   3. compute-sanitizer (memcheck, racecheck, synccheck) on the copy queue's
#      test, the CUDA stream that no GPU had run before, then ./lab sanitize
#      (every gpu test under memcheck) with what time is left.
#
# OUTDIR/summary.txt says what ran (ok / failed / skipped, seconds); each
# step's output is OUTDIR/<step>.log. Nothing here decides a figure: the logs
# go into bench/README.md by hand, with the machine named.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# >= 1 && $# <= 2)) || { echo "usage: tools/gpu_lend.sh OUTDIR [SECONDS]" >&2; exit 2; }
out=$1 budget=${2:-540}
[[ $budget =~ ^[1-9][0-9]*$ ]] || { echo "gpu_lend: SECONDS must be a whole number above 0, not '$budget'" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
cd "$root" || exit 2
start=$SECONDS
summary=$out/summary.txt
: >"$summary"

left() { echo $((budget - (SECONDS - start))); }

# step NAME NEEDS LIMIT COMMAND...: runs COMMAND into NAME.log under LIMIT
# seconds (at most what is left), unless fewer than NEEDS seconds are left.
step() {
  local name=$1 needs=$2 limit=$3 began=$SECONDS rc
  shift 3
  if (($(left) < needs)); then
    printf '%-26s skipped (%d s left, it needs %d)\n' "$name" "$(left)" "$needs" | tee -a "$summary"
    return 1
  fi
  ((limit <= $(left))) || limit=$(left)
  # timeout runs programs, not this script's functions: those run in a bash
  # of their own (they are exported below).
  if declare -F "$1" >/dev/null; then set -- bash -c '"$@"' "$1" "$@"; fi
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local verdict=ok
  ((rc == 0)) || verdict="failed (exit $rc)"
  ((rc != 124 && rc != 137)) || verdict="timed out after $limit s"
  printf '%-26s %s, %d s\n' "$name" "$verdict" $((SECONDS - began)) | tee -a "$summary"
  return "$rc"
}

install_openblas() {
  ldconfig -p | grep -q 'libopenblas\.so' && { echo "OpenBLAS: already here"; return 0; }
  compgen -G '.gpu-debs/*.deb' >/dev/null || { echo "no OpenBLAS here and no .gpu-debs/*.deb to install it from"; return 1; }
  local tmp=/tmp/gpu-lend-openblas
  mkdir -p "$tmp" && for f in .gpu-debs/*.deb; do dpkg -x "$f" "$tmp" || return 1; done
  cp "$tmp"/usr/include/x86_64-linux-gnu/openblas-pthread/*.h /usr/local/include/ &&
    cp -a "$tmp"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas*.so* /usr/local/lib/ || return 1
  ldconfig -p | grep -q 'libgfortran\.so\.5' ||
    cp -a "$tmp"/usr/lib/x86_64-linux-gnu/lib{gfortran,quadmath}.so* /usr/local/lib/ || return 1
  ldconfig
}

describe_machine() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -n 2
  echo "cores: $(nproc); commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
}

bench() { # NAME ARGS...: a bench of this build
  local name=$1
  shift
  "build/default/bench/$name" "$@"
}

export -f install_openblas describe_machine bench
step machine 5 30 describe_machine
step openblas 10 60 install_openblas || { echo "gpu_lend: nothing can be built without OpenBLAS" >&2; exit 1; }
step configure 60 120 cmake --preset default || exit 1
step gpu-label 120 300 ./lab test -L gpu
# The benches run without ./lab, which would choose OpenBLAS's kernels where
# it misjudges the CPU: the same choice, made here.
coretype=$(build/default/common/labkit-devices --openblas-coretype 2>/dev/null || true)
[[ -z $coretype || -n ${OPENBLAS_CORETYPE:-} ]] || export OPENBLAS_CORETYPE=$coretype
step bench-build 60 180 cmake --build --preset default --target bench_graph bench_training_epoch bench_precision \
  bench_attention test_copy_queue
step bench_graph 40 90 bench bench_graph 3000
step bench_training_epoch 60 180 bench bench_training_epoch cuda:0
step bench_precision 30 90 bench bench_precision
step bench_attention 30 90 bench bench_attention
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  step "copy_queue-$tool" 30 120 env LABKIT_SIM_GPUS=2 "$sanitizer" --tool "$tool" --error-exitcode 1 \
    build/default/common/tests/test_copy_queue cuda:0
done
step sanitize 120 400 ./lab sanitize
echo "gpu_lend: $(($(left) < 0 ? 0 : $(left))) s of $budget left; the logs are in $out" | tee -a "$summary"
