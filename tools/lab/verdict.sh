# verdict.sh: what one run of a lab's check came to, and the one line that
# says what to do next (sourced by ./lab; the kit's tests source it alone).
# Uses LAB (NN_name) and LAB_NN, and ROOT to shorten paths.

# What starts each line of a crash report of one of lab 10's ranks,
# "[rank 3] " (labkit/crash.h): an extended regular expression without
# backslashes, the same for bash, grep, sed and awk (awk reads -v values'
# backslashes as escapes).
RANK_PREFIX='[[]rank [0-9]+[]] '

# Runs check program $1 on device $2 into log $3, with the settings that follow
# (VAR=value) in its environment; prints the outcome word: pass, todo, fail,
# sanitizer, crash, skipped, timeout, or "error N".
run_check_on() {
  local exe=$1 device=$2 log=$3 rc=0 settings=()
  (($# <= 3)) || settings=(env "${@:4}")
  # A lab whose programs a launcher starts (lab 10: mpiexec, LABKIT_RANKS
  # ranks) has it beside them (LAB_LAUNCHER, labs/CMakeLists.txt).
  local launcher=()
  [[ -x ${exe%/*}/launch ]] && launcher=("${exe%/*}/launch")
  timeout --foreground 600 "${settings[@]}" "${launcher[@]}" "$exe" --device "$device" </dev/null >"$log" 2>&1 || rc=$?
  check_outcome "$rc" "$log"
}

# The outcome word of a check that exited with $1 and wrote log $2. (The
# logs are read by bash itself here and below: these run for every device of
# every check, and starting a program costs more than reading a short log.)
check_outcome() {
  local rc=$1 log=$2 line sanitizer=0 todo=0 crash=0 summary=0
  while IFS= read -r line; do
    [[ $line =~ ^==[0-9]+==ERROR:\ [A-Za-z]+Sanitizer || $line == *": runtime error: "* ]] && sanitizer=1
    [[ $line == *"TODO: "* ]] && todo=1
    [[ $line =~ ^($RANK_PREFIX)?crash:\  ]] && crash=1
    [[ $line =~ ^[0-9][0-9]_[a-z0-9_]+\ on\ [^\ ]+:\ PASS\ \( ]] && summary=1
  done <"$log"
  # A pass is the check's own: its last line says so (check_finish). A lab.c
  # that ends the program early (exit(0) in a constructor) exits 0 too.
  if ((rc == 0 && !summary)); then
    echo "error 0"
    return
  fi
  # AddressSanitizer, LeakSanitizer and UBSan end the program with 1, as a
  # failed claim would: what they found comes first.
  if ((sanitizer && rc != 0 && rc != 77)); then
    echo sanitizer
    return
  fi
  case $rc in
    0) echo pass ;;
    1) if ((todo)); then echo todo; else echo fail; fi ;;
    77) echo skipped ;;
    124) echo timeout ;;
    *) if ((crash)); then echo crash; else echo "error $rc"; fi ;;
  esac
}

# A path of the kit as the student sees it: labs/04_matmul/lab.c, not /home/.../labs/...
kit_path() {
  local p=$1
  p=${p#"$ROOT"/}
  printf '%s\n' "$p"
}

# awk: whether "path:line" is one of the student's files of the lab, lab.c or
# a .cuh of labs/NN_name/, wherever the kit is (a path may keep its root).
STUDENT_FILE_AWK='
  function student(path,    at) {
    at = index(path, lab)
    if (at == 0 || (at > 1 && substr(path, at - 1, 1) != "/")) return 0
    path = substr(path, at + length(lab))
    return path ~ /^lab\.c:[0-9]/ || path ~ /^[^\/]*\.cuh:[0-9]/
  }
  function unroot(text,    at) {
    while (root != "/" && (at = index(text, root)) > 0)
      text = substr(text, 1, at - 1) substr(text, at + length(root))
    return text
  }
'

# The frame of a crash report (labkit/crash.h) to show: the first one in the
# student's own files (labs/NN_name/lab.c or a .cuh of the lab), else the
# first. The report: "crash: ...", "where ...", then "  <function> at <path>:<line>"
# a line, innermost first (and maybe a "gpu thread: ..." line); each line of
# a rank of lab 10 starts with "[rank N] ".
crash_frame() {
  awk -v lab="labs/$LAB/" -v root="$ROOT/" -v rank="^$RANK_PREFIX" "$STUDENT_FILE_AWK"'
    { sub(rank, "") }
    /^where/ { inside = 1; next }
    inside && /^ *gpu thread:/ { next }
    inside && /^  +[^ ].* at [^ ]+:[0-9]+/ {
      line = $0
      sub(/^ +/, "", line)
      sub(/^\(inlined by\) /, "", line)
      line = unroot(line)
      sub(/ \(discriminator [0-9]+\)$/, "", line)
      if (first == "") first = line
      at = index(line, " at ")
      path = substr(line, at + 4)
      if (mine == "" && student(path)) mine = line
      next
    }
    inside { inside = 0 }
    END { print (mine != "" ? mine : first) }' "$1"
}

# The simulated GPU's thread of a crash in a kernel, when the report names it.
crash_gpu_thread() {
  grep -m1 -E "^($RANK_PREFIX)? *gpu thread:" "$1" | sed -E -e "s/^($RANK_PREFIX)? *//" || true
}

# What a sanitizer found, in one line: "AddressSanitizer: heap-buffer-overflow,
# in lab_matmul_ikj at labs/04_matmul/lab.c:41" (its first report; the frame in
# the student's files, else the first in the kit, else the first).
sanitizer_line() {
  local log=$1 ubsan
  if grep -q -E '^==[0-9]+==ERROR: [A-Za-z]+Sanitizer' "$log"; then
    awk -v lab="labs/$LAB/" -v root="$ROOT/" "$STUDENT_FILE_AWK"'
      function frame_text(f) { return (leak ? "allocated in " : "in ") f }
      !seen && /^==[0-9]+==ERROR: [A-Za-z]+Sanitizer/ {
        seen = 1
        what = $0
        sub(/^==[0-9]+==ERROR: /, "", what)
        sub(/ on (unknown )?address.*/, "", what)
        sub(/ \(pc .*/, "", what)
        leak = what ~ /LeakSanitizer/
        next
      }
      seen && !done && /^ +#[0-9]+ 0x[0-9a-f]+ in / {
        line = $0
        sub(/^ +#[0-9]+ 0x[0-9a-f]+ in /, "", line)
        n = split(line, part, " ")
        function_name = part[1]
        path = part[n]
        if (path ~ /:[0-9]+:[0-9]+$/) sub(/:[0-9]+$/, "", path) # file:line:column
        if (path !~ /:[0-9]+$/) next                            # no source: a library
        in_kit = index(path, root) == 1
        path = unroot(path)
        f = function_name " at " path
        if (first == "") first = f
        if (kit == "" && in_kit) kit = f
        if (mine == "" && student(path)) mine = f
        next
      }
      seen && /^$/ && first != "" { done = 1 }
      END {
        f = mine != "" ? mine : (kit != "" ? kit : first)
        print what (f != "" ? ", " frame_text(f) : "")
      }' "$log"
    return
  fi
  # UBSan: "path:line:column: runtime error: what"
  ubsan=$(grep -m1 ': runtime error: ' "$log" || true)
  local where=${ubsan%%: runtime error: *} what=${ubsan#*: runtime error: }
  where=$(kit_path "$where")
  printf 'UndefinedBehaviorSanitizer: %s, at %s\n' "$what" "${where%:*}"
}

# The line of a failed CHECK() in a check, when no claim was named:
# "labs/02_copying/check.c:57: lab_x(...) failed (STATUS_BAD_ARGUMENT): <message>".
failed_call_line() {
  grep -m1 -E '^[^ ]+:[0-9]+: .* failed \(STATUS_[A-Z_]+\)' "$1" | cut -c1-300 || true
}

# One line saying what to do next, from the first device that did not pass.
next_step_line() {
  local device=$1 outcome=$2 log=$3 line where thread
  case $outcome in
    todo) line=$(grep -m1 -o 'TODO:.*' "$log" | sed 's/^TODO:[[:space:]]*//')
      # A TODO in an earlier lab that this one uses (lab 10 trains with lab
      # 05's backward pass) is a step of that lab: its hints, not this lab's,
      # which would say every step is written.
      if [[ $line =~ labs/([0-9][0-9])_[^/]*/ && ${BASH_REMATCH[1]} != "$LAB_NN" ]]; then
        echo "$line; lab $LAB_NN uses your lab ${BASH_REMATCH[1]}: ./lab hint ${BASH_REMATCH[1]} gives a nudge"
      else
        echo "$line; ./lab hint $LAB_NN gives a nudge"
      fi ;;
    fail)
      line=$(grep -m1 '^  FAIL' "$log" | sed -e 's/^  FAIL  //' -e 's/: .*//' || true)
      if [[ -n $line ]]; then
        echo "on $device: \"$line\" does not hold (below)"
        return
      fi
      line=$(failed_call_line "$log")
      if [[ -n $line ]]; then
        echo "on $device: a call failed: $line"
      else
        echo "on $device: the check failed (exit status 1) without naming a claim; its output is below"
      fi ;;
    sanitizer) echo "on $device: $(sanitizer_line "$log") (below)" ;;
    crash)
      where=$(crash_frame "$log")
      thread=$(crash_gpu_thread "$log")
      echo "it crashed on $device, in ${where:-a place the report could not name}${thread:+ ($thread)}" \
        "(below; ./lab check $LAB_NN --asan finds every bad access)" ;;
    timeout) echo "on $device it ran for 10 minutes without finishing (an endless loop?)" ;;
    "error 0") echo "on $device the check ended before its last line, which says whether every claim holds" \
      "(exit status 0, no summary): does your lab.c end the program itself (exit)?" ;;
    *) # the first line that says something of the stop: not a blank one, nor a claim that held
      line=$(grep -m1 -v -E '^[[:space:]]*$|^  ok  ' "$log" | cut -c1-300 || true)
      echo "on $device the check stopped with ${outcome/error /exit status }${line:+: $line}" ;;
  esac
}

