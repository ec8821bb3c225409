# fixture.sh: a small copy of the kit for the driver's tests (sourced by them).
#
#   make_fixture DIR    DIR gets ./lab and tools/lab/*.sh of this kit, its
#                       CMakePresets.json, one lab (labs/04_matmul) with its
#                       solution, and stub/cmake: a stand-in for CMake that
#                       builds nothing but stub programs, and records every
#                       configure or build of one directory that overlaps
#                       another in $STUB_RECORD (what two makes writing one
#                       archive at once did to the real kit).
#   fixture_env DIR     the stub first on PATH, and the kit's settings unset.
#   built_tree_env BUILD_DIR
#                       for a test of ./lab on this kit's own build instead:
#                       LABKIT_PRESET is BUILD_DIR's preset and the other
#                       settings are unset; skipped (exit 77) where BUILD_DIR
#                       is not build/<preset> of this kit.
# KIT is the kit's root.

make_fixture() {
  local dir=$1
  mkdir -p "$dir/tools/lab" "$dir/labs/04_matmul" "$dir/solutions/04_matmul" "$dir/stub"
  cp "$KIT/lab" "$dir/"
  cp "$KIT"/tools/lab/*.sh "$dir/tools/lab/"
  cp "$KIT/CMakePresets.json" "$dir/"
  cat >"$dir/labs/04_matmul/lab.h" <<'EOF'
/* ==== Step 1: the fixture's one step */
EOF
  printf 'int lab_step(void) { return 1; }\n' >"$dir/labs/04_matmul/lab.c"
  cp "$dir/labs/04_matmul/lab.c" "$dir/solutions/04_matmul/lab.c"
  printf '## Step 1: the step\n\n1. A nudge.\n' >"$dir/labs/04_matmul/hints.md"
  cat >"$dir/stub/cmake" <<'EOF'
#!/usr/bin/env bash
# A stand-in for cmake: configure and build take STUB_HOLD seconds each and
# write stub programs; two at once in one build directory are recorded in
# STUB_RECORD and fail as the real race did.
set -u
hold=${STUB_HOLD:-0.1}
preset="" targets=() kind=""
case ${1:-} in
  --version) echo "cmake version 3.25.1"; exit 0 ;;
  --preset) kind=configure preset=$2 ;;
  --build)
    kind=build
    shift
    while (($# > 0)); do
      case $1 in
        --preset) preset=$2; shift ;;
        -j) shift ;;
        --target) shift; targets=("$@"); break ;;
      esac
      shift
    done ;;
  *) echo "stub cmake: unexpected arguments: $*" >&2; exit 2 ;;
esac
dir=build/$preset
[[ -d $dir ]] || mkdir -p "$dir" || exit 1
# The mark of a configure or build under way, made only if absent (noclobber:
# O_EXCL), in bash itself: this stand-in must cost little, it runs hundreds of times.
set -o noclobber
if ! { : >"$dir/.stub-busy"; } 2>/dev/null; then
  echo "$kind of $dir overlapped another" >>"${STUB_RECORD:-/dev/null}"
  echo "make[2]: *** [common/core/liblabkit_core.a] Error 1 (another build of $dir wrote it at the same time)"
  exit 2
fi
set +o noclobber
trap 'rm -f "$dir/.stub-busy"' EXIT
read -r -t "$hold" <>"${BASH_SOURCE[0]%/*}/never" || true
program() { # path, body (POSIX sh: it starts faster than bash); one that is there is up to date
  [[ -x $1 ]] && return 0
  mkdir -p "${1%/*}" && printf '#!/bin/sh\n%s\n' "$2" >"$1.tmp" && chmod +x "$1.tmp" && mv "$1.tmp" "$1"
}
if [[ $kind == configure ]]; then
  mkdir -p "$dir/CMakeFiles" || exit 1
  # What a configure writes: enough to fill a small disk.
  head -c 65536 /dev/zero >"$dir/CMakeFiles/compiler-id.bin" || exit 1
  echo "# stub" >"$dir/CMakeCache.txt" && echo "# stub" >"$dir/Makefile" || exit 1
  # FIXTURE_KERNEL_TOOLS=1: a build with the kernel tools, lab 04's check with a kernels claim
  if [[ -n ${FIXTURE_KERNEL_TOOLS:-} ]]; then
    echo "LABKIT_HAVE_KERNEL_TOOLS:INTERNAL=ON" >>"$dir/CMakeCache.txt" && echo "04" >"$dir/kernels-claims.txt" || exit 1
  fi
  printf -- '-- labkit configuration\n--   stub      : yes\n--\n'
  exit 0
