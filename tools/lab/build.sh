# build.sh: presets, configuring and building (one ./lab at a time in a build
# directory), where the logs go, and the environment the kit's programs run in
# (sourced by ./lab).

# The configure presets' names, in the order CMakePresets.json gives them (read
# by bash alone: every command asks).
known_presets() {
  local line names=() name
  while IFS= read -r line; do
    [[ $line =~ \"name\":\ *\"([^\"]*)\" ]] || continue
    name=${BASH_REMATCH[1]}
    [[ " ${names[*]} " == *" $name "* ]] || names+=("$name")
  done <CMakePresets.json
  printf '%s\n' "${names[@]}"
}

# A preset's name, exactly: LABKIT_PRESET is a name, never a pattern ("cpu.only"
# or ".*" are no presets).
check_preset() {
  [[ -f CMakePresets.json ]] || die "CMakePresets.json is missing from $ROOT"
  local name names
  names=$(known_presets)
  while read -r name; do
    [[ $name == "$1" ]] && return 0
  done <<<"$names"
  warn "LABKIT_PRESET='$1' is not a preset; the presets are: ${names//$'\n'/ } (or leave LABKIT_PRESET unset: default)"
  exit 2
}

# ---- the kit's settings: an explicit value that cannot be honoured stops ---------
# The programs refuse these too (exit 2); saying it here costs no build. Unset or
# empty keeps the default. The same rules as common/core/src/device.c.
check_settings() {
  local v=${LABKIT_SIM_GPUS:-}
  if [[ -n $v && ! $v =~ ^0*[0-8]$ ]]; then
    warn "LABKIT_SIM_GPUS=\"$v\" is not a number of simulated GPUs: give a whole number from 0 to 8," \
      "e.g. LABKIT_SIM_GPUS=2, or unset it (without a real GPU, ./lab then gives the labs two)."
    exit 2
  fi
  v=${LABKIT_SIM_MEMORY:-}
  if [[ -n $v ]] && ! sim_memory_valid "$v"; then
    warn "LABKIT_SIM_MEMORY=\"$v\" is not a size: give bytes or a whole number with K, M or G" \
      "(powers of 1024), e.g. 512M or 2G, at least 1 and at most 16 EiB; or unset it (4G)."
    exit 2
  fi
  local variable
  for variable in LABKIT_GNUPLOT LABKIT_PYTHON; do
    v=${!variable:-}
    if [[ -n $v ]] && ! runnable "$v"; then
      warn "$variable=\"$v\" is not a program that can be run ($([[ $v == */* ]] && echo "no executable file there" ||
        echo "not found on PATH")): give a program on PATH or the path to one, or unset it."
      exit 2
    fi
  done
}