# What a device's run came to, in a few words: "PASS (28 claims hold)".
outcome_summary() {
  local line summary="" reason="" sanitizer=""
  while IFS= read -r line; do
    [[ -z $summary && $line =~ :\ ((PASS|FAIL)\ \(.*)$ ]] && summary=${BASH_REMATCH[1]}
    [[ -z $reason && $line == "skipped: "* ]] && reason=${line#skipped: }
    [[ -z $sanitizer && $line =~ ([A-Za-z]+Sanitizer) ]] && sanitizer=${BASH_REMATCH[1]}
  done <"$2"
  case $1 in
    todo) echo "stopped at a TODO" ;;
    crash) echo "crashed" ;;
    sanitizer) echo "stopped by ${sanitizer:-a sanitizer}" ;;
    skipped) echo "skipped, not checked (${reason:-its device is absent})" ;;
    *) echo "${summary:-$1}" ;;
  esac
}

# The lines of a check's log worth showing without -v: the claims, and
# whatever a failure, a crash or a sanitizer printed about itself (60 at most).
log_highlights() {
  local line whole n=0
  while IFS= read -r line && ((n < 60)); do
    # A rank's crash report: its lines, shown whole, judged without "[rank N] ".
    whole=$line
    [[ $line =~ ^$RANK_PREFIX(.*)$ ]] && line=${BASH_REMATCH[1]}
    if [[ $line =~ ^\ \ (ok|FAIL)\  || $line == "        "* || $line == "TODO: "* ||
      $line =~ ^\ *[a-z][a-z0-9_./]*\.c:[0-9]+:\  || $line == "crash: "* || $line == "where "* ||
      $line =~ ^\ \ [A-Za-z_].*\ at\  || $line =~ ^\ *gpu\ thread: || $line == "next: "* ||
      $line == "skipped: "* || $line =~ ERROR:\ [A-Za-z]+Sanitizer || $line =~ ^\ +#[0-9]+\ 0x ||
      $line == *": runtime error: "* || $line == "SUMMARY: "* || $line == *"is not tried"* ]]; then
      printf '  %s\n' "$whole"
      n=$((n + 1))
    fi
  done <"$1"
}

