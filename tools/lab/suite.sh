# suite.sh: the instructors' and developers' commands: the test suite, benches,
# coverage, every slide plot, compute-sanitizer (sourced by ./lab).

# ---- the test suite: build what the selected tests run, then run them ----------

# Every test that `ctest --preset P -N ARGS` selects, one name a line.
selected_tests() {
  ctest --preset "$PRESET" -N "$@" 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p'
}

# The targets the selected tests ("$@": ctest's selection arguments) need:
# the label targets (suite-unit, ...) when the selection is whole labels (the
# whole suite: every label but lab, so not the student's own checks); else
# the tests' own programs, when there are few; else the label targets of the
# labels they come from. From suite-targets.txt, "<test> <labels>
# <target>...", which CMake writes; without it, `suite` (every test's); for a
# test it does not list, everything (kit.suite_complete finds such tests).
suite_targets() {
  local file=build/$PRESET/suite-targets.txt chosen
  if [[ ! -f $file ]]; then echo suite; return; fi
  chosen=$(selected_tests "$@")
  [[ -n $chosen ]] || return 0
  awk -v chosen="$chosen" '
    BEGIN { n = split(chosen, names, "\n"); for (i = 1; i <= n; i++) wanted[names[i]] = 1 }
    { labels[$1] = $2; tests_of[$2] = tests_of[$2] + 1
      for (i = 3; i <= NF; i++) targets[$1] = targets[$1] " " $i }
    END {
      for (t in wanted) {
        if (!(t in labels)) { print "all"; exit } # a test that says nothing: build everything
        in_label[labels[t]]++
        k = split(targets[t], list, " ")
        for (i = 1; i <= k; i++) if (!(list[i] in program)) { program[list[i]] = 1; programs++ }
      }
      whole = 1
      for (l in in_label) if (in_label[l] != tests_of[l]) whole = 0
      if (!whole && programs <= 40) { for (p in program) print p; exit }
      for (l in in_label) { m = split(l, parts, ","); for (i = 1; i <= m; i++) print "suite-" parts[i] }
    }' "$file" | sort -u
}

# Standard input to standard output, with a line after every 30 s of silence
# (CI logs and people both take a long silence for a hang): "$1" says what is
# going on, and the lines matching "$2" are counted as done.
with_heartbeat() {
  local what=$1 done_pattern=$2 line="" part done=0 start=$SECONDS
  while true; do
    if IFS= read -r -t 30 part; then
      line+=$part
      printf '%s\n' "$line"
      [[ $line =~ $done_pattern ]] && done=$((done + 1))
      line=""
    elif (($? > 128)); then
      line+=$part
      say "$what: $done done so far, $((SECONDS - start)) s in"
    else
      [[ -z $line$part ]] || printf '%s\n' "$line$part"
      return 0
    fi
  done
}

# What a quiet build (build.sh's build, which writes its log to
# build/<preset>/lab-build*.log, named lab-build*.log.PID while it is written)
# has done so far, every 20 s while it runs:
# the compile, link and patch steps its log names (make's percentages are
# not the build's when it makes some targets only).
build_progress() {
  local preset=$1 since=$2 start=$3 log steps
  while sleep "${LAB_PROGRESS_SECONDS:-20}"; do
    log=$(find "build/$preset" -maxdepth 1 -name 'lab-build*.log*' -newer "$since" 2>/dev/null | head -n1)
    [[ -n $log ]] || continue
    # Ninja numbers its steps ("[12/345] Building ..."); make does not.
    steps=$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -n1 | tr -d '[]' | sed 's|/| of |')
    [[ -n $steps ]] || steps=$(grep -c -E 'Building|Linking|wrong version' "$log" || true)
    say "building: $steps steps done, $((SECONDS - start)) s in"
  done
}

