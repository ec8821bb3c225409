#!/usr/bin/env bash
# reference_run.sh OUTDIR: on a machine with an NVIDIA GPU, runs every lab's
# solution on cuda:0 once, writing its CSV (no gnuplot needed there), for the
# real-GPU reference figures that each lab's README shows.
#
#   tools/reference_run.sh /tmp/ref        # then copy /tmp/ref back (below)
#
# One command: it builds the solutions (the default preset, with CUDA), then
# runs each lab present (labs/NN_name with solutions/NN_name, a new lab too),
# one after another, each under its own time limit, and goes on when one
# fails: OUTDIR/logs/NN_name.log holds each run's output, OUTDIR/summary.txt
# one line a lab (ok / failed / timed out, seconds), OUTDIR/NN_name/ the CSV,
# named <stem>-<gpu>.csv (memory-h100.csv) as the lab folder keeps it.
#
# Time: the runs, not the build, stop at TOTAL_SECONDS (230 s: under 4
# minutes on any machine; on an NVIDIA H200, labs 01 to 06 and 08 ran in
# 18 s in all, 9 s the longest, lab 03's). Labs whose full run is
# long run with --quick (04: its naive CPU loop at N = 4096 alone
# takes minutes; 05, 06 and 08: their epochs and the 8192 sweep), each lab at
# most LAB_SECONDS (default 60) and the whole at most TOTAL_SECONDS (default
# 230): a lab that would start past it is skipped, and said so.
#
# Back on the kit's machine: copy OUTDIR/NN_name/*.csv into labs/NN_name/,
# run `./lab plots --reference` (draws each lab's PNG beside its CSV, from the
# CSV's own "# plot:" line), and name the figure and the machine in the README.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# == 1)) || { echo "usage: tools/reference_run.sh OUTDIR   (logs and CSVs go there)" >&2; exit 2; }
out=$1
lab_seconds=${LAB_SECONDS:-60}
total_seconds=${TOTAL_SECONDS:-230}
mkdir -p "$out/logs" || { echo "reference_run: cannot make $out/logs" >&2; exit 2; }
out=$(cd "$out" && pwd)

# Arguments besides --device cuda:0 --csv, per lab; a lab not named runs in full.
declare -A extra=([04_matmul]="--quick" [05_training_loop]="--quick" [06_precision]="--quick"
  [08_parallel]="--quick")

# For a try without a GPU (the kit's own test): REFERENCE_DEVICE=sim:0
# REFERENCE_PRESET=cpu-only REFERENCE_GPU_NAME="a test". REFERENCE_BUILD=DIR
# runs the programs of a tree built already (one carried to a lent GPU, say)
# and builds nothing; REFERENCE_LABS="01 02" runs those labs alone. Lab 10
# runs a rank per GPU here (REFERENCE_RANKS=N otherwise): its figure shows what
# crosses between GPUs only on a machine with two or more.
device=${REFERENCE_DEVICE:-cuda:0}
preset=${REFERENCE_PRESET:-default}
tree=${REFERENCE_BUILD:-build/$preset}
only=${REFERENCE_LABS:-}
gpu=${REFERENCE_GPU_NAME:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)}
if [[ -z $gpu ]]; then
  echo "reference_run: nvidia-smi names no GPU here: the reference figures need a real one" >&2
  exit 2
fi
# "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA GeForce RTX 4090" -> rtx4090
slug=$(printf '%s\n' "$gpu" | sed -E 's/NVIDIA //; s/GeForce //; s/ ([0-9]+GB|PCIe|SXM[0-9]*|HBM[0-9a-z]*|NVL).*//' |
  tr '[:upper:]' '[:lower:]' | tr -cd 'a-z0-9')
# The GPUs this kit sees (CUDA_VISIBLE_DEVICES honoured), else those nvidia-smi lists.
gpus=$(cd "$root" && "$tree/common/labkit-devices" --cuda-count 2>/dev/null) ||
  gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c .)
[[ $gpus =~ ^[0-9]+$ ]] || gpus=0
ranks=${REFERENCE_RANKS:-$((gpus > 0 ? gpus : 1))}
[[ $ranks =~ ^[1-9][0-9]*$ ]] || { echo "reference_run: REFERENCE_RANKS='$ranks' is not a count of ranks (1, 2, ...)" >&2; exit 2; }
echo "reference_run: $gpu ($slug, $gpus GPUs here: lab 10 as $ranks ranks); logs in $out/logs" | tee "$out/summary.txt"

cd "$root" || exit 2
labs=() targets=()
for d in labs/[0-9][0-9]_*/; do
  lab=$(basename "$d")
  [[ -d solutions/$lab ]] || continue
  [[ -z $only || " $only " == *" ${lab%%_*} "* ]] || continue
  labs+=("$lab")
  targets+=("lab${lab%%_*}-solution")
done
if [[ -n ${REFERENCE_BUILD:-} ]]; then
  echo "reference_run: the programs built in $tree, nothing built" | tee -a "$out/summary.txt"
else
  echo "reference_run: building ${targets[*]}" | tee -a "$out/summary.txt"
  if ! { cmake --preset "$preset" && cmake --build --preset "$preset" -j "$(nproc)" --target "${targets[@]}"; } \
    >"$out/logs/build.log" 2>&1; then
    echo "reference_run: the build failed (logs/build.log); labs whose program exists still run" |
      tee -a "$out/summary.txt"
  fi
fi

start=$SECONDS failed=0
for lab in "${labs[@]}"; do
  nn=${lab%%_*} stem=${lab#*_}
  exe=$tree/labs/$lab/lab$nn-solution
  left=$((total_seconds - (SECONDS - start)))
  if ((left < 10)); then
    echo "$lab: skipped (the runs reached TOTAL_SECONDS=$total_seconds)" | tee -a "$out/summary.txt"
    continue
  fi
  if [[ ! -x $exe ]]; then
    echo "$lab: not built (logs/build.log)" | tee -a "$out/summary.txt"
    failed=$((failed + 1))
    continue
  fi
  limit=$((left < lab_seconds ? left : lab_seconds))
  mkdir -p "$out/$lab"
  csv=$out/$lab/$stem-$slug.csv
  t0=$SECONDS
  # A lab whose programs run as several processes (lab 10) starts through the
  # launcher beside them, a rank per GPU here (NCCL takes one GPU per rank;
  # REFERENCE_RANKS overrides): with one GPU, one rank, whose ring sends nothing.
  launch=()
  [[ ! -x $tree/labs/$lab/launch ]] || launch=(env LABKIT_RANKS="$ranks" "$tree/labs/$lab/launch")
  # shellcheck disable=SC2086 # the extra arguments are words
  timeout --kill-after=5 "$limit" "${launch[@]}" "$exe" --device "$device" ${extra[$lab]:-} --csv "$csv" >"$out/logs/$lab.log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
  case $rc in
    0) verdict="ok: $lab/$stem-$slug.csv" ;;
    124 | 137) verdict="timed out after ${limit} s (LAB_SECONDS)"; failed=$((failed + 1)) ;;
    *) verdict="failed with status $rc: $(tail -2 "$out/logs/$lab.log" | tr '\n' ' ')"; failed=$((failed + 1)) ;;
  esac
  echo "$lab: $verdict, ${took} s${extra[$lab]:+ (${extra[$lab]})}" | tee -a "$out/summary.txt"
done
echo "reference_run: runs took $((SECONDS - start)) s; $failed lab(s) failed; summary in $out/summary.txt" |
  tee -a "$out/summary.txt"
((failed == 0))
