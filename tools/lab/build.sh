# build.sh: presets, configuring and building, and the environment the kit's
# programs run in (sourced by ./lab).

known_presets() {
  grep -o '"name": *"[^"]*"' CMakePresets.json | sed 's/.*"\([^"]*\)"$/\1/' | sort -u
}

check_preset() {
  [[ -f CMakePresets.json ]] || die "CMakePresets.json is missing from $ROOT"
  if ! known_presets | grep -qx -- "$1"; then
    warn "unknown preset '$1' (from LABKIT_PRESET); the presets are: $(known_presets | paste -sd' ' -)"
    exit 2
  fi
}

# True when version $1 >= version $2 (dotted numbers).
version_ge() {
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]
}

need_cmake() {
  if ! command -v cmake >/dev/null 2>&1; then
    die "cmake is not installed. Run ./lab deps (it installs cmake, a compiler, OpenBLAS, cJSON and gnuplot)."
  fi
  local v
  v=$(cmake --version | head -n1 | awk '{print $3}')
  if ! version_ge "${v%%-*}" "$CMAKE_MIN"; then
    die "cmake $v is too old: the kit needs $CMAKE_MIN or newer (Debian 12 and Ubuntu 24.04 have it;" \
      "Ubuntu 22.04 has 3.22: get a newer one with 'pip install --user cmake' or from https://apt.kitware.com)."
  fi
}

# The first error of a failed step's log: "labs/03_async_timing/lab.c:12:5: error: ..."
first_error() {
  grep -m1 -E 'CMake Error|: (fatal )?error:|undefined reference|No rule to make target' "$1" \
    | sed "s|$ROOT/||g" || true
}

# Prints the interesting part of a failed step's log, and where the whole log is.
show_failure() {
  local what=$1 log=$2 first total
  total=$(wc -l <"$log")
  first=$(grep -n -m1 -E 'CMake Error|: (fatal )?error:|undefined reference|No rule to make target' "$log" | cut -d: -f1 || true)
  warn "$what failed. The end of its log:"
  # The first error matters most; show it too when the tail does not reach it.
  if [[ -n "$first" ]] && ((first < total - 40)); then
    printf -- '--- first error (line %s) ---\n' "$first" >&2
    sed -n "${first},$((first + 14))p" "$log" >&2
    printf -- '--- ... ---\n' >&2
  fi
  tail -n 40 "$log" >&2
  warn "the whole log: $log"
}

# Configures build/<preset> when it has never been configured (later builds re-run
# CMake by themselves when a CMakeLists.txt changes).
configure() {
  local preset=$1 dir=build/$1 log
  need_cmake
  if [[ -f $dir/CMakeCache.txt && (-f $dir/Makefile || -f $dir/build.ninja) ]]; then
    return 0
  fi
  mkdir -p "$dir"
  log=$dir/lab-configure.log
  say "configuring $dir (first use)"
  if ! cmake --preset "$preset" >"$log" 2>&1; then
    show_failure "configure (cmake --preset $preset)" "$ROOT/$log"
    if grep -q -E 'OpenBLAS was not found|cblas.h was not found|cJSON was not found|Could NOT find|No CMAKE_C_COMPILER' "$log"; then
      warn "missing packages? ./lab deps installs them."
    fi
    exit 1
  fi
  # The kit's own summary (CUDA, OpenBLAS, cJSON, gnuplot), a few lines.
  sed -n '/^-- labkit configuration/,/^-- *$/p' "$log" | sed -e 's/^-- */  /' -e '/^ *$/d'
}

# Builds targets "$@" (everything when none) of the preset, quietly. On failure:
# the log's interesting part, then BUILD_VERDICT if the command set one, exit 1.
build() {
  local preset=$1
  shift
  try_build "$preset" "$@" && return 0
  show_failure "build (cmake --build --preset $preset${*:+ --target $*})" "$ROOT/$BUILD_LOG"
  if [[ -n ${BUILD_VERDICT:-} ]]; then
    echo
    echo "$BUILD_VERDICT"
  fi
  exit 1
}

# The same without stopping: returns 1 and leaves the log in BUILD_LOG.
try_build() {
  local preset=$1 targets=()
  shift
  configure "$preset"
  if (($# > 0)); then targets=(--target "$@"); fi
  BUILD_LOG=build/$preset/lab-build${1:+-$1}.log
  cmake --build --preset "$preset" -j "$JOBS" "${targets[@]}" >"$BUILD_LOG" 2>&1 || return 1
  tune_environment "$preset"
}

# What the kit's programs need in their environment, decided once per command.
# OpenBLAS picks its kernels from the CPU's identity when a program starts; on
# some virtual machines it sees an anonymous CPU and falls back to kernels for a
# Pentium 4, several times slower, so OPENBLAS_CORETYPE is set for it. Without a
# real GPU every lesson would run on the CPU alone, so simulated GPUs are asked
# for unless the user chose LABKIT_SIM_GPUS themselves.
tune_environment() {
  [[ -z ${LAB_TUNED:-} ]] || return 0
  local tool=build/$1/common/labkit-devices better cuda
  if [[ ! -x $tool ]]; then
    cmake --build --preset "$1" --target labkit-devices >/dev/null 2>&1 || return 0
  fi
  LAB_TUNED=1
  if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
    better=$("$tool" --openblas-coretype 2>/dev/null || true)
    if [[ -n $better ]]; then
      export OPENBLAS_CORETYPE=$better
      say "OpenBLAS misjudges this CPU; using OPENBLAS_CORETYPE=$better for the programs it runs"
    fi
  fi
  if [[ -n ${LAB_SIM_DEFAULT:-} && -z ${LABKIT_SIM_GPUS+x} ]]; then
    cuda=$("$tool" --cuda-count 2>/dev/null || echo 0)
    if [[ $cuda == 0 ]]; then
      export LABKIT_SIM_GPUS=2
      local marker=build/$1/.lab-said-simulated
      if [[ ! -e $marker ]]; then
        say "no NVIDIA GPU here: the labs get two simulated GPUs, sim:0 and sim:1 (LABKIT_SIM_GPUS=2)," \
          "so that every lesson shows; LABKIT_SIM_GPUS=0 runs without them. (Said once.)"
        : >"$marker" 2>/dev/null || true
      fi
    fi
  fi
}

# Real NVIDIA GPUs that the preset's build sees (0 without CUDA or a GPU).
cuda_count() {
  local tool=build/$1/common/labkit-devices
  [[ -x $tool ]] || cmake --build --preset "$1" --target labkit-devices >/dev/null 2>&1 || true
  [[ -x $tool ]] && "$tool" --cuda-count 2>/dev/null || echo 0
}