# A program execvp would run: a path to an executable file, or a name on PATH.
runnable() {
  if [[ $1 == */* ]]; then [[ -f $1 && -x $1 ]]; else type -P -- "$1" >/dev/null; fi
}

# Bytes, or a number with K, M or G, that is neither 0 nor over 2^64 - 1 bytes.
sim_memory_valid() {
  [[ $1 =~ ^0*([0-9]{1,20})([KMG]?)$ ]] || return 1
  local digits=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]} limit=18446744073709551615
  case $unit in
    K) limit=18014398509481983 ;;
    M) limit=17592186044415 ;;
    G) limit=17179869183 ;;
  esac
  # Compared as text of equal length: bash's integers stop at 2^63 - 1.
  ((${#digits} < ${#limit})) || [[ ${#digits} -eq ${#limit} && ! $digits > $limit ]] || return 1
  [[ $digits =~ [1-9] ]]
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

# ---- where the logs go ------------------------------------------------------------
# In build/<preset>/, or, where that cannot be written (a read-only checkout,
# another user's), under the user's cache ($XDG_CACHE_HOME/labkit/...), said once.
# Sets LOG_DIR.
LOG_DIR=""
set_log_dir() {
  local dir=build/$1 other
  if [[ -d $dir && -w $dir ]] || { [[ ! -e $dir ]] && mkdir -p "$dir" 2>/dev/null; }; then
    LOG_DIR=$dir
    return 0
  fi
  for other in "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/labkit$ROOT/$1" "${TMPDIR:-/tmp}/labkit-$(id -u)$ROOT/$1"; do
    if mkdir -p "$other" 2>/dev/null && [[ -w $other ]]; then
      [[ $LOG_DIR == "$other" ]] || warn "$dir cannot be written here (a read-only checkout?): the logs go to $other"
      LOG_DIR=$other
      return 0
    fi
  done
  die "$dir cannot be written here (a read-only checkout?), and neither can ${XDG_CACHE_HOME:-~/.cache} or ${TMPDIR:-/tmp}: no log can be kept."
}

# ---- one build at a time ------------------------------------------------------------
# Two ./lab commands in one folder (./lab watch in one terminal, ./lab run in
# another) share build/<preset>, and two makes writing one archive at once break
# it. Configuring and building hold a lock on the build directory (flock, from
# util-linux) until they end; the programs and checks then run side by side.
# Nested calls (a build that builds labkit-devices too) take it once.
LAB_LOCK_FD=""
LAB_LOCK_DEPTH=0
lock_build() {
  local dir=build/$1
  LAB_LOCK_DEPTH=$((LAB_LOCK_DEPTH + 1))
  ((LAB_LOCK_DEPTH == 1)) || return 0
  if ! command -v flock >/dev/null 2>&1; then
    warn "flock (util-linux) is missing: two ./lab commands at once in this folder may break each other's build."
    return 0
  fi
  exec {LAB_LOCK_FD}<"$dir"
  if ! flock -n "$LAB_LOCK_FD"; then
    warn "waiting for another ./lab in this folder (it is building $dir)"
    flock "$LAB_LOCK_FD"
  fi
}

unlock_build() {
  ((LAB_LOCK_DEPTH > 0)) || return 0
  LAB_LOCK_DEPTH=$((LAB_LOCK_DEPTH - 1))
  if ((LAB_LOCK_DEPTH == 0)) && [[ -n $LAB_LOCK_FD ]]; then
    exec {LAB_LOCK_FD}<&-
    LAB_LOCK_FD=""
  fi
}

# ---- what went wrong, when a step fails ------------------------------------------------

# The first error of a failed step's log: "labs/03_async_timing/lab.c:12:5: error: ..."
first_error() {
  grep -m1 -E 'CMake Error|: (fatal )?error:|undefined reference|No rule to make target' "$1" 2>/dev/null \
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

# Ctrl-C during a step: make removes the file it was writing, and a configure
# cut short is done again (configure() below), so the next command finishes the
# build. Said as such: it is not a lab that does not build.
LAB_INTERRUPTED=""
stop_if_interrupted() {
  [[ -n $LAB_INTERRUPTED ]] || return 0
  warn "interrupted (Ctrl-C) while $1 build/$2; nothing half-made is kept: the next ./lab command finishes it."
  exit 130
}

# Kilobytes free on the file system of $1 (empty when df cannot say).
free_kib() {
  df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'
}

# A step that failed for want of disk space (or of the right to write) is not
# the lab's fault: say so, and stop.
stop_if_disk_full() {
  local what=$1 dir=$2 log=$3 free
  free=$(free_kib "$dir")
  if grep -qs 'No space left on device' "$log" || [[ -n $free && $free -lt 1024 ]]; then
    warn "$what failed: the disk that holds $dir is full (${free:-?} KiB free)." \
      "Free some space (an unused build/<preset> can go) and run the command again."
    exit 1
  fi
  if grep -qs -E 'Read-only file system|Permission denied' "$log"; then
    show_failure "$what" "$log"
    warn "$what could not write in $dir (read-only, or another user's): build in a copy of the kit that you can write."
    exit 1
  fi
}

# ---- configure and build ----------------------------------------------------------------

# Configures build/<preset> when it has never been configured, or when a
# configure was cut short (.lab-configuring stays behind); later builds re-run
# CMake by themselves when a CMakeLists.txt changes. Called with the lock held.
configure() {
  local preset=$1 dir=build/$1 log
  if [[ -f $dir/CMakeCache.txt && (-f $dir/Makefile || -f $dir/build.ninja) && ! -e $dir/.lab-configuring ]]; then
    return 0
  fi
  need_cmake
  [[ -w $dir ]] || die "$dir cannot be written here (a read-only checkout?), so the kit cannot be built in it:" \
    "copy the kit where you can write (cp -r \"$ROOT\" ~/labkit) and run ./lab there."
  log=$LOG_DIR/lab-configure.log
  say "configuring $dir (first use)"
  if ! { : >"$dir/.lab-configuring" && cmake --preset "$preset" >"$log" 2>&1; }; then
    stop_if_interrupted configuring "$preset"
    stop_if_disk_full "configure (cmake --preset $preset)" "$dir" "$log"
    show_failure "configure (cmake --preset $preset)" "$log"
    if grep -q -E 'OpenBLAS was not found|cblas.h was not found|cJSON was not found|Could NOT find|No CMAKE_C_COMPILER' "$log"; then
      warn "missing packages? ./lab deps installs them."
    fi
    exit 1
  fi
  stop_if_interrupted configuring "$preset"
  rm -f "$dir/.lab-configuring"
  # The kit's own summary (CUDA, OpenBLAS, cJSON, gnuplot), a few lines.
  sed -n '/^-- labkit configuration/,/^-- *$/p' "$log" | sed -e 's/^-- */  /' -e '/^ *$/d'
}

# Builds targets "$@" (everything when none) of the preset, quietly. On failure:
# the log's interesting part, then BUILD_VERDICT if the command set one, exit 1.
build() {
  local preset=$1
  shift
  try_build "$preset" "$@" && return 0
  show_failure "build (cmake --build --preset $preset${*:+ --target $*})" "$BUILD_LOG"
  if [[ -n ${BUILD_VERDICT:-} ]]; then
    echo
    echo "$BUILD_VERDICT"
  fi
  exit 1
}

# A build directory this user cannot write, already built: its programs are
# used as they are (make cannot even check them without writing), said once.
LAB_READ_ONLY=""
read_only_build() {
  local dir=build/$1
  [[ -d $dir && ! -w $dir && -f $dir/CMakeCache.txt ]] || return 1
  if [[ -z $LAB_READ_ONLY ]]; then
    warn "$dir cannot be written here (a read-only checkout?): its programs run as they were built," \
      "without rebuilding (changes since then are not in them)."
  fi
  LAB_READ_ONLY=1
}

# Stops unless the program $1 of target $2 is there after a build.
need_program() {
  [[ -x $1 ]] && return 0
  if [[ -n $LAB_READ_ONLY ]]; then
    die "$2 was never built in build/$PRESET, and build/$PRESET cannot be written here: copy the kit where you can write (cp -r \"$ROOT\" ~/labkit) and run ./lab there."
  fi
  die "target $2 built, but $1 is not there."
}

# build/<preset> made where it is missing, or a stop saying why it cannot be.
make_build_dir() {
  local dir=build/$1
  [[ -d $dir ]] || mkdir -p "$dir" 2>/dev/null || die "$dir cannot be created here (a read-only checkout?), so the kit cannot be" \
    "built in it: copy the kit where you can write (cp -r \"$ROOT\" ~/labkit) and run ./lab there."
}

# Configures build/<preset> when it needs it, under the lock, for a command that
# must read the configured tree before it knows what to build (./lab test).
configure_only() {
  local preset=$1
  set_log_dir "$preset"
  read_only_build "$preset" && return 0
  make_build_dir "$preset"
  lock_build "$preset"
  LAB_INTERRUPTED=""
  trap 'LAB_INTERRUPTED=1' INT TERM
  configure "$preset"
  trap - INT TERM
  unlock_build
}

# The same without stopping: returns 1 when the build fails (the log is in
# BUILD_LOG), and stops the command itself when it was interrupted, the disk is
# full or the build directory cannot be written.
try_build() {
  local preset=$1 targets=() rc=0 dir=build/$1
  shift
  set_log_dir "$preset"
  if read_only_build "$preset"; then
    tune_environment "$preset"
    return 0
  fi
  make_build_dir "$preset"
  lock_build "$preset"
  LAB_INTERRUPTED=""
  trap 'LAB_INTERRUPTED=1' INT TERM
  configure "$preset"
  if (($# > 0)); then targets=(--target "$@"); fi
  BUILD_LOG=$LOG_DIR/lab-build${1:+-$1}.log
  # Written under this command's own name, then renamed whole: another ./lab
  # reading the last log never sees half of one.
  cmake --build --preset "$preset" -j "$JOBS" "${targets[@]}" >"$BUILD_LOG.$$" 2>&1 || rc=$?
  mv -f "$BUILD_LOG.$$" "$BUILD_LOG" 2>/dev/null || BUILD_LOG=$BUILD_LOG.$$
  stop_if_interrupted building "$preset"
  if ((rc != 0)); then
    stop_if_disk_full "build (cmake --build --preset $preset${*:+ --target $*})" "$dir" "$BUILD_LOG"
    trap - INT TERM
    unlock_build
    return 1
  fi
  tune_environment "$preset"
  stop_if_interrupted building "$preset"
  trap - INT TERM
  unlock_build
}

# What the kit's programs need in their environment, decided once per command.
# OpenBLAS picks its kernels from the CPU's identity when a program starts; on
# some virtual machines it sees an anonymous CPU and falls back to kernels for a
# Pentium 4, several times slower, so OPENBLAS_CORETYPE is set for it. Without a
# real GPU every lesson would run on the CPU alone, so simulated GPUs are asked
# for unless the user chose LABKIT_SIM_GPUS themselves (empty is not a choice);
# with one, the commands that set LAB_SIM_BESIDE (check, progress, profile) ask
# for them beside it.
tune_environment() {
  [[ -z ${LAB_TUNED:-} ]] || return 0
  local tool=build/$1/common/labkit-devices better
  if [[ ! -x $tool && -z $LAB_READ_ONLY ]]; then
    cmake --build --preset "$1" --target labkit-devices >/dev/null 2>&1 || return 0
  fi
  [[ -x $tool ]] || return 0
  LAB_TUNED=1
  if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
    # Kept beside the build: the CPU does not change under a build directory.
    local known=$LOG_DIR/.lab-openblas-coretype
    if [[ -f $known && $known -nt $tool ]]; then
      read -r better <"$known" || better=""
    else
      better=$("$tool" --openblas-coretype 2>/dev/null || true)
      printf '%s\n' "$better" >"$known" 2>/dev/null || true
    fi
    if [[ -n $better ]]; then
      export OPENBLAS_CORETYPE=$better
      say "OpenBLAS misjudges this CPU; using OPENBLAS_CORETYPE=$better for the programs it runs"
    fi
  fi
  if [[ -n ${LAB_SIM_DEFAULT:-} && -z ${LABKIT_SIM_GPUS:-} ]]; then
    count_cuda "$1"
    if [[ $LAB_CUDA_COUNT == 0 ]]; then
      export LABKIT_SIM_GPUS=2
      local marker=$LOG_DIR/.lab-said-simulated
      if [[ ! -e $marker ]]; then
        say "no NVIDIA GPU here: the labs get two simulated GPUs, sim:0 and sim:1 (LABKIT_SIM_GPUS=2)," \
          "so that every lesson shows; LABKIT_SIM_GPUS=0 runs without them. (Said once.)"
        : >"$marker" 2>/dev/null || true
      fi
    elif [[ -n ${LAB_SIM_BESIDE:-} ]]; then
      # A check's claims on a full device and on two GPUs of one kind need
      # simulated GPUs, whose memory it can fill to the byte: without them
      # they go untried and done cannot be said (check_verdict). The lessons'
      # helpers still speak of the real GPUs alone.
      export LABKIT_SIM_GPUS=2
      local beside=$LOG_DIR/.lab-said-simulated-beside
      if [[ ! -e $beside ]]; then
        say "the checks also get two simulated GPUs beside this machine's NVIDIA GPU (LABKIT_SIM_GPUS=2):" \
          "their claims on a full device and on two GPUs of one kind need them. (Said once.)"
        : >"$beside" 2>/dev/null || true
      fi
    fi
  fi
}

# Real NVIDIA GPUs that the preset's build sees (0 without CUDA or a GPU),
# asked once per command: starting CUDA to count them takes a moment.
# count_cuda sets LAB_CUDA_COUNT; cuda_count prints it.
LAB_CUDA_COUNT=""
count_cuda() {
  local tool=build/$1/common/labkit-devices
  [[ -z $LAB_CUDA_COUNT ]] || return 0
  if [[ ! -x $tool && -z $LAB_READ_ONLY && -w build/$1 ]]; then
    lock_build "$1"
    cmake --build --preset "$1" --target labkit-devices >/dev/null 2>&1 || true
    unlock_build
  fi
  LAB_CUDA_COUNT=0
  if [[ -x $tool ]]; then LAB_CUDA_COUNT=$("$tool" --cuda-count 2>/dev/null || echo 0); fi
}

cuda_count() {
  count_cuda "$1"
  echo "$LAB_CUDA_COUNT"
}