# "N claims were not tried here (on <label>: <the first one's words>)" from
# the passed device runs given as "label<TAB>log" pairs, or nothing. The runs
# on a device only (check_verdict picks them): a lab's other environments
# (cpu.onegpu) take GPUs away on purpose, and the device runs try what those
# leave out.
untried_claims() {
  local run label log count=0 first="" line
  for run in "$@"; do
    IFS=$'\t' read -r label log <<<"$run"
    while IFS= read -r line; do
      count=$((count + 1))
      [[ -n $first ]] || first="on $label: $(sed -E 's/^ *\(?//; s/\)$//' <<<"$line")"
    done < <(grep -e 'is not tried' "$log" 2>/dev/null)
  done
  ((count == 0)) || echo "$count claim$( ((count == 1)) || echo s) $( ((count == 1)) && echo was || echo were) not tried here ($first)"
}

# "a, b, c" from the arguments.
joined() {
  local IFS=,
  local text="$*"
  echo "${text//,/, }"
}

# The verdict of a check's runs: labels "$1" (newline-separated, as in
# check_runs: cpu, sim:0, cuda:0, cpu.<environment>), outcomes "$2" and logs "$3"
# in the same order. "done (...)" only when every run that was not skipped
# passed, the cpu's among them, and at least one GPU's (real or simulated),
# and every claim was tried: a skipped device is never counted as a pass, nor
# a claim the machine could not try (its line says "... is not tried", as
# where a claim needs two GPUs of one kind and there is one). Otherwise the
# next step.
check_verdict() {
  local labels=() outcomes=() logs=() i cpu=0 gpu=0 passed=() skipped=() device_runs=()
  mapfile -t labels <<<"$1"
  mapfile -t outcomes <<<"$2"
  mapfile -t logs <<<"$3"
  for i in "${!labels[@]}"; do
    case ${outcomes[i]} in
      pass)
        passed+=("${labels[i]}")
        [[ ${labels[i]} == *.* ]] || device_runs+=("${labels[i]}"$'\t'"${logs[i]}")
        [[ ${labels[i]} == cpu ]] && cpu=1
        [[ ${labels[i]} == sim:* || ${labels[i]} == cuda:* ]] && gpu=1 ;;
      skipped) skipped+=("${labels[i]}") ;;
      *) echo "not yet — $(next_step_line "${labels[i]}" "${outcomes[i]}" "${logs[i]}")"; return 1 ;;
    esac
  done
  if ((cpu && gpu)); then
    local untried
    untried=$(untried_claims "${device_runs[@]}")
    if [[ -n $untried ]]; then
      echo "not yet — every claim tried holds on $(joined "${passed[@]}"), but $untried;" \
        "unset LABKIT_SIM_GPUS (./lab then gives the checks two simulated GPUs) or set it to 2"
      return 1
    fi
    echo "done (every claim holds on $(joined "${passed[@]}"))"
    return 0
  fi
  local missing
  if ((!cpu)); then missing="the cpu was not checked"; else missing="no GPU, real or simulated, was checked"; fi
  if ((${#skipped[@]} > 0)); then
    missing+=" (skipped: $(joined "${skipped[@]}"))"
  elif ((!gpu)); then
    missing+=" (LABKIT_SIM_GPUS=${LABKIT_SIM_GPUS:-0} and no NVIDIA GPU here)"
  fi
  echo "not yet — $missing, and done needs the cpu and a GPU: unset LABKIT_SIM_GPUS (./lab then simulates two) or set it to 2 (some claims need two GPUs of one kind)"
  return 1
}
