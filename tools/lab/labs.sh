# labs.sh: one lab at a time: run it, check it, watch it, hints, progress
# (sourced by ./lab).

# Every lab present, as NN_name, in order.
labs_present() {
  local d
  for d in labs/[0-9][0-9]_*/; do
    d=${d%/}
    printf '%s\n' "${d#labs/}"
  done
}

labs_sentence() {
  local list
  list=$(labs_present | paste -sd' ' -)
  if [[ -z "$list" ]]; then echo "labs/ has no labs yet."; else echo "labs here: $list"; fi
}

# Sets LAB (NN_name) and LAB_NN (NN) from "1", "01", "01_devices" or "labs/01_devices/".
resolve_lab() {
  local arg=$1 nn found=()
  arg=${arg%/}
  arg=${arg#./}
  arg=${arg#labs/}
  arg=${arg#solutions/}
  if [[ $arg =~ ^[0-9]{1,2}$ ]]; then
    nn=$(printf '%02d' "$((10#$arg))")
  elif [[ $arg =~ ^([0-9]{2})_[A-Za-z0-9_]+$ ]]; then
    nn=${BASH_REMATCH[1]}
  else
    usage_error "'$1' is not a lab (give its number, such as 1 or 01, or its name, such as 01_devices)"
  fi
  found=(labs/"$nn"_*/)
  if ((${#found[@]} == 0)); then
    warn "there is no lab $nn: $(labs_sentence)"
    exit 2
  fi
  LAB=${found[0]%/}
  LAB=${LAB#labs/}
  LAB_NN=$nn
  if [[ $arg == *_* && $arg != "$LAB" ]]; then
    warn "there is no lab '$arg'; lab $nn is $LAB."
    exit 2
  fi
}

need_solution() {
  if [[ ! -d solutions/$LAB ]]; then
    die "lab $LAB_NN has no solution here (solutions/$LAB is absent): the student's copy of the kit has none. What the solution prints is in the lab's README, \"What you should see\"; your own lab runs with ./lab run $LAB_NN."
  fi
}

# ---- steps: what lab.h announces, what lab.c still leaves undone ---------------

# The steps of lab $LAB, from lab.h's banners ("/* ==== Step 3: ... */"), one number a line.
lab_steps() {
  { grep -oE '^/\* =+ Step [0-9]+' "labs/$LAB/lab.h" || true; } | grep -oE '[0-9]+$' | sort -nu || true
}

# The steps whose TODO stub is still in the student's files (todo("step 3: ...")).
steps_left() {
  { cat "labs/$LAB/lab.c" "labs/$LAB"/*.cuh 2>/dev/null | grep -oE 'todo\("step [0-9]+' || true; } | grep -oE '[0-9]+$' | sort -nu || true
}

# ---- run ------------------------------------------------------------------------------
cmd_run() {
  local lab_arg="" solution=0 args=() target exe
  while (($# > 0)); do
    case $1 in
      --solution) solution=1 ;;
      --) shift; args=("$@"); break ;;
      -*) usage_error "run: unknown option '$1' (the program's own flags go after --: ./lab run 01 -- $1)" ;;
      *)
        [[ -z $lab_arg ]] || usage_error "run: one lab at a time ('$lab_arg' and '$1'); the program's arguments go after --"
        lab_arg=$1 ;;
    esac
    shift
  done
  [[ -n $lab_arg ]] || usage_error "run: which lab? e.g. ./lab run 01 ($(labs_sentence))"
  resolve_lab "$lab_arg"
  target=lab$LAB_NN
  if ((solution)); then
    need_solution
    target=lab$LAB_NN-solution
  fi
  LAB_SIM_DEFAULT=1
  BUILD_VERDICT="lab $LAB_NN: it does not build (the first error is above)"
  build "$PRESET" "$target"
  exe=build/$PRESET/labs/$LAB/$target
  need_program "$exe" "$target"
  # From the caller's directory, so that --csv and --plot paths mean what they say.
  cd "$CALLER_DIR"
  run_launched "$ROOT/$exe" "${args[@]}"
}

# Runs a lab's program, through its launcher where it has one (lab 10: the
# `launch` file beside it, mpiexec with LABKIT_RANKS ranks): a first
# `--ranks N` among the program's arguments sets N, 2 by default.
run_launched() {
  local exe=$1 args=() ranks=${LABKIT_RANKS:-2}
  shift
  if [[ ! -x ${exe%/*}/launch ]]; then
    exec "$exe" "$@"
  fi
  while (($# > 0)); do
    case $1 in
      --ranks) (($# >= 2)) || usage_error "run: --ranks needs a number of processes, e.g. --ranks 4"
        ranks=$2; shift ;;
      --ranks=*) ranks=${1#--ranks=} ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  [[ $ranks =~ ^[1-9][0-9]{0,2}$ ]] || usage_error "run: --ranks takes a number of processes from 1 to 999, not '$ranks'"
  LABKIT_RANKS=$ranks exec "${exe%/*}/launch" "$exe" "${args[@]}"
}

# ---- check ----------------------------------------------------------------------------

# The devices a check runs on: the CPU, a simulated GPU where there are any,
# and the first real GPU where there is one.
check_devices() {
  local devices=(cpu)
  [[ $((10#${LABKIT_SIM_GPUS:-0})) != 0 ]] && devices+=(sim:0)
  (($(cuda_count "$PRESET") > 0)) && devices+=(cuda:0)
  printf '%s\n' "${devices[@]}"
}

# Every run of lab $LAB's check, one a line: "<label> <device> [VAR=value...]".
# The devices above, then the CPU in each of the lab's other environments
# (LAB_CHECK_ENVIRONMENTS in its lab.cmake, which the configure step writes
# to check-environments), labelled "cpu.<name>" as in the CTest tests.
check_runs() {
  local device name settings file=build/$PRESET/labs/$LAB/check-environments
  for device in $(check_devices); do echo "$device $device"; done
  [[ -f $file ]] || return 0
  while read -r name settings; do
    [[ -n $name ]] && echo "cpu.$name cpu $settings"
  done <"$file"
}

# Runs check program $1 on every device of check_runs whose label matches
# the pattern $3 (default: all), appending to the arrays CHECK_LABELS,
# CHECK_OUTCOMES, CHECK_LOGS and CHECK_SETTINGS; $2 names the program in its
# logs' names. Each run writes a log of this command's own (another ./lab may
# check the same lab at the same time), renamed to the lab's last log once
# shown (show_check_runs).
run_checks() {
  local exe=$1 kind=$2 only=${3:-*} label device settings dir=$LOG_DIR/lab-logs
  [[ -d $dir ]] || mkdir -p "$dir"
  while read -r label device settings; do
    # shellcheck disable=SC2053 # $only is a pattern
    [[ $label == $only ]] || continue
    CHECK_LABELS+=("$label")
    CHECK_SETTINGS+=("${settings:+ (with $settings)}")
    CHECK_LOGS+=("$dir/$kind-$LAB-${label/:/}.log.$$")
    read -ra settings <<<"$settings"
    CHECK_OUTCOMES+=("$(run_check_on "$exe" "$device" "${CHECK_LOGS[-1]}" "${settings[@]}")")
  done < <(check_runs)
}

# The runs of CHECK_* from index $1 to $2 - 1: each one's device and
# outcome, then its log (whole with $3 = 1, else its highlights); $4 follows
# the device's name.
show_check_runs() {
  local first=$1 end=$2 verbose=$3 suffix=$4 i
  for ((i = first; i < end; ++i)); do
    printf '\n%-7s %s%s\n' "${CHECK_LABELS[i]}$suffix" "$(outcome_summary "${CHECK_OUTCOMES[i]}" "${CHECK_LOGS[i]}")" \
      "${CHECK_SETTINGS[i]}"
    if ((verbose)); then
      sed 's/^/  /' "${CHECK_LOGS[i]}"
    else
      log_highlights "${CHECK_LOGS[i]}"
    fi
    mv -f "${CHECK_LOGS[i]}" "${CHECK_LOGS[i]%.$$}"
  done
}

# The verdict ($1: check_verdict or kernels_verdict) of the runs of CHECK_*
# from index $2 on.
verdict_of_runs() {
  local judge=$1 first=$2
  $judge "$(printf '%s\n' "${CHECK_LABELS[@]:first}")" "$(printf '%s\n' "${CHECK_OUTCOMES[@]:first}")" \
    "$(printf '%s\n' "${CHECK_LOGS[@]:first}")"
}

# Whether a check that holds should also run under the kernel sanitizer: a
# simulated GPU was among the devices checked ($1: their labels) and the
# lab's check has a kernels claim in this build (the student's own kernels,
# watched load by load on a simulated GPU, and their memory traffic counted;
# none without the kernel tools). A kernel that reads past a shared tile, leaves part of it
# unwritten or walks memory uncoalesced can give every right value on a
# simulated GPU, where no timing tells it: done must not be said of it there.
# (On a real GPU the check's timing claims and compute-sanitizer do that work.)
kernels_claim_here() {
  [[ $'\n'$1$'\n' == *$'\n'sim:* ]] && kernels_claim_has "$LAB_NN"
}

# After a check that held on the devices labelled $1 (one a line; $2 = 1: the
# solution's), its kernels claim under the kernel sanitizer where
# kernels_claim_here, its runs appended to CHECK_*. Sets KERNELS_VERDICT: ""
# where it does not apply, "clean", or the lab's "not yet — ..." (then
# returns 1).
kernels_after_check() {
  local labels=$1 solution=$2 target first=${#CHECK_LABELS[@]} said
  KERNELS_VERDICT=""
  kernels_claim_here "$labels" || return 0
  target=$(kernels_check_target "$solution")
  if ! try_build "$PRESET" "$target"; then
    KERNELS_VERDICT="not yet — every claim holds, but $target, the check under the kernel sanitizer, does not build: $(first_error "$BUILD_LOG")"
    return 1
  fi
  run_checks "build/$PRESET/labs/$LAB/$target" kernels 'sim:*'
  if said=$(verdict_of_runs kernels_verdict "$first"); then
    KERNELS_VERDICT=clean
    return 0
  fi
  KERNELS_VERDICT="not yet — every claim holds, but under the kernel sanitizer (./lab check $LAB_NN --kernels) ${said#not yet — }"
  return 1
}

cmd_check() {
  local lab_arg="" solution=0 verbose=0 who target verdict="" rc=0 kernels=0 plain_runs
  while (($# > 0)); do
    case $1 in
      --solution) solution=1 ;;
      -v|--verbose) verbose=1 ;;
      --asan) PRESET=debug-asan ;;
      --kernels) kernels=1 ;;
      -*) usage_error "check: unknown option '$1' (--solution, -v, --asan, --kernels)" ;;
      *)
        [[ -z $lab_arg ]] || usage_error "check: one lab at a time ('$lab_arg' and '$1')"
        lab_arg=$1 ;;
    esac
    shift
  done
  [[ -n $lab_arg ]] || usage_error "check: which lab? e.g. ./lab check 01 ($(labs_sentence))"
  resolve_lab "$lab_arg"
  who="lab $LAB_NN"
  target=check$LAB_NN
  if ((solution)); then
    need_solution
    who="lab $LAB_NN (solution)"
    target=check$LAB_NN-solution
  fi
  LAB_SIM_DEFAULT=1 LAB_SIM_BESIDE=1
  if ((kernels)); then # kernels.sh: the check built for the kernel sanitizer
    kernels_check_ready || return 1
    target=$(kernels_check_target "$solution")
    who="$who (kernel sanitizer)"
  fi
  check_build "$who" "$target" "$verbose" || return 1
  CHECK_LABELS=() CHECK_OUTCOMES=() CHECK_LOGS=() CHECK_SETTINGS=()
  run_checks "build/$PRESET/labs/$LAB/$target" check
  plain_runs=${#CHECK_LABELS[@]}
  local judge=check_verdict
  ((kernels)) && judge=kernels_verdict # kernels.sh
  verdict=$(verdict_of_runs "$judge" 0) || rc=1
  # The check holds: its kernels claim under the kernel sanitizer too.
  if ((!kernels && rc == 0)); then
    kernels_after_check "$(printf '%s\n' "${CHECK_LABELS[@]}")" "$solution" || rc=1
    case $KERNELS_VERDICT in
      "") ;;
      clean) verdict="$verdict; your kernels run clean under the kernel sanitizer" ;;
      *) verdict=$KERNELS_VERDICT ;;
    esac
  fi
  echo "$who: $verdict"
  show_check_runs 0 "$plain_runs" "$verbose" ""
  show_check_runs "$plain_runs" "${#CHECK_LABELS[@]}" "$verbose" " under the kernel sanitizer"
  return "$rc"
}

# Builds check program $2 for ./lab check, saying "$1: not yet — it does not
# build" with the first error when it does not ($3 = 1: the failing step too).
check_build() {
  local who=$1 target=$2 verbose=$3
  if ! try_build "$PRESET" "$target"; then
    echo "$who: not yet — it does not build: $(first_error "$BUILD_LOG")"
    ((verbose)) && show_failure "build" "$BUILD_LOG"
    echo "  (the whole log: $BUILD_LOG)"
    return 1
  fi
  need_program "build/$PRESET/labs/$LAB/$target" "$target"
}

# ---- progress -------------------------------------------------------------------------
cmd_progress() {
  (($# == 0)) || usage_error "progress takes no arguments"
  local labs=() lab total left written done_count=0 status next log outcome device label settings
  local labels outcomes logs verdict
  mapfile -t labs < <(labs_present)
  if ((${#labs[@]} == 0)); then say "$(labs_sentence)"; return 0; fi
  LAB_SIM_DEFAULT=1 LAB_SIM_BESIDE=1
  printf '%-20s %-26s %s\n' "lab" "status" "next"
  for lab in "${labs[@]}"; do
    LAB=$lab
    LAB_NN=${lab%%_*}
    total=$(lab_steps | wc -l)
    left=$(steps_left | wc -l)
    written=$((total - left))
    next=""
    # Each lab on its own: one that does not build does not hide the others.
    if ! try_build "$PRESET" "check$LAB_NN"; then
      status="does not build"
      next=$(first_error "$BUILD_LOG")
    elif ((written == 0)); then
      status="not started (0 of $total steps)"
      next="step $(steps_left | head -n1): ./lab hint $LAB_NN"
    else
      mkdir -p "$LOG_DIR/lab-logs"
      labels="" outcomes="" logs=""
      # The runs in order, up to the first that neither passed nor was skipped.
      while read -r label device settings; do
        log=$LOG_DIR/lab-logs/progress-$lab-${label/:/}.log.$$
        read -ra settings <<<"$settings"
        outcome=$(run_check_on "build/$PRESET/labs/$lab/check$LAB_NN" "$device" "$log" "${settings[@]}")
        labels+=$label$'\n' outcomes+=$outcome$'\n' logs+=$log$'\n'
        [[ $outcome == pass || $outcome == skipped ]] || break
      done < <(check_runs)
      CHECK_LABELS=() CHECK_OUTCOMES=() CHECK_LOGS=() CHECK_SETTINGS=() KERNELS_VERDICT=""
      if verdict=$(check_verdict "${labels%$'\n'}" "${outcomes%$'\n'}" "${logs%$'\n'}") &&
        kernels_after_check "${labels%$'\n'}" 0; then
        status="done"
        done_count=$((done_count + 1))
      else
        status="$written of $total steps written"
        [[ -z $KERNELS_VERDICT || $KERNELS_VERDICT == clean ]] || verdict=$KERNELS_VERDICT
        next=${verdict#not yet — }
        # progress shows no log: "(below)" would point at nothing
        next=${next// (below)/}
        next=${next//(below; /(}
      fi
      while read -r log; do
        [[ -n $log ]] && mv -f "$log" "${log%.$$}"
      done < <(printf '%s' "$logs"; printf '%s\n' "${CHECK_LOGS[@]}")
    fi
    printf '%-20s %-26s %s\n' "$lab" "$status" "$next"
  done
  echo "${done_count} of ${#labs[@]} labs done."
}

# ---- hint -----------------------------------------------------------------------------

# Hint number $2 of step $1 from labs/$LAB/hints.md ("## Step 3: ..." sections of
# numbered items); prints nothing when there is no such hint.
hint_text() {
  awk -v step="$1" -v want="$2" '
    /^## Step / { inside = ($3 + 0 == step); n = 0; next }
    inside && /^[0-9]+\. / { n++; if (n == want) { sub(/^[0-9]+\. /, ""); printing = 1; print; next } printing = 0; next }
    inside && printing && /^ +[^ ]/ { sub(/^ +/, ""); print; next }
    { printing = 0 }' "labs/$LAB/hints.md"
}

hint_count() {
  awk -v step="$1" '/^## Step / { inside = ($3 + 0 == step); next } inside && /^[0-9]+\. / { n++ } END { print n + 0 }' \
    "labs/$LAB/hints.md"
}

cmd_hint() {
  (($# >= 1 && $# <= 2)) || usage_error "hint: ./lab hint NN [STEP] (e.g. ./lab hint 04, ./lab hint 04 6)"
  resolve_lab "$1"
  local step=${2:-} count level state
  [[ -f labs/$LAB/hints.md ]] || die "lab $LAB_NN has no hints (labs/$LAB/hints.md)."
  if [[ -z $step ]]; then
    step=$(steps_left | head -n1)
    if [[ -z $step ]]; then
      say "every step of lab $LAB_NN is written. ./lab check $LAB_NN says whether it is done, or which claim still fails;"
      say "./lab hint $LAB_NN STEP gives the hints of one step."
      return 0
    fi
  fi
  [[ $step =~ ^[0-9]+$ ]] || usage_error "hint: STEP is a number, e.g. ./lab hint $LAB_NN 2"
  count=$(hint_count "$step")
  ((count > 0)) || die "lab $LAB_NN has no hints for step $step (its steps: $(lab_steps | paste -sd' ' -))."
  # Each call shows one more: a nudge first, then the calls to look up, never the code.
  if mkdir -p build 2>/dev/null && [[ -w build ]]; then
    state=build/.hints-$LAB-$step
  else
    set_log_dir "$PRESET"
    state=$LOG_DIR/.hints-$LAB-$step
  fi
  level=$(($(cat "$state" 2>/dev/null || echo 0) + 1))
  ((level <= count)) || level=$count
  echo "$level" >"$state"
  echo "lab $LAB_NN, step $step, hint $level of $count:"
  hint_text "$step" "$level" | fold -s -w 88 | sed 's/^/  /'
  if ((level < count)); then
    echo "(./lab hint $LAB_NN $step again for the next one; the README's step $step explains the idea)"
  else
    echo "(that was the last hint for step $step; the README's step $step and lab.h say the rest)"
  fi
}

# ---- watch ----------------------------------------------------------------------------

# The newest modification time of the student's files of lab $LAB.
lab_files_stamp() {
  stat -c %Y "labs/$LAB"/lab.c "labs/$LAB"/*.cuh 2>/dev/null | sort -n | tail -n1
}

cmd_watch() {
  (($# == 1)) || usage_error "watch: ./lab watch NN (re-runs ./lab check NN whenever you save lab.c)"
  resolve_lab "$1"
  local last="" now
  say "watching labs/$LAB/lab.c: every save re-runs ./lab check $LAB_NN. Ctrl-C stops."
  while :; do
    now=$(lab_files_stamp)
    if [[ $now != "$last" ]]; then
      last=$now
      printf '\n==== %s ====\n' "$(date +%H:%M:%S)"
      (cmd_check "$LAB_NN") || true
    fi
    if command -v inotifywait >/dev/null 2>&1; then
      inotifywait -qq -t 60 -e close_write,moved_to,create "labs/$LAB" 2>/dev/null || true
    else
      sleep 1
    fi
  done
}
