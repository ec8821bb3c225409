#!/usr/bin/env bash
# gpu.cuda_start_limit: where CUDA cannot start under an address-space limit
# (ulimit -v: it reserves more than the GPU's memory when it starts), asking
# for cuda:0 says what CUDA said and names the limit, where it used to say
# only that no GPU was found (./lab grade's sandbox met it on an H200).
#   cuda_start_limit.sh LABKIT_DEVICES TEST_TENSOR
# Skipped (77) without a GPU, or where CUDA starts under the limit anyway.
devices=$1 program=$2
count=$("$devices" --cuda-count 2>/dev/null)
[ "${count:-0}" -gt 0 ] 2>/dev/null || { echo "skipped: no NVIDIA GPU here"; exit 77; }
out=$(ulimit -v 2097152 && "$program" cuda:0 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "skipped: CUDA started under a 2 GiB address-space limit here: nothing to diagnose"
  exit 77
fi
case $out in
  *"CUDA did not start: "*"ulimit -v"*) echo "ok: $out"; exit 0 ;;
esac
echo "FAIL: cuda:0 under ulimit -v 2 GiB (exit $rc) did not say that CUDA did not start and why:"
echo "$out"
exit 1
