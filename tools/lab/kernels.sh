# kernels.sh: the simulated GPU's kernel tools from the lab driver (sourced by
# ./lab): `./lab check NN --kernels` (its target, kernels_check_target) and
# `./lab profile NN`. The programs are the lab's own, with their kernel
# launchers built for the kernel sanitizer and profiler (cmake/kernel_tools.cmake):
# checkNN-kernels, labNN-kernels and their -solution twins.

# The check target for ./lab check NN [--solution] --kernels.
kernels_check_target() {
  local solution=$1
  if ((solution)); then echo "check$LAB_NN-solution-kernels"; else echo "check$LAB_NN-kernels"; fi
}

# Whether this build has the kernel tools; says why not otherwise.
kernels_available() {
  local cache=build/$PRESET/CMakeCache.txt
  configure_only "$PRESET" # makes the build folder and its logs' place on a fresh checkout
  # a build configured before the kernel tools, or the list of the labs with
  # a kernels claim, existed: configure it again
  grep -q '^LABKIT_HAVE_KERNEL_TOOLS:' "$cache" && [[ -f build/$PRESET/kernels-claims.txt ]] ||
    cmake "build/$PRESET" >/dev/null 2>&1 || true
  if ! grep -q '^LABKIT_HAVE_KERNEL_TOOLS:INTERNAL=ON' "$cache" 2>/dev/null; then
    say "the kernel tools are not in this build ($PRESET): the configure summary says why (\"kernel tools\")."
    return 1
  fi
}

# The labs whose check has a kernels claim (labkit/check_kernels.h), "04 07
# ...": those the configure made a checkNN-kernels program for, as it wrote
# them down (cmake/kernel_tools.cmake), so that the driver and CMake cannot
# disagree. None in a build without the kernel tools (the list is empty).
kernels_claim_labs() {
  local labs=""
  [[ -r build/$PRESET/kernels-claims.txt ]] && read -r labs <"build/$PRESET/kernels-claims.txt"
  printf '%s\n' "$labs"
}

# Whether lab $1 (NN) is one of kernels_claim_labs.
kernels_claim_has() {
  [[ " $(kernels_claim_labs) " == *" $1 "* ]]
}

# Whether ./lab check NN --kernels can run: the kernel tools are in this build
# and the lab's check has a kernels claim; says why not.
kernels_check_ready() {
  kernels_available || return 1
  if ! kernels_claim_has "$LAB_NN"; then
    say "lab $LAB_NN's check has no kernels claim: ./lab check NN --kernels is for labs $(kernels_claim_labs) (./lab profile $LAB_NN counts its kernels' traffic, if it has any)."
    return 1
  fi
}

# ./lab profile NN [--solution] [-- ARGS]: the lab's experiment with its kernels
# counted (requests, sectors, bank conflicts, barriers, divergent branches,
# atomics: labkit/kernel_profile.h), on sim:0 and --quick unless ARGS say
# otherwise; the table comes at the end, with the sanitizer's summary.
cmd_profile() {
  local lab_arg="" solution=0 args=() target exe
  while (($# > 0)); do
    case $1 in
      --solution) solution=1 ;;
      --) shift; args=("$@"); break ;;
      -*) usage_error "profile: unknown option '$1' (the program's own flags go after --)" ;;
      *)
        [[ -z $lab_arg ]] || usage_error "profile: one lab at a time ('$lab_arg' and '$1')"
        lab_arg=$1 ;;
    esac
    shift
  done
  [[ -n $lab_arg ]] || usage_error "profile: which lab? e.g. ./lab profile 04"
  resolve_lab "$lab_arg"
  target=lab$LAB_NN-kernels
  if ((solution)); then
    need_solution
    target=lab$LAB_NN-solution-kernels
  fi
  ((${#args[@]} > 0)) || args=(--device sim:0 --quick)
  LAB_SIM_DEFAULT=1 LAB_SIM_BESIDE=1
  kernels_available || return 1
  if ! try_build "$PRESET" "$target"; then
    if grep -q "No rule to make target" "$BUILD_LOG"; then
      say "lab $LAB_NN has no kernels of its own to profile (labs with kernels: 04, 07, 08, 09)."
    else
      say "lab $LAB_NN: it does not build: $(first_error "$BUILD_LOG")"
    fi
    return 1
  fi
  exe=build/$PRESET/labs/$LAB/$target
  say "profiling lab $LAB_NN's kernels (${args[*]}): every load and store is counted, so it runs several times slower"
  cd "$CALLER_DIR"
  LABKIT_KERNEL_PROFILE=1 exec "$ROOT/$exe" "${args[@]}"
}

# The verdict of ./lab check NN --kernels (check_verdict's arguments): the
# kernels claim holds on a simulated GPU, the only device it watches (the cpu
# and a real GPU are skipped there, which check_verdict would call "not yet").
kernels_verdict() {
  local labels=() outcomes=() logs=() i watched=()
  mapfile -t labels <<<"$1"
  mapfile -t outcomes <<<"$2"
  mapfile -t logs <<<"$3"
  for i in "${!labels[@]}"; do
    case ${outcomes[i]} in
      pass) [[ ${labels[i]} == sim:* ]] && watched+=("${labels[i]}") ;;
      skipped) ;;
      *) echo "not yet — $(next_step_line "${labels[i]}" "${outcomes[i]}" "${logs[i]}")"; return 1 ;;
    esac
  done
  if ((${#watched[@]} == 0)); then
    echo "not yet — no simulated GPU was checked, and the kernel sanitizer watches kernels there: unset LABKIT_SIM_GPUS (./lab then simulates two) or give it 1 or more"
    return 1
  fi
  echo "done (your kernels run clean under the kernel sanitizer on $(joined "${watched[@]}"))"
}