cmd_test() {
  local rc=0 arg targets=() start=$SECONDS stamp watcher
  # The preset already excludes the label lab, and ctest (3.25) excludes a test
  # only when it matches every -LE given: a second one would select nonsense.
  for arg in "$@"; do
    case $arg in
      -LE|--label-exclude|-LE?*|--label-exclude=*)
        usage_error "test: $arg cannot be combined with the preset's own exclusion of the label lab (ctest excludes only what matches every -LE); choose labels with -L, e.g. ./lab test -L unit, or exclude tests by name with -E" ;;
    esac
  done
  configure_only "$PRESET"
  mapfile -t targets < <(suite_targets "$@")
  if ((${#targets[@]} == 0)); then
    ctest --preset "$PRESET" --no-tests=error "$@" || rc=$?
    say "test ($PRESET): no test matches these arguments"
    return "$rc"
  fi
  say "building ${targets[*]:0:8}$( ((${#targets[@]} > 8)) && echo " and $((${#targets[@]} - 8)) more")"
  stamp=build/$PRESET/.lab-test-start
  : >"$stamp"
  build_progress "$PRESET" "$stamp" "$start" &
  watcher=$!
  # build() exits on a failure: the watcher must not outlive it.
  trap 'kill "$watcher" 2>/dev/null || true' EXIT
  build "$PRESET" "${targets[@]}"
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  trap - EXIT
  say "built in $((SECONDS - start)) s; testing"
  # Twice the cores and one: many tests sleep by design (lab 03's work that
  # takes a while, lab 10's ranks waiting for each other and its deadlock
  # deadline, the driver's waits for its lock, the grader's time limits), and
  # the cores idled under them (the suite's tests used 1.44 of 2 cores at -j2:
  # 189 s; at -j3 174 s, at -j5 159 s and 1.87 cores, the same CPU time).
  # Every check holds under load. A -j of the caller's own comes later and wins.
  ctest --preset "$PRESET" --no-tests=error -j "$((2 * JOBS + 1))" "$@" | with_heartbeat "testing" '^ *[0-9]+/[0-9]+ Test' || rc=$?
  if ((rc == 0)); then say "test ($PRESET): PASS ($((SECONDS - start)) s)"; else say "test ($PRESET): FAIL (ctest exit status $rc)"; fi
  return "$rc"
}

cmd_bench() {
  (($# <= 1)) || usage_error "bench takes at most one NAME"
  local filter=${1:-} benches=() b failed=0 ran=0
  build "$PRESET"
  for b in "build/$PRESET/bench/"bench_*; do
    [[ -f $b && -x $b ]] || continue
    [[ -z $filter || $(basename "$b") == *"$filter"* ]] || continue
    benches+=("$b")
  done
  if ((${#benches[@]} == 0)); then
    # A name that matches nothing is a typo, not a run: say so with status 2.
    [[ -z $filter ]] || usage_error "bench: no bench matches '$filter' (the benches: $(cd "build/$PRESET/bench" &&
      ls bench_* 2>/dev/null | paste -sd' ' -))"
    say "no benches yet: build/$PRESET/bench/ has no bench_* programs."
    return 0
  fi
  for b in "${benches[@]}"; do
    printf '\n==== %s ====\n' "$(basename "$b")"
    ran=$((ran + 1))
    "$b" || { failed=$((failed + 1)); warn "$(basename "$b") failed"; }
  done
  echo
  ((failed == 0)) || die "$failed of $ran benches failed."
  say "$ran benches ran."
}

cmd_coverage() {
  (($# == 0)) || usage_error "coverage takes no arguments"
  local preset=coverage dir=build/coverage rc=0 summary
  check_preset "$preset"
  command -v gcovr >/dev/null 2>&1 || die "gcovr is not installed: sudo apt-get install gcovr"
  build "$preset"
  # Counts from earlier runs would add up: start from zero.
  find "$dir" -name '*.gcda' -delete
  ctest --preset "$preset" -L unit --no-tests=error || rc=$?
  ((rc == 0)) || warn "some unit tests failed; the coverage below is of the run as it went."
  summary=$(gcovr --root . --filter 'common/core/src/kernels/' --txt "$dir/coverage.txt" --print-summary "$dir")
  echo
  cat "$dir/coverage.txt"
  echo
  printf '%s\n' "$summary" | grep '^lines:' | sed 's/^lines:/line coverage of common\/core\/src\/kernels\/:/'
  say "written to $dir/coverage.txt"
  return "$rc"
}

# An absolute path for a DIR the user gave, relative to where they called us from.
abspath_from_caller() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$CALLER_DIR/$1" ;;
  esac
}

# Every lab's solution runs once; its one CSV gives the PNG, the SVG and the PDF.
# --reference: no run; each lab's real-GPU figure redrawn from the CSV kept
# beside it (tools/reference_plots.sh; tools/reference_run.sh makes them).
cmd_plots() {
  if [[ ${1:-} == --reference ]]; then
    shift
    (($# <= 1)) || usage_error "plots --reference takes at most one DIR"
    if (($# == 1)); then set -- "$(abspath_from_caller "$1")"; fi
    "$ROOT/tools/reference_plots.sh" "$@"
    return
  fi
  (($# <= 1)) || usage_error "plots takes at most one DIR"
  [[ ${1:-} != -* ]] || usage_error "plots: unknown option '$1' (./lab plots [DIR], ./lab plots --reference [DIR])"
  local out labs=() lab nn exe launcher targets=() todo=() failed=0 made=0
  if (($# == 1)); then out=$(abspath_from_caller "$1"); else out=$ROOT/plots; fi
  mapfile -t labs < <(labs_present)
  ((${#labs[@]} > 0)) || { say "$(labs_sentence) Nothing to plot."; return 0; }
  for lab in "${labs[@]}"; do
    if [[ -d solutions/$lab ]]; then
      todo+=("$lab")
      targets+=("lab${lab%%_*}-solution")
    else
      say "$lab: skipped (no solutions/$lab: the plots are drawn by the solutions)"
    fi
  done
  ((${#todo[@]} > 0)) || return 0
  LAB_SIM_DEFAULT=1
  build "$PRESET" "${targets[@]}"
  mkdir -p "$out"
  for lab in "${todo[@]}"; do
    nn=${lab%%_*}
    exe=build/$PRESET/labs/$lab/lab$nn-solution
    launcher=()
    [[ ! -x ${exe%/*}/launch ]] || launcher=("${exe%/*}/launch") # lab 10's ranks, as ./lab run starts them
    say "$lab: $out/$lab.{csv,png,svg,pdf}"
    if "${launcher[@]}" "$exe" --csv "$out/$lab.csv" --plot "$out/$lab.png" --plot "$out/$lab.svg" \
      --plot "$out/$lab.pdf"; then
      made=$((made + 1))
    else
      failed=$((failed + 1))
      warn "$lab failed"
    fi
  done
  ((failed == 0)) || die "$failed of $((made + failed)) labs failed to draw their plots."
  say "$made labs drawn in $out"
}

# ---- compute-sanitizer ---------------------------------------------------------------

find_sanitizer() {
  command -v compute-sanitizer 2>/dev/null || { [[ -x /usr/local/cuda/bin/compute-sanitizer ]] && echo /usr/local/cuda/bin/compute-sanitizer; } || true
}

# "name<TAB>command..." for every test labelled gpu.
gpu_test_commands() {
  ctest --preset "$PRESET" -L gpu -N -V 2>/dev/null | awk '
    /Test command: / { sub(/^[0-9]+: Test command: /, ""); command = $0; next }
    /^ *Test +#[0-9]+: / { sub(/^ *Test +#[0-9]+: /, ""); print $0 "\t" command }'
}

# How many of memcheck's leaks in a log were allocated inside cublasCreate.
# cuBLAS 13 keeps that memory (64 MiB, 1 KiB and 128 KiB on an H100) after
# cublasDestroy, until the context ends, so every program that used cuBLAS
# reports them, whatever it freed; the kit frees its own before that
# (cuda_backend.cu: stop_all_devices). Such leaks are not counted as errors.
cublas_own_leaks() {
  awk '/========= Leaked / { if (open && mine) n++; open = 1; mine = 0; next }
       /Host Frame: cublasCreate/ { if (open) mine = 1 }
       /========= (LEAK|ERROR) SUMMARY/ { if (open && mine) n++; open = 0 }
       END { print n + 0 }' "$1"
}

# One run of compute-sanitizer's TOOL on a test's COMMAND, its output in LOG:
# prints the table's cell and returns 1 for a run that failed. Only the tool's
# own summary ("========= ERROR SUMMARY: N errors") says it checked the run:
# a run without one (no compute-sanitizer, a wrapper that printed nothing, a
# crash before the report) is "no summary", a failure, never "0"; a test that
# failed under the tool is "exit N"; one that skipped (77: nothing was checked)
# is "skipped", which sanitize_tests counts apart. cuBLAS's own leaks are not
# errors (cublas_own_leaks).
sanitize_one() {
  local sanitizer=$1 tool=$2 log=$3 extra=() rc line errors own
  shift 3
  # The tests ask for too much memory on purpose, and the library checks
  # every CUDA call's result itself: an API error the sanitizer would report
  # is either intended or already a failed test.
  [[ $tool == memcheck ]] && extra=(--leak-check full --report-api-errors no)
  LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 \
    "$@" >"$log" 2>&1
  rc=$?
  line=$(grep -E '^========= ERROR SUMMARY: [0-9]+ error' "$log" | tail -n1)
  if [[ -z $line ]]; then echo "no summary"; return 1; fi
  errors=$(sed -E 's/.*ERROR SUMMARY: ([0-9]+).*/\1/' <<<"$line")
  own=$(cublas_own_leaks "$log")
  errors=$((errors - own))
  if ((errors > 0)); then echo "$errors"; return 1; fi
  if ((rc == 77)); then echo "skipped"; return 0; fi
  if ((rc != 0)); then echo "exit $rc"; return 1; fi
  echo 0
}

# The table of sanitize_one's cells for each "name<TAB>command" line of
# stdin under each TOOL, logs in DIR (cuBLAS's leaks summed in
# SANITIZE_CUBLAS_LEAKS); fails when a run failed, or when no run
# checked anything (no test, or every one skipped): an empty table is no
# evidence of "no error".
sanitize_tests() {
  local sanitizer=$1 dir=$2 name command tool cell failed=0 checked=0 skipped=0 tools words log
  shift 2
  tools=("$@")
  SANITIZE_CUBLAS_LEAKS=0
  printf '%-30s' "test"
  printf ' %12s' "${tools[@]}"
  printf '\n'
  while IFS=$'\t' read -r name command; do
    [[ -n $name ]] || continue
    printf '%-30s' "$name"
    eval "words=($command)"
    for tool in "${tools[@]}"; do
      log=$dir/$name.$tool.log
      cell=$(sanitize_one "$sanitizer" "$tool" "$log" "${words[@]}") || failed=$((failed + 1))
      SANITIZE_CUBLAS_LEAKS=$((SANITIZE_CUBLAS_LEAKS + $(cublas_own_leaks "$log")))
      case $cell in skipped) skipped=$((skipped + 1)) ;; 0) checked=$((checked + 1)) ;; esac
      printf ' %12s' "$cell"
    done
    printf '\n'
  done
  say "logs: $dir"
  ((SANITIZE_CUBLAS_LEAKS == 0)) ||
    say "memcheck: $SANITIZE_CUBLAS_LEAKS leaks allocated inside cublasCreate, which cuBLAS keeps after cublasDestroy, not counted"
  ((skipped == 0)) || say "$skipped runs skipped their test (exit 77): compute-sanitizer checked nothing there"
  if ((failed > 0)); then
    say "compute-sanitizer: $failed runs failed: errors found, a test that failed, or no summary from the tool (the logs say which)."
    return 1
  fi
  if ((checked == 0)); then
    say "compute-sanitizer checked no run (no gpu test, or every one skipped): that is not \"no error\"."
    return 1
  fi
  say "sanitize: no error in any of the $checked runs checked"
}

# compute-sanitizer's path in SANITIZER and the preset built; 1, having said
# so, where no GPU is there for it to watch (COMMAND: what to run on one).
sanitizer_on_gpu() { # command
  SANITIZER=$(find_sanitizer)
  [[ -n $SANITIZER ]] || die "compute-sanitizer is not installed: it comes with NVIDIA's CUDA toolkit (README, \"CUDA\")."
  build "$PRESET"
  if (($(cuda_count "$PRESET") == 0)); then
    say "no NVIDIA GPU here (or a build without CUDA): compute-sanitizer has no kernel to watch."
    say "run $1 on a machine with one."
    return 1
  fi
}

# Every gpu test under each of compute-sanitizer's tools: memcheck (with the
# leak check), racecheck and synccheck. A table of the errors each one found.
cmd_sanitize() {
  local tools=(memcheck racecheck synccheck) dir
  if [[ ${1:-} == --agreement ]]; then
    (($# == 1)) || die "usage: ./lab sanitize --agreement (it takes no tools: each known-wrong kernel gets the one that sees its mistake)"
    sanitize_agreement
    return
  fi
  (($# == 0)) || tools=("$@")
  sanitizer_on_gpu "./lab sanitize" || return 0
  dir=build/$PRESET/lab-logs/sanitize
  mkdir -p "$dir"
  sanitize_tests "$SANITIZER" "$dir" "${tools[@]}" < <(gpu_test_commands) ||
    die "./lab sanitize: compute-sanitizer did not vouch for every gpu test (above)."
}

# The known-wrong kernels that race or overrun, and the solutions, under
# compute-sanitizer beside the kit's own sanitizer (tools/sanitize_agreement.sh:
# a table, kernel by kernel). They need a build of their own: -lineinfo for
# compute-sanitizer's lines, and the known-wrong kernels compiled by nvcc too
# (the suite's build runs them on sim:0 alone).
sanitize_agreement() {
  local dir=build/agreement targets=() generator=()
  sanitizer_on_gpu "./lab sanitize --agreement" || return 0
  mapfile -t targets < <(tools/sanitize_agreement.sh --targets)
  ((${#targets[@]} > 0)) || die "no known-wrong kernel names a report (solutions/*/wrong/*.patch, \"# kernels:\")"
  ! command -v ninja >/dev/null || generator=(-G Ninja)
  mkdir -p "$dir"
  say "configuring $dir (-lineinfo, the known-wrong kernels built by nvcc too)"
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DLABKIT_WRONG_ON_CUDA=ON \
    -DCMAKE_CUDA_FLAGS=-lineinfo >"$dir/configure.log" 2>&1 || die "configuring $dir failed: $dir/configure.log"
  say "building ${#targets[@]} checks"
  cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}" >"$dir/build.log" 2>&1 ||
    die "building the known-wrong checks failed: $dir/build.log"
  tools/sanitize_agreement.sh "$dir" "$dir/lab-logs/agreement"
}

# ---- fuzzing -----------------------------------------------------------------------

# The fuzz targets (fuzz/targets.cmake), one a line.
fuzz_targets() {
  sed -n 's/^set(LABKIT_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/targets.cmake | tr ' ' '\n'
}

# clang and its libFuzzer runtime, or why not. Debian: clang brings the
# compiler; the runtime (libclang_rt.fuzzer) is libclang-rt-14-dev, which clang
# only recommends (an install with --no-install-recommends lacks it).
need_libfuzzer() {
  local probe
  command -v clang >/dev/null 2>&1 ||
    die "fuzz: clang is not installed: sudo apt-get install clang libclang-rt-14-dev (libFuzzer is clang's; the kit's own compiler stays gcc)."
  probe=$(mktemp -d)
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
  if ! clang -fsanitize=fuzzer,address -o "$probe/p" "$probe/p.c" >"$probe/log" 2>&1; then
    warn "fuzz: clang cannot build a libFuzzer program here: $(head -n1 "$probe/log")"
    rm -rf "$probe"
    die "fuzz: its runtime is missing: sudo apt-get install libclang-rt-14-dev (Debian 12: clang's libFuzzer and AddressSanitizer runtimes; on Ubuntu, the libclang-rt-N-dev of your clang-N)."
  fi
  rm -rf "$probe"
}

# ./lab fuzz [TARGET|all] [SECONDS]: each target (or the one named) under
# libFuzzer with AddressSanitizer for SECONDS (default 60), from its seeds, its
# crashes ever found and the inputs of earlier runs (build/fuzz/corpus). A
# crash, a leak or a timeout fails, and its input is kept: in
# build/fuzz/artifacts/<target>/ and, as a regression input that the unit
# tests replay from then on, in fuzz/<target>/crashes/ (commit it with the fix).
# One fuzz target for SECONDS, its report in $LOG_DIR/fuzz-TARGET.log; exits
# as libFuzzer did (0: nothing found).
fuzz_one() {
  local dir=$1 t=$2 seconds=$3 artifacts=$1/artifacts/$2
  mkdir -p "$dir/corpus/$t" "$artifacts" "fuzz/$t/crashes"
  # -close_fd_mask=3: the library's own messages (a refusal says why) would
  # slow every run down; libFuzzer's report and the sanitizer's still show.
  build/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
    -dict="fuzz/$t/$t.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$dir/corpus/$t" "fuzz/$t/seeds" "fuzz/$t/crashes" >"$LOG_DIR/fuzz-$t.log" 2>&1
}

cmd_fuzz() {
  local target=all seconds=60 targets=() t dir=build/fuzz failed=0 log artifacts found new
  (($# <= 2)) || usage_error "fuzz: ./lab fuzz [TARGET] [SECONDS] (targets: $(fuzz_targets | paste -sd' ' -))"
  if (($# >= 1)); then
    if [[ $1 =~ ^[0-9]+$ && $# == 1 ]]; then seconds=$1; else target=$1; fi
  fi
  (($# < 2)) || seconds=$2
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || usage_error "fuzz: SECONDS is a whole number of seconds, not '$seconds'"
  if [[ $target == all ]]; then
    mapfile -t targets < <(fuzz_targets)
  else
    fuzz_targets | grep -qxF -- "$target" ||
      usage_error "fuzz: no target '$target'; the targets: $(fuzz_targets | paste -sd' ' -) (or all)"
    targets=("$target")
  fi
  need_libfuzzer
  need_cmake
  mkdir -p "$dir"
  set_log_dir fuzz
  # A configuration of its own (fuzz/CMakeLists.txt), built with clang; the
  # kit's presets never see clang.
  lock_build fuzz
  LAB_INTERRUPTED=""
  trap 'LAB_INTERRUPTED=1' INT TERM
  if [[ ! -f $dir/CMakeCache.txt || -e $dir/.lab-configuring ]]; then
    say "configuring $dir (clang, libFuzzer, AddressSanitizer)"
    : >"$dir/.lab-configuring"
    if ! cmake -S fuzz -B "$dir" -DCMAKE_C_COMPILER=clang >"$LOG_DIR/lab-configure.log" 2>&1; then
      stop_if_interrupted configuring fuzz
      stop_if_disk_full "configure (fuzz)" "$dir" "$LOG_DIR/lab-configure.log"
      show_failure "configure (cmake -S fuzz -B $dir)" "$LOG_DIR/lab-configure.log"
      exit 1
    fi
    rm -f "$dir/.lab-configuring"
  fi
  if ! cmake --build "$dir" -j "$JOBS" --target "${targets[@]/#/fuzz_}" >"$LOG_DIR/lab-build.log" 2>&1; then
    stop_if_interrupted building fuzz
    stop_if_disk_full "build (fuzz)" "$dir" "$LOG_DIR/lab-build.log"
    show_failure "build (fuzz targets)" "$LOG_DIR/lab-build.log"
    exit 1
  fi
  stop_if_interrupted building fuzz
  trap - INT TERM
  unlock_build
  # The targets run $JOBS at a time (each is one process on one core); their
  # verdicts are told in order once all have run.
  local pids=() rcs=() i
  for ((i = 0; i < ${#targets[@]}; i++)); do
    t=${targets[i]}
    say "fuzz_$t: $seconds s (log: $LOG_DIR/fuzz-$t.log)"
    fuzz_one "$dir" "$t" "$seconds" &
    pids[i]=$!
    if ((i + 1 >= JOBS)); then wait "${pids[i + 1 - JOBS]}" && rcs[i + 1 - JOBS]=0 || rcs[i + 1 - JOBS]=$?; fi
  done
  for ((i = 0; i < ${#targets[@]}; i++)); do
    [[ -n ${rcs[i]:-} ]] || { wait "${pids[i]}" && rcs[i]=0 || rcs[i]=$?; }
  done
  for ((i = 0; i < ${#targets[@]}; i++)); do
    t=${targets[i]}
    artifacts=$dir/artifacts/$t
    log=$LOG_DIR/fuzz-$t.log
    if ((rcs[i] == 0)); then
      say "fuzz_$t: nothing found ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo ?) inputs)"
      continue
    fi
    failed=$((failed + 1))
    found=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY: ' "$log" || echo "it stopped (see the log)")
    found=${found#*ERROR: }
    warn "fuzz_$t found a bug: ${found%% at pc *} (the whole report: $log)"
    grep -A8 -m1 -E '==ERROR|ERROR: libFuzzer' "$log" | tail -n +2 | cut -c1-200 | sed 's/^/  /' >&2 || true
    for new in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [[ -e $new ]] || continue
      cp -n "$new" "fuzz/$t/crashes/" 2>/dev/null || true
      warn "its input: $new, kept as fuzz/$t/crashes/$(basename "$new") (the unit test unit.fuzz.$t replays it;" \
        "fix the bug, then commit it). Again: build/fuzz/fuzz_$t $new"
    done
  done
  ((failed == 0)) || die "fuzz: $failed of ${#targets[@]} targets found a bug."
  say "fuzz: ${#targets[@]} targets, $seconds s each: nothing found."
}