fi
if [[ ! -f $dir/Makefile ]]; then
  echo "make: *** No rule to make target 'all'.  Stop. (not configured)"
  exit 2
fi
((${#targets[@]} > 0)) || targets=(labkit-devices check04 lab04 check04-solution lab04-solution)
for t in "${targets[@]}"; do
  case $t in
    labkit-devices)
      program "$dir/common/labkit-devices" 'case ${1:-} in --cuda-count) echo 0 ;; --openblas-coretype) ;; *) echo "cpu     the fixture'"'"'s CPU" ;; esac' ;;
    check04|check04-solution)
      program "$dir/labs/04_matmul/$t" '
device=cpu; [ "${1:-}" = --device ] && device=$2
case $device in
  sim:*) if [ "${device#sim:}" -ge "${LABKIT_SIM_GPUS:-0}" ] || [ -n "${FIXTURE_SKIP_SIM:-}" ]; then echo "skipped: $device does not exist here"; exit 77; fi ;;
  cuda:*) echo "skipped: $device does not exist here"; exit 77 ;;
esac
echo "  ok    the fixture'"'"'s claim holds on $device"
echo "04_matmul on $device: PASS (1 claim holds)"' ;;
    lab04|lab04-solution)
      program "$dir/labs/04_matmul/$t" 'echo "lab04 ran: $*"' ;;
    check04-kernels|check04-solution-kernels)
      [[ -n ${FIXTURE_KERNEL_TOOLS:-} ]] || { echo "make: *** No rule to make target '$t'.  Stop."; exit 2; }
      # its kernels claim fails where FIXTURE_KERNELS_FAIL is set when it runs
      program "$dir/labs/04_matmul/$t" '
device=cpu; [ "${1:-}" = --device ] && device=$2
case $device in sim:*) ;; *) echo "skipped: the kernel sanitizer watches kernels on GPUs"; exit 77 ;; esac
if [ -n "${FIXTURE_KERNELS_FAIL:-}" ]; then
  echo "  FAIL  your kernel reads global memory coalesced: 32 sectors per request"
  echo "04_matmul on $device: FAIL (1 of 1 claims do not hold)"; exit 1
fi
echo "  ok    your kernel reads global memory coalesced: 4 sectors per request"
echo "04_matmul on $device: PASS (1 claim holds)"' ;;
    *) echo "make: *** No rule to make target '$t'.  Stop."; exit 2 ;;
  esac || exit 1
done
EOF
  mkfifo "$dir/stub/never" # read with a timeout: a sleep that starts no program
  chmod +x "$dir/stub/cmake" "$dir/lab"
}

# The environment of the commands run in a fixture: the stub first on PATH,
# and none of the user's settings.
fixture_env() {
  export PATH="$1/stub:$PATH"
  unset LABKIT_PRESET LABKIT_SIM_GPUS LABKIT_SIM_MEMORY LABKIT_GNUPLOT LABKIT_PYTHON OPENBLAS_CORETYPE
}

built_tree_env() {
  local build preset
  build=$(cd "$1" && pwd)
  preset=${build##*/}
  if [[ $build != "$KIT/build/$preset" ]] || ! grep -q "\"name\": *\"$preset\"" "$KIT/CMakePresets.json"; then
    echo "skipped: $build is not one of ./lab's build directories (build/<preset>)"
    exit 77
  fi
  unset LABKIT_SIM_GPUS LABKIT_SIM_MEMORY LABKIT_GNUPLOT LABKIT_PYTHON
  export LABKIT_PRESET=$preset
}
