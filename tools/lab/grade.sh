# grade.sh: ./lab grade, a class's submissions checked by the kit's own checks
# (sourced by ./lab; run by itself, it is the sandbox's inner part).
#
# The kit is built once (build/<preset>, the checks of the labs graded), then
# copied into an image that holds only what a submission's build needs: labs/
# and common/ (sources and headers, no solutions/), the prebuilt objects and
# libraries the checks link, and one build script per lab. Each submission's
# lab.c (and its kernels) is compiled and linked against those objects in a
# sandbox that sees the image in place of the kit, its own folder, and the
# system's /usr, /etc, /dev and /sys, nothing else: a mount, network and PID
# namespace (unshare), a chroot, a user id of its own per slot (so that a
# process limit caps a fork bomb), a time and a memory limit per step.

# The uids of a grading's slots and its unpacker: a range of its own, from
# the grading's process id, so that two gradings at once never share a uid (a
# slot's sweep, kill -9 -1 as its uid, would end the other's checks, and its
# process limit would count them). PIDs stay below 2^22, so every uid lies
# between 2 000 000 000 and 4 147 483 135 (under 2^32 - 1): no account has one.
GRADE_UID_BASE=2000000000
GRADE_UID_RANGE=512  # slots 0..510 and the unpacker, GRADE_UID_RANGE - 1
grade_uid_of() { echo $((GRADE_UID_BASE + $$ * GRADE_UID_RANGE + $1)); }

grade_usage() {
  cat <<'EOF'
usage: ./lab grade SUBMISSIONS [--labs 01,04] [--devices cpu,sim:0] [-j N] [--out DIR]
                   [--timeout S] [--build-timeout S] [--memory SIZE] [--processes N]
  SUBMISSIONS  a folder with one folder or archive (.tar.gz, .tgz, .tar.bz2, .tar.xz,
               .tar, .zip) per student,
               holding labs/NN_name/lab.c and the lab's kernel files (README, "Grading a class")
  --labs       the labs to grade (default: every lab a submission has a file for)
  --devices    default: cpu,sim:0, and cuda:0 where there is an NVIDIA GPU; a list must
               name the cpu (done needs its run, and a GPU's where one is named)
               (labs 04, 07 and 09, with sim:0: also their check under the kernel
               sanitizer there, the run sim:0.kernels, as ./lab check judges them)
  -j N         checks at once (default: the cores here)
  --out DIR    where the grades go (default: build/grade): grades.csv, grades.json,
               grades.xml (JUnit), grades.txt, and each check's log under logs/
  --timeout S  seconds per check run (default 300); --build-timeout S: per build (120)
  --memory     data (heap) per process (default 4G, at least 256M); --processes: per
               slot (default 256, at least 16)
EOF
}

# The least --memory (KiB) and --processes a build runs under: a compiler
# needs them (lab 04's nvcc builds under 256M and 16 processes).
GRADE_MIN_KIB=262144 GRADE_MIN_PROCS=16

# A size with K, M or G in KiB, for ulimit -d.
grade_kib() {
  [[ $1 =~ ^([0-9]+)([KMG]?)$ ]] || return 1
  local n=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in
    K) echo "$n" ;;
    M) echo $((n * 1024)) ;;
    G) echo $((n * 1024 * 1024)) ;;
    *) echo $((n / 1024)) ;;
  esac
}

# The line that ends a step's log cut at 256 KiB (grade_sandbox's keep_log).
GRADE_CUT="grade: the output was cut at 256 KiB"

# The isolation this machine allows: "namespaces" (root, unshare works: the
# sandbox above), else "none", and ./lab grade then runs no submission.
grade_isolation() {
  if (($(id -u) == 0)) && unshare --mount --net --pid --fork true 2>/dev/null && command -v setpriv >/dev/null; then
    echo namespaces
  else
    echo none
  fi
}

# The student's files of lab $1: lab.c and the kernels its README's table of
# files calls **yours** ("| `naive_kernel.cuh` | **yours**: ...").
grade_student_files() {
  echo lab.c
  grep -oE '^\| `[A-Za-z0-9_.-]+\.cuh` \| \*\*yours\*\*' "labs/$1/README.md" 2>/dev/null | cut -d'`' -f2 || true
}

# A student's name from a submission's file name: letters, digits, . _ - only.
grade_student_name() {
  local name=${1##*/}
  name=${name%.tar.gz}
  name=${name%.tgz}
  name=${name%.tar.bz2}
  name=${name%.tar.xz}
  name=${name%.tar}
  name=${name%.zip}
  name=${name//[^A-Za-z0-9._-]/_}
  [[ $name == .* ]] && name=_${name#.}
  echo "$name"
}

# Whether file $1 is an archive a student may hand in (GRADE_ARCHIVES, said).
GRADE_ARCHIVES=".tar.gz, .tgz, .tar.bz2, .tar.xz, .tar, .zip"
grade_is_archive() {
  case $1 in *.tar.gz | *.tgz | *.tar.bz2 | *.tar.xz | *.tar | *.zip) return 0 ;; esac
  return 1
}

# Why an archive could not be unpacked: the first line of the unpacker's log $1
# that says something (not blank, as gzip's first line is; not tar's
# "Removing leading /", nor unzip's "[archive]").
grade_unpack_error() {
  local line
  line=$(grep -v -m1 -E -e '^[[:space:]]*$' -e 'Removing leading' -e '^\[.*\]$' "$1" || true)
  line=${line#"${line%%[![:space:]]*}"}
  printf '%s\n' "${line:-the unpacker said nothing}" | tr '\t' ' ' | cut -c1-200
}

# Unpacks or copies submission $1 into $2 (its labs/ folder), keeping only
# the student's files (GRADE_FILES: labs/NN_name/lab.c ...), and only regular
# files reached through folders, never through a link (labs/04_matmul ->
# the kit's solutions/ would hand in the answer); says in $2.ignored what
# else it held. An archive is unpacked by a user of its own (the last uid of
# the grading's range), with a limit of 64 MiB a file: it can write nowhere else.
grade_unpack() {
  local src=$1 dest=$2 tmp top unpacker=$(grade_uid_of $((GRADE_UID_RANGE - 1))) found
  # Where the unpacker can reach (the output folder is the instructor's alone).
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/labkit-grade-unpack.XXXXXX")
  rm -rf "$dest"
  mkdir -p "$dest"
  as_unpacker() { (ulimit -f 131072 && exec setpriv --reuid "$unpacker" --regid "$unpacker" --clear-groups -- "$@"); }
  case $src in
    *.tar.gz | *.tgz | *.tar.bz2 | *.tar.xz | *.tar)
      # Read from a pipe, tar cannot tell the compression itself: said by name.
      local z=()
      case $src in *.tar.gz | *.tgz) z=(-z) ;; *.tar.bz2) z=(-j) ;; *.tar.xz) z=(-J) ;; esac
      chown "$unpacker:$unpacker" "$tmp"
      as_unpacker tar "${z[@]}" -xf - -C "$tmp" --no-same-owner --no-same-permissions <"$src" >"$dest.unpack-log" 2>&1 ||
        echo "the archive could not be unpacked whole: $(grade_unpack_error "$dest.unpack-log")" >"$dest.problem" ;;
    *.zip)
      if command -v unzip >/dev/null; then
        cp "$src" "$tmp/.handin.zip" && chown "$unpacker:$unpacker" "$tmp" "$tmp/.handin.zip"
        as_unpacker unzip -qq -o "$tmp/.handin.zip" -d "$tmp" >"$dest.unpack-log" 2>&1 ||
          echo "the archive could not be unpacked whole: $(grade_unpack_error "$dest.unpack-log")" >"$dest.problem"
        rm -f "$tmp/.handin.zip"
      else
        echo "a .zip, and unzip is not installed here (apt-get install unzip)" >"$dest.problem"
      fi ;;
    *) cp -R --no-preserve=ownership,mode "$src/." "$tmp/" 2>/dev/null || true ;;
  esac
  # Handed in as labs/... or in a folder holding labs/ (the shallowest; never
  # a zip's __MACOSX/).
  top=$tmp
  if [[ ! -d $tmp/labs || -L $tmp/labs ]]; then
    top=$(find "$tmp" -maxdepth 3 -type d -name labs ! -path '*/__MACOSX/*' -printf '%d %h\n' | sort -n | head -n1 | cut -d' ' -f2-)
    [[ -n $top ]] || top=$tmp
  fi
  # Every file but folders, "<type> <path>", found without following a link:
  # only regular files ("f") can be the student's.
  found=$'\n'$(cd "$top" && find . ! -type d -printf '%y %P\n')$'\n'
  local file line kept=() ignored=()
  for file in "${GRADE_FILES[@]}"; do
    if [[ $found == *$'\n'"f $file"$'\n'* ]]; then
      mkdir -p "$dest/${file%/*}"
      cp "$top/$file" "$dest/$file"
      kept+=("$file")
    fi
  done
  while IFS= read -r line; do
    [[ -n $line && " ${kept[*]} " != *" ${line#? } "* ]] || continue
    if [[ $line == 'l '* ]]; then ignored+=("${line#? } (a link)"); else ignored+=("${line#? }"); fi
  done <<<"$found"
  if ((${#ignored[@]} > 0)); then printf '%s\n' "${ignored[@]}" | sort >"$dest.ignored"; else : >"$dest.ignored"; fi
  rm -rf "$tmp"
}

# ---- the image: what a submission's build and check may see of the kit --------

# Whether the kit is a git checkout with a commit (its image is then made of
# the last commit's labs/ and common/).
grade_git_kit() {
  [[ $(git rev-parse --show-toplevel 2>/dev/null) == "$ROOT" ]] && git rev-parse -q --verify HEAD >/dev/null
}

# The labs' files that a student writes, lab.c and the kernels (.cuh, .cu),
# that differ from the last commit, one a line. The skeleton that stands in
# for a lab not handed in (an earlier lab a lab links: LAB_USES) is the kit's
# build of these, the working tree's: one changed there (a solution copied
# in) would be linked into the students' checks, and read as their work.
grade_edited_skeletons() {
  grade_git_kit || return 0
  git diff --name-only HEAD -- 'labs/*/lab.c' 'labs/*/*.cuh' 'labs/*/*.cu'
}

# The link command of target $1 in build directory $2, and the directory it runs
# in, as two lines (Makefiles: link.txt; Ninja: its commands).
grade_link_command() {
  local target=$1 build=$2 file=$2/labs/CMakeFiles/$1.dir/link.txt
  if [[ -f $file ]]; then
    echo "$ROOT/$build/labs"
    head -n1 "$file"
  elif [[ -f $build/build.ninja ]]; then
    echo "$ROOT/$build"
    ninja -C "$build" -t commands "$target" | tail -n1 | sed -e 's/^: && //' -e 's/ && :$//'
  else
    return 1
  fi
}

# The words of a link command run in directory $1 (the rest), one a line, a
# response file's (@file: Makefiles name a CUDA link's objects in one) in its
# place, so that the image's build names each object itself.
grade_link_words() {
  local dir=$1 word more=()
  shift
  for word in "$@"; do
    if [[ $word == @* && -f $dir/${word#@} ]]; then
      read -ra more <<<"$(tr '\n' ' ' <"$dir/${word#@}")"
      printf '%s\n' "${more[@]}"
    else
      printf '%s\n' "$word"
    fi
  done
}

# The compile commands of a lab's code, target $1 (lab_code_NN: lab.c and the
# kernel sources; lab_code_tools_NN, lab_launchers_tools_NN: the same for the
# kernel sanitizer), from compile_commands.json in build $2,
# "directory<TAB>command" a line, the command as the shell reads it (JSON's
# escapes undone).
grade_compile_commands() {
  awk -v want="$1.dir/" '
    /^ *"directory": / { dir = $0; sub(/^ *"directory": "/, "", dir); sub(/",?$/, "", dir) }
    /^ *"command": / && index($0, want) {
      cmd = $0; sub(/^ *"command": "/, "", cmd); sub(/",?$/, "", cmd)
      out = ""
      while ((i = index(cmd, "\\")) > 0) { out = out substr(cmd, 1, i - 1) substr(cmd, i + 1, 1); cmd = substr(cmd, i + 2) }
      print dir "\t" out cmd
    }' "$2/compile_commands.json"
}

# Copies file $1 (a path under the kit) into the image $2, at the same place.
grade_image_copy() {
  local path=$1 rel
  rel=${path#"$ROOT"/}
  [[ $rel != /* ]] || return 0 # outside the kit: a system library
  mkdir -p "$2/${rel%/*}"
  cp -p "$ROOT/$rel" "$2/$rel"
}

# Writes the build of a submission's program $3 (check09, check09-kernels) of
# lab $2 into the image $1: $1/.grade/NN/$6 (a script), from the link command
# of the kit's target $3 in build $4, the student's objects in $S/$5, and
# $1/.grade/NN/$7, what the kit's objects of that link define. Each lab's code
# the link names (lab_code_MM: lab.c and its kernels' launchers; for the
# kernel sanitizer's check, lab_code_tools_NN and lab_launchers_tools_NN, the
# same files compiled for the tools) is compiled again from the submission
# with the kit's own commands; the rest is the kit's, copied into the image.
# Prints the labs (MM) whose code the link names, one a line.
grade_build_script() {
  local img=$1 nn=$2 target=$3 build=$4 objdir=$5 script=$1/.grade/$2/$6 symbols=$7 dir cmd token next tokens
  { read -r dir && read -r cmd; } < <(grade_link_command "$target" "$build") ||
    die "grade: no link command of $target in $build (configure it again: rm -rf $build)"
  read -ra tokens <<<"$cmd"
  mapfile -t tokens < <(grade_link_words "$dir" "${tokens[@]}")
  local link=() keys=() kit_objects=() m key
  declare -A code_objects=() code_target=()
  next=""
  for token in "${tokens[@]}"; do
    if [[ $next == o ]]; then
      link+=("\"\$S\"/$target")
      next=""
      continue
    fi
    if [[ $token == -o ]]; then
      link+=(-o)
      next=o
      continue
    fi
    if [[ $token =~ CMakeFiles/(lab_code_([0-9][0-9])|lab_(code|launchers)_tools_([0-9][0-9]))\.dir/ ]]; then
      # A lab's plain code is named by its number (objects_04, obj/04-1.o: as
      # before the kernel sanitizer's build), the tools' by their target.
      if [[ -n ${BASH_REMATCH[2]} ]]; then key=${BASH_REMATCH[2]}; else key=${BASH_REMATCH[1]}; fi
      if [[ " ${keys[*]} " != *" $key "* ]]; then
        keys+=("$key")
        code_target[$key]=${BASH_REMATCH[1]}
        link+=("\$objects_$key")
      fi
      code_objects[$key]+=$'\n'$token
      # The kit's skeleton of an earlier lab stands in where one is not handed in.
      if [[ $token == /* ]]; then grade_image_copy "$token" "$img"; else grade_image_copy "$dir/$token" "$img"; fi
      continue
    fi
    if [[ $token == *.o || $token == *.a ]]; then
      [[ $token == /* ]] || token=$dir/$token
      grade_image_copy "$token" "$img"
      kit_objects+=("$token")
      token=$(printf %q "$token") # the kit's path may hold a space
    fi
    link+=("$token")
  done
  ((${#kit_objects[@]} > 0)) ||
    die "grade: the link command of $target in $build names no object of the kit (configure it again: rm -rf $build)"
  # What the kit defines: a submission may not define it again (a check.c's
  # claim, the library's check_that; the kernel sanitizer's __tsan_* callbacks,
  # which would silence it): its build fails, said so.
  nm -g --defined-only --format=posix "${kit_objects[@]}" 2>/dev/null | awk 'NF >= 3 && $2 ~ /[TDBRVWC]/ { print $1 }' |
    sort -u >"$img/.grade/$nn/$symbols"
  # Every path of the kit in it is quoted (printf %q): a kit whose path holds
  # a space built nothing. The lists of objects hold one a line (IFS).
  {
    echo "#!/bin/sh"
    echo "# The build of a submission's $target, in the sandbox: \$S is its folder."
    echo "S=$(printf %q "$ROOT/.submission")"
    echo "nl='"
    echo "'"
    echo "IFS=\$nl"
    echo "mkdir -p \"\$S/$objdir\" || exit 1"
    echo 'objects=""'
    for key in "${keys[@]}"; do
      local mlab
      m=${key: -2}
      mlab=$(cd labs && echo "$m"_*)
      echo "objects_$key=\"${code_objects[$key]#$'\n'}\""
      echo "if [ -f \"\$S/labs/$mlab/lab.c\" ]; then"
      echo "  objects_$key=\"\""
      local dirc command i=0
      while IFS=$'\t' read -r dirc command; do
        i=$((i + 1))
        # Makefiles give nvcc its include paths in a file (--options-file F):
        # the image needs it where the command looks.
        local options
        while read -r _ options; do
          if [[ $options == /* ]]; then grade_image_copy "$options" "$img"; else grade_image_copy "$dirc/$options" "$img"; fi
        done < <(grep -oE -e '--options-file [^ ]+' <<<"$command")
        command=$(sed -E -e 's/ -MD / /; s/ -MT [^ ]+ / /; s/ -MF [^ ]+ / /' -e "s| -o [^ ]+| -o \"\$S/$objdir/$key-$i.o\"|" <<<"$command")
        echo "  cd $(printf %q "$dirc") && $command || exit 1"
        echo "  objects_$key=\"\$objects_$key\$nl\$S/$objdir/$key-$i.o\""
        echo "  objects=\"\$objects\$nl\$S/$objdir/$key-$i.o\""
      done < <(grade_compile_commands "${code_target[$key]}" "$build")
      echo "fi"
    done
    echo "cd $(printf %q "$dir") || exit 1"
    echo "# Every symbol the submission defines, not weakly, that the kit defines too (a weak"
    echo "# one never wins over the kit's: nvcc's DW.ref.__gxx_personality_v0 is in both)."
    echo "clash=\$(nm -g --defined-only --format=posix \$objects | awk 'NF >= 3 && \$2 ~ /^[TDBRCGS]\$/ { print \$1 }' | sort -u | comm -12 - $(printf %q "$ROOT/.grade/$nn/$symbols") | head -n 5 | tr '\\n' ' ')"
    echo "if [ -n \"\$clash\" ]; then"
    echo "  echo \"grade: your code defines what the kit defines (\${clash% }): a submission may not replace the kit's code; rename yours or make it static\""
    echo "  exit 1"
    echo "fi"
    printf '%s ' "${link[@]}"
    echo
  } >"$script"
  chmod +x "$script"
  for key in "${keys[@]}"; do [[ $key == lab_* ]] || echo "$key"; done
}

# Makes the image $1 for the labs given, from build/$PRESET; writes
# $1/.grade/NN/build.sh, the build of a submission's lab NN, and for the labs
# in GRADE_KERNELS_LABS (NN ..., their checkNN-kernels built) build-kernels.sh,
# the build of its check for the kernel sanitizer (grade_runs' sim:0.kernels).
grade_make_image() {
  local img=$1 build=build/$PRESET lab nn m
  shift
  rm -rf "$img"
  mkdir -p "$img/.submission" "$img/.grade"
  # labs/ and common/ as last committed: an instructor's lab.c finished in
  # place would otherwise be readable by every submission. What differs is said
  # (the checks, and the skeletons an earlier lab falls back on, are built from it).
  local edited
  if grade_git_kit; then
    git archive --format=tar HEAD labs common | tar -x -C "$img"
    edited=$(git diff --name-only HEAD -- labs common | paste -sd' ' -)
    [[ -z $edited ]] || warn "grade: these files differ from the last commit, and the checks are built from them" \
      "(the image of the kit holds the committed ones; commit or restore them): $edited"
  else
    cp -R labs common "$img/"
  fi
  for lab in "$@"; do
    nn=${lab%%_*}
    mkdir -p "$img/.grade/$nn"
    local uses
    uses=$(grade_build_script "$img" "$nn" "check$nn" "$build" obj build.sh kit-symbols) || exit 1
    for m in $uses; do (cd labs && echo "$m"_*); done >"$img/.grade/$nn/labs"
    # The same submission built for the kernel sanitizer, as ./lab check
    # builds it once every claim holds on a simulated GPU (kernels_after_check).
    if [[ " ${GRADE_KERNELS_LABS:-} " == *" $nn "* ]]; then
      grade_build_script "$img" "$nn" "check$nn-kernels" "$build" obj/kernels build-kernels.sh kit-symbols-kernels >/dev/null ||
        exit 1
    fi
    cp "$build/labs/$lab/check-environments" "$img/.grade/$nn/" 2>/dev/null || : >"$img/.grade/$nn/check-environments"
    # A lab whose programs run as several processes (lab 10: mpiexec) is checked
    # through its launcher, as ./lab check does: alone, a rank would be one.
    [[ ! -x $build/labs/$lab/launch ]] || cp "$build/labs/$lab/launch" "$img/.grade/$nn/launch"
  done
  cp tools/lab/grade.sh "$img/.grade/"
  chmod -R a+rX,go-w "$img"
}

# ---- the sandbox (grade.sh run by itself, as root, in new namespaces) ---------

# Sets the loopback of this network namespace up: with ip (iproute2), else
# with the same ioctl from python3 (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP).
grade_loopback_up() {
  ip link set lo up 2>/dev/null && return 0
  command -v python3 >/dev/null || return 1
  python3 -c 'import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0)))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))' 2>/dev/null
}

# grade.sh --sandbox IMG WORK RESULTS UID KIB PROCS BUILD_TIMEOUT TIMEOUT LAB RUN...
# where each RUN is "label|device|VAR=value,...". Mounts a new root of its own,
# builds the submission in WORK (lab.c and kernels in WORK/labs/), runs each
# check, and writes every step's log and exit status to RESULTS.
grade_sandbox() {
  local img=$1 work=$2 results=$3 uid=$4 kib=$5 procs=$6 build_timeout=$7 timeout=$8 lab=$9
  shift 9
  local nn=${lab%%_*} new=$img/../sandbox-root d file rel run label device settings rc
  mount --make-rprivate /
  # The new network namespace has no interface up, not even loopback, and MPI
  # (lab 10's ranks) will not start without one: loopback only, and this job's
  # alone, so the submission still reaches nothing outside.
  grade_loopback_up || echo "grade: could not bring up the sandbox's loopback (neither ip nor python3 here); lab 10's ranks need it" >&2
  mount -t tmpfs -o size=64m,mode=755 grade-root "$new"
  local links=() dirs=()
  for d in usr etc dev sys bin sbin lib lib32 lib64 libx32 opt; do
    if [[ -L /$d ]]; then links+=("/$d"); elif [[ -d /$d ]]; then dirs+=("$d"); fi
  done
  ((${#links[@]} == 0)) || cp -P "${links[@]}" "$new/" # /bin -> usr/bin, as it is
  mkdir -p "${dirs[@]/#/$new/}" "$new/proc" "$new/tmp"
  for d in "${dirs[@]}"; do
    if [[ $d == dev || $d == sys ]]; then mount --rbind "/$d" "$new/$d"; else mount --rbind -o ro "/$d" "$new/$d"; fi
  done
  mount -t proc proc "$new/proc"
  mount -t tmpfs -o size=256m,mode=1777 grade-tmp "$new/tmp"
  mkdir -p "$new$ROOT" # after /tmp's: a kit under /tmp is seen there
  [[ -d $new/dev/shm ]] && mount -t tmpfs -o size=64m,mode=1777 grade-shm "$new/dev/shm"
  mount --bind -o ro "$img" "$new$ROOT"
  mount --bind "$work" "$new$ROOT/.submission"
  # The student's files in place of the kit's skeleton, where the compiler looks.
  for file in "$work"/labs/*/*; do
    rel=${file#"$work"/}
    [[ -f $file && -f $new$ROOT/$rel ]] || continue
    mount --bind "$file" "$new$ROOT/$rel"
  done
  # The memory limit is on data (ulimit -d: the heap and every private
  # writable mapping), not on address space (-v): every check of a CUDA build
  # starts CUDA, on the cpu too, and CUDA reserves more address space than the
  # GPU's memory when it starts; under -v it does not start at all (on an H200,
  # every cuda:0 run read "skipped").
  as_student() { # the step's command as the slot's user, with the limits
    local limit=$1
    shift
    (
      ulimit -d "$kib" -u "$procs" -f 262144 -c 0
      cd / && exec timeout -k 2 "$limit" chroot "$new" setpriv --reuid "$uid" --regid "$uid" --clear-groups \
        --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
    )
  }
  # A step's output: its first 256 KiB in file $1, then, where there was
  # more, the cut said and the last 8 KiB, which hold the check's last line
  # (its PASS or FAIL: without it a run is no pass); what lies between is read
  # and dropped (head alone closed the pipe, and a check that wrote more died
  # of SIGPIPE: error-141).
  keep_log() {
    head -c 262144 >"$1"
    tail -c 8192 >"$1.end"
    if [[ -s $1.end ]]; then
      printf '\n%s; its last 8 KiB follow\n' "$GRADE_CUT" >>"$1"
      cat "$1.end" >>"$1"
    fi
    rm -f "$1.end"
  }
  # What a step leaves running (a daemon, a fork bomb) ends with it.
  sweep() { chroot "$new" setpriv --reuid "$uid" --regid "$uid" --clear-groups -- kill -9 -1 2>/dev/null || true; }
  rc=0
  as_student "$build_timeout" env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/tmp TMPDIR=/tmp \
    sh "$ROOT/.grade/$nn/build.sh" 2>&1 | keep_log "$results/build.log"
  rc=${PIPESTATUS[0]}
  echo "$rc" >"$results/build.rc"
  ((rc == 0)) || return 0
  # The check for the kernel sanitizer, where a run asks for it (grade_runs:
  # sim:0.kernels), built as its own step: a failure there is that run's.
  if [[ " $* " == *".kernels|"* && -f $img/.grade/$nn/build-kernels.sh ]]; then
    as_student "$build_timeout" env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/tmp TMPDIR=/tmp \
      sh "$ROOT/.grade/$nn/build-kernels.sh" 2>&1 | keep_log "$results/build-kernels.log"
    echo "${PIPESTATUS[0]}" >"$results/build-kernels.rc"
  fi
  # The checks write no file: from here on the submission's folder is read-only
  # too, and its only places to write are the private /tmp (256 MiB) and
  # /dev/shm (64 MiB), in memory: it cannot fill a disk.
  mount -o remount,bind,ro "$new$ROOT/.submission"
  local launcher=()
  [[ ! -x $img/.grade/$nn/launch ]] || launcher=("$ROOT/.grade/$nn/launch")
  for run in "$@"; do
    IFS='|' read -r label device settings <<<"$run"
    local program=$ROOT/.submission/check$nn
    if [[ $label == *.kernels ]]; then
      program=$ROOT/.submission/check$nn-kernels
      [[ $(cat "$results/build-kernels.rc" 2>/dev/null) == 0 ]] || continue # grade_rows says why
    fi
    # The suite's settings; one OpenBLAS thread a check: -j N checks share the cores.
    local environment=(LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=1G "OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}"
      "OMP_THREAD_LIMIT=${OMP_THREAD_LIMIT:-8}") extra=()
    [[ -z ${OPENBLAS_CORETYPE:-} ]] || environment+=("OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE")
    [[ -z ${CUDA_VISIBLE_DEVICES:-} ]] || environment+=("CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES")
    [[ -z $settings ]] || IFS=',' read -ra extra <<<"$settings"
    as_student "$timeout" env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=/tmp "${environment[@]}" "${extra[@]}" \
      "${launcher[@]}" "$program" --device "$device" </dev/null 2>&1 | keep_log "$results/${label/:/}.log"
    rc=${PIPESTATUS[0]}
    sweep
    echo "$rc" >"$results/${label/:/}.rc"
  done
}

# ---- the class: every submission, every lab, in parallel ------------------------

# One submission's lab $3 (student $2) in slot $4: a fresh work folder with its
# files, the sandbox, the results in $1/logs/<student>/<lab>/.
grade_job() {
  local out=$1 student=$2 lab=$3 slot=$4 runs=("${@:5}") work results uid mlab start=${EPOCHREALTIME/[,.]/} end
  uid=$(grade_uid_of "$slot")
  work=$out/work/$student-$lab
  results=$out/logs/$student/$lab
  rm -rf "$work" "$results"
  mkdir -p "$work/labs" "$results"
  echo "$uid" >"$results/uid" # the user its checks ran as, no other grading's at the time
  # The lab and the earlier labs its programs link (LAB_USES), where handed in.
  # (Few programs started per job: on a loaded VM each costs 10-20 ms of CPU.)
  while read -r mlab; do
    if [[ -d $out/submissions/$student/labs/$mlab ]]; then cp -R "$out/submissions/$student/labs/$mlab" "$work/labs/"; fi
  done <"$out/kit/.grade/${lab%%_*}/labs"
  chown -R "$uid:$uid" "$work"
  chmod 700 "$work"
  local builds=1
  [[ " ${runs[*]} " != *".kernels|"* ]] || builds=2 # the check for the kernel sanitizer too
  timeout -s KILL $((builds * GRADE_BUILD_TIMEOUT + ${#runs[@]} * (GRADE_TIMEOUT + 5) + 60)) \
    unshare --mount --net --pid --fork --kill-child \
    bash "$out/kit/.grade/grade.sh" --sandbox "$ROOT" "$out/kit" "$work" "$results" "$uid" "$GRADE_KIB" \
    "$GRADE_PROCS" "$GRADE_BUILD_TIMEOUT" "$GRADE_TIMEOUT" "$lab" "${runs[@]}" >"$results/sandbox.log" 2>&1 || true
  # Nothing of it stays writable by the next submission in this slot.
  chown -R 0:0 "$work" 2>/dev/null || true
  grade_table_part "$out" "$student" "$lab" "${runs[@]}"
  end=${EPOCHREALTIME/[,.]/}
  printf '%d.%02d\n' $(((end - start) / 1000000)) $(((end - start) / 10000 % 100)) >"$results/seconds"
}

# The claim of a line "  ok    <claim> (<figures>)" or "  FAIL  <claim>: <figures>",
# and its ID: the lab's number and the claim's words, lower case, every run of
# other characters a '-', cut after a word at most 64 characters. The figures are left out, so
# the ID stays the same whatever a run measured, as long as the claim's text
# in check.c does.
GRADE_ROWS_AWK='
  function slug(text) {
    text = tolower(text); gsub(/[^a-z0-9]+/, "-", text); gsub(/^-|-$/, "", text)
    if (length(text) > 64) { text = substr(text, 1, 65); sub(/-[^-]*$/, "", text) } # whole words
    return text
  }
  function clean(text) { gsub(/[\t\r]/, " ", text); return text }
  # The last parenthesised group that ends the line: the figures of an ok line.
  function split_ok(line,    depth, i, c) {
    if (substr(line, length(line), 1) != ")") { claim = line; figures = ""; return }
    depth = 0
    for (i = length(line); i > 0; i--) {
      c = substr(line, i, 1)
      if (c == ")") depth++
      else if (c == "(" && --depth == 0) break
    }
    if (i <= 1) { claim = line; figures = ""; return }
    claim = substr(line, 1, i - 1); sub(/ +$/, "", claim)
    figures = substr(line, i + 1, length(line) - i - 1)
  }
  /^  ok    / { line = substr($0, 9); split_ok(line); emit("ok") ; next }
  /^  FAIL  / {
    line = substr($0, 9); at = index(line, ": ")
    if (at) { claim = substr(line, 1, at - 1); figures = substr(line, at + 2) } else { claim = line; figures = "" }
    emit("FAIL"); next
  }
  function emit(verdict,    id) {
    id = nn "." slug(claim)
    if (id in seen) id = id "-" (++seen[id]); else seen[id] = 1
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", student, lab, device, id, verdict, clean(claim), clean(figures)
  }
'

# The first lines of a log, for a reason: "a | b | c".
grade_reason() {
  { grep -v -E '^[[:space:]]*$' "$1" 2>/dev/null || true; } | head -n "${2:-3}" | cut -c1-240 | tr '\t' ' ' |
    paste -sd'|' - | sed 's/|/ | /g'
}

# Why a build (exit status $1, log $2; the sandbox's log $3) failed, in a line:
# its first errors, else its first lines.
grade_build_reason() {
  local rc=$1 log=$2 sandbox=$3 reason
  if [[ $rc == 124 || $rc == 137 ]]; then
    reason="the build ran past ${GRADE_BUILD_TIMEOUT} s"
  else
    reason=$(grep -m3 -E 'error|undefined reference|grade: ' "$log" | sed "s|$ROOT/||g" | cut -c1-240 |
      paste -sd'|' - | sed 's/|/ | /g' || true)
    [[ -n $reason ]] || reason=$(grade_reason "$log")
    [[ -n $reason ]] || reason="the build stopped (exit status $rc): $(grade_reason "$sandbox")"
  fi
  printf '%s\n' "$reason"
}

# The rows of one submission's lab: "student lab device id verdict claim
# figures" (tab-separated): its claims on each run, and one row a run (id
# NN.run) with the run's outcome; a missing file or a failed build is one
# row (NN.missing, NN.build).
grade_rows() {
  local out=$1 student=$2 lab=$3 results=$1/logs/$2/$3 run label device rc outcome reason nn
  nn=${lab%%_*}
  shift 3
  if [[ ! -f $out/submissions/$student/labs/$lab/lab.c ]]; then
    # What was handed in, and why an archive gave less (grade_unpack's problem).
    # A submission with no lab's file has lab "-" (cmd_grade): its one row.
    local handed problem="" claim="labs/$lab/lab.c is missing" id=$nn.missing
    [[ $lab != - ]] || claim="no lab's file was handed in (labs/NN_name/lab.c, your kernels)" id=missing
    handed=$({ cd "$out/submissions/$student" && find labs -type f 2>/dev/null; cat "../$student.ignored"; } |
      head -n 5 | paste -sd' ' - || true)
    [[ ! -s $out/submissions/$student.problem ]] || problem="$(head -n1 "$out/submissions/$student.problem"); "
    printf '%s\t%s\t-\t%s\tmissing\t%s\t%s\n' "$student" "$lab" "$id" "$claim" "${problem}handed in: ${handed:-nothing}"
    return
  fi
  rc="?"
  [[ ! -f $results/build.rc ]] || read -r rc <"$results/build.rc"
  if [[ $rc != 0 ]]; then
    reason=$(grade_build_reason "$rc" "$results/build.log" "$results/sandbox.log")
    printf '%s\t%s\t-\t%s.build\tbuild-failed\t%s\t%s\n' "$student" "$lab" "$nn" "it does not build" "$reason"
    return
  fi
  for run in "$@"; do
    IFS='|' read -r label device _ <<<"$run"
    local log=$results/${label/:/}.log
    # The check for the kernel sanitizer that does not build: that run's row
    # says so (the plain check built, its runs' rows stand).
    if [[ $label == *.kernels && -f $results/build-kernels.rc && $(cat "$results/build-kernels.rc") != 0 ]]; then
      reason=$(grade_build_reason "$(cat "$results/build-kernels.rc")" "$results/build-kernels.log" "$results/sandbox.log")
      printf '%s\t%s\t%s\t%s.run\t%s\t%s\t%s\n' "$student" "$lab" "$label" "$nn" build-failed "the check's run" \
        "check$nn-kernels, the check for the kernel sanitizer, does not build: $reason"
      continue
    fi
    rc=137
    [[ ! -f $results/${label/:/}.rc ]] || read -r rc <"$results/${label/:/}.rc"
    outcome=$(check_outcome "$rc" "$log")
    [[ $rc == 137 ]] && outcome=timeout # killed: the time limit's second signal
    awk -v student="$student" -v lab="$lab" -v nn="$nn" -v device="$label" "$GRADE_ROWS_AWK" "$log"
    case $outcome in
      pass) reason=$(grep -m1 -E ': PASS \(' "$log" | sed 's/.*: PASS/PASS/' || true) ;;
      fail) reason=$(grep -m1 -E ': FAIL \(' "$log" | sed 's/.*: FAIL/FAIL/' || true)
        [[ -n $reason ]] || reason=$(grade_reason "$log") ;;
      timeout) reason="it ran past the limit of ${GRADE_TIMEOUT} s (an endless loop?); its last lines: $(tail -n 2 "$log" | cut -c1-200 | paste -sd'|' -)" ;;
      crash) # lab 10's ranks start each line of their report with "[rank N] " (verdict.sh)
        reason=$(grep -m1 -E "^($RANK_PREFIX)?crash: " "$log" || true
          grep -A1 -m1 -E "^($RANK_PREFIX)?where" "$log" | tail -n1 | sed -E "s/^($RANK_PREFIX)? *//" || true) ;;
      *) reason=$(grade_reason "$log") ;;
    esac
    ! grep -q "^$GRADE_CUT" "$log" || reason="${reason:+$reason }[$GRADE_CUT: the claims in the middle of its output are not in the rows]"
    reason=$(printf '%s' "$reason" | tr '\t\n' '  ')
    printf '%s\t%s\t%s\t%s.run\t%s\t%s\t%s\n' "$student" "$lab" "$label" "$nn" "${outcome// /-}" "the check's run" "$reason"
  done
}

# The rows of a submission's lab and its verdict, in its logs' folder
# (rows.tsv, verdict.tsv): made by each job, in parallel.
grade_table_part() {
  local results=$1/logs/$2/$3
  mkdir -p "$results"
  grade_rows "$@" >"$results/rows.tsv"
  printf '%s\t%s\t%s\n' "$2" "$3" "$(grade_lab_verdict "$results/rows.tsv" "$2" "$3" "$GRADE_GPU_ASKED")" \
    >"$results/verdict.tsv"
}

# Outputs from the rows ($1, TSV): grades.csv, grades.json, grades.xml (JUnit:
# a test suite per student and lab, a test case per device and claim).
grade_write_outputs() {
  local rows=$1 out=$2
  awk -F'\t' 'BEGIN { print "student,lab,device,claim_id,verdict,claim,figures" }
    function q(s) { gsub(/"/, "\"\"", s); return "\"" s "\"" }
    { print q($1) "," q($2) "," q($3) "," q($4) "," q($5) "," q($6) "," q($7) }' "$rows" >"$out/grades.csv"
  awk -F'\t' 'function j(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/[\001-\037]/, " ", s); return "\"" s "\"" }
    BEGIN { printf "[" }
    { printf "%s\n  {\"student\": %s, \"lab\": %s, \"device\": %s, \"claim_id\": %s, \"verdict\": %s, \"claim\": %s, \"figures\": %s}",
        (NR > 1 ? "," : ""), j($1), j($2), j($3), j($4), j($5), j($6), j($7) }
    END { print "\n]" }' "$rows" >"$out/grades.json"
  awk -F'\t' 'function x(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); gsub(/"/, "\\&quot;", s)
      gsub(/[\001-\010\013\014\016-\037]/, " ", s); return s }
    { suite = $1 "." $2; if (!(suite in n)) order[++suites] = suite; k = ++n[suite]
      tc[suite, k] = sprintf("    <testcase classname=\"%s\" name=\"%s %s\"", x(suite), x($3), x($4))
      if ($5 == "ok" || $5 == "pass") body = "/>"
      else if ($5 == "skipped") body = "><skipped message=\"" x($7) "\"/></testcase>"
      else { body = "><failure type=\"" x($5) "\" message=\"" x($6 ": " $7) "\"/></testcase>"; fails[suite]++ }
      tc[suite, k] = tc[suite, k] body }
    END { print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"; print "<testsuites name=\"labkit grade\">"
      for (s = 1; s <= suites; s++) { suite = order[s]
        printf "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\">\n", x(suite), n[suite], fails[suite] + 0
        for (k = 1; k <= n[suite]; k++) print tc[suite, k]
        print "  </testsuite>" }
      print "</testsuites>" }' "$rows" >"$out/grades.xml"
}

# The printed table: per student and lab, done or what failed first; then per
# lab, how many are done and which claims fail most.
grade_print() {
  local rows=$1 verdicts=$2
  printf '%-16s %-20s %s\n' student lab verdict
  awk -F'\t' '{ printf "%-16s %-20s %s\n", $1, $2, $3 }' "$verdicts"
  echo
  awk -F'\t' -v verdicts="$verdicts" '
    BEGIN { while ((getline line < verdicts) > 0) { split(line, f, "\t"); if (f[2] == "-") continue # no lab handed in
        total[f[2]]++; if (f[3] ~ /^done/) done[f[2]]++ } }
    $5 != "ok" && $5 != "pass" && $5 != "skipped" { key = $2 "\t" $4 " (" $5 ")"; if (!((key, $1) in who)) { who[key, $1] = 1; fails[key]++ } }
    END {
      for (l in total) labs[++n] = l
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (labs[j] < labs[i]) { t = labs[i]; labs[i] = labs[j]; labs[j] = t }
      for (i = 1; i <= n; i++) {
        l = labs[i]; printf "%s: %d of %d done\n", l, done[l], total[l]
        m = 0; for (key in fails) { split(key, p, "\t"); if (p[1] == l) { cand[++m] = key } }
        for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (fails[cand[b]] > fails[cand[a]] || (fails[cand[b]] == fails[cand[a]] && cand[b] < cand[a])) { t = cand[a]; cand[a] = cand[b]; cand[b] = t }
        for (a = 1; a <= m && a <= 5; a++) { split(cand[a], p, "\t"); k = fails[cand[a]]; printf "  %3d student%s: %s\n", k, (k == 1 ? " " : "s"), p[2] }
        delete cand
      }
    }' "$rows"
}

# A device asked for whose every run was skipped: the verdicts say nothing of
# it, and the table alone would not show it (a lab is done on cpu and sim:0).
grade_warn_unchecked() {
  local rows=$1 device line
  shift
  for device in "$@"; do
    line=$(awk -F'\t' -v d="$device" '$3 == d && $4 ~ /\.run$/ { runs++; if ($5 == "skipped") { skipped++; if (why == "") why = $7 } }
      END { if (runs > 0 && skipped == runs) printf "%d\t%s", runs, why }' "$rows")
    [[ -z $line ]] || warn "grade: $device was never checked (skipped in ${line%%$'\t'*} of ${line%%$'\t'*} runs), so no verdict says anything of it;" \
      "the first said: $(cut -c1-240 <<<"${line#*$'\t'}")"
  done
}

# A bad command line: what was wrong, then grade's usage; exit 2.
grade_usage_error() {
  warn "$*"
  grade_usage >&2
  exit 2
}

cmd_grade() {
  local submissions="" labs_arg="" devices_arg="" jobs=$JOBS out="" memory=4G
  GRADE_TIMEOUT=300 GRADE_BUILD_TIMEOUT=120 GRADE_PROCS=256
  while (($# > 0)); do
    case $1 in
      --labs | --devices | -j | --out | --timeout | --build-timeout | --memory | --processes)
        [[ -n ${2:-} ]] || grade_usage_error "grade: $1 needs a value" ;;
    esac
    case $1 in
      --labs) labs_arg=${2:-}; shift ;;
      --devices) devices_arg=${2:-}; shift ;;
      -j) jobs=${2:-}; shift ;;
      -j[0-9]*) jobs=${1#-j} ;;
      --out) out=${2:-}; shift ;;
      --timeout) GRADE_TIMEOUT=${2:-}; shift ;;
      --build-timeout) GRADE_BUILD_TIMEOUT=${2:-}; shift ;;
      --memory) memory=${2:-}; shift ;;
      --processes) GRADE_PROCS=${2:-}; shift ;;
      -h | --help) grade_usage; return 0 ;;
      -*) grade_usage_error "grade: unknown option '$1'" ;;
      *) [[ -z $submissions ]] || grade_usage_error "grade: one folder of submissions ('$submissions' and '$1')"
        submissions=$1 ;;
    esac
    shift
  done
  [[ -n $submissions ]] || grade_usage_error "grade: which folder of submissions?"
  local n
  for n in "$jobs" "$GRADE_TIMEOUT" "$GRADE_BUILD_TIMEOUT" "$GRADE_PROCS"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || grade_usage_error "grade: '$n' is not a whole number above 0 (-j, --timeout, --build-timeout, --processes)"
  done
  ((jobs < GRADE_UID_RANGE)) || grade_usage_error "grade: -j $jobs is too many; at most $((GRADE_UID_RANGE - 1)) checks at once"
  GRADE_KIB=$(grade_kib "$memory") || grade_usage_error "grade: --memory '$memory' is not a size (bytes, or a number with K, M or G: 4G)"
  # Below these no build runs at all (the compiler's data, its processes): every
  # submission would read build-failed, and the run end as if it had graded.
  ((GRADE_KIB >= GRADE_MIN_KIB)) ||
    grade_usage_error "grade: --memory $memory is too little for any build: at least $((GRADE_MIN_KIB / 1024))M (default 4G)"
  ((GRADE_PROCS >= GRADE_MIN_PROCS)) ||
    grade_usage_error "grade: --processes $GRADE_PROCS is too few for any build: at least $GRADE_MIN_PROCS (default 256)"
  submissions=$(abspath_from_caller "$submissions")
  [[ -d $submissions ]] || die "grade: $submissions is not a folder (one folder or archive per student inside)"
  if [[ -n $out ]]; then out=$(abspath_from_caller "$out"); else out=$ROOT/build/grade; fi
  # Replace an earlier grading's output; refuse to touch anything else.
  if [[ -e $out && ! -f $out/.labkit-grade ]] && [[ ! -d $out || -n $(ls -A "$out") ]]; then
    die "grade: $out exists and is not an earlier ./lab grade's output; remove it or choose another --out."
  fi
  if [[ $(grade_isolation) != namespaces ]]; then
    die "grade: a submission runs only in the sandbox, which needs root and unshare (mount, network and PID" \
      "namespaces) here; this machine allows neither. Run ./lab grade as root (sudo ./lab grade ..., or in a" \
      "container or virtual machine of its own)."
  fi
  # The skeletons as committed, or no grade (grade_edited_skeletons).
  local edited
  edited=$(grade_edited_skeletons | paste -sd' ' -)
  [[ -z $edited ]] || die "grade: these files of the labs differ from the last commit: $edited. A lab a student" \
    "did not hand in stands in as the kit's build of them (lab 08 links lab 05's lab.c), so a lab.c finished in" \
    "place would be graded as the student's; commit, stash (git stash) or restore them first."
  # The labs: those asked for, else every lab present.
  local labs=() lab devices=()
  # A lab or device named twice (--labs 01,1 --devices cpu,cpu) counts once:
  # two jobs of one student's lab would share its work folder and break each
  # other's build, and every row would be there twice.
  if [[ -n $labs_arg ]]; then
    for lab in ${labs_arg//,/ }; do
      resolve_lab "$lab"
      [[ " ${labs[*]} " == *" $LAB "* ]] || labs+=("$LAB")
    done
  else
    mapfile -t labs < <(labs_present)
  fi
  if [[ -n $devices_arg ]]; then
    for n in ${devices_arg//,/ }; do
      [[ $n =~ ^(cpu|sim:[0-7]|cuda:[0-9])$ ]] || grade_usage_error "grade: '$n' is not a device (cpu, sim:0, cuda:0)"
      [[ " ${devices[*]} " == *" $n "* ]] || devices+=("$n")
    done
    # done needs the cpu's run to pass (and a GPU's, where one is asked, as
    # ./lab check): without it every student read "not yet".
    [[ " ${devices[*]} " == *" cpu "* ]] ||
      grade_usage_error "grade: --devices $devices_arg has no cpu, and done needs the cpu and a GPU to pass: no submission" \
        "could be done; name the cpu too (--devices cpu,${devices[0]})"
  else
    devices=(cpu sim:0)
    (($(cuda_count "$PRESET") > 0)) && devices+=(cuda:0)
  fi
  # The command line holds and $out may be replaced: the run before this one
  # goes now, all of it, so that a run that fails below (the kit does not
  # build, no submission) leaves no grades of it that read like this run's.
  rm -rf "$out/kit" "$out/work" "$out/logs" "$out/submissions" "$out"/grades.* "$out/verdicts.tsv"
  # The checks, then for the labs with a kernels claim their checks for the
  # kernel sanitizer (checkNN-kernels: not built by default), whose link
  # commands the image's builds copy: a build knows its labs with a kernels
  # claim once configured, which the first build does where it must.
  local targets=() kernels_labs="" kernels_targets=()
  for lab in "${labs[@]}"; do targets+=("check${lab%%_*}"); done
  say "grade: building the kit's checks once (${targets[*]}) in build/$PRESET"
  if ! try_build "$PRESET" "${targets[@]}"; then
    show_failure "the kit's build" "$BUILD_LOG"
    die "grade: the kit itself does not build: nothing can be graded"
  fi
  kernels_labs=" $(grade_kernels_labs "${devices[@]}") "
  for lab in "${labs[@]}"; do
    [[ $kernels_labs != *" ${lab%%_*} "* ]] || kernels_targets+=("check${lab%%_*}-kernels")
  done
  if ((${#kernels_targets[@]} > 0)) && ! try_build "$PRESET" "${kernels_targets[@]}"; then
    show_failure "the kit's build" "$BUILD_LOG"
    die "grade: the kit itself does not build: nothing can be graded"
  fi
  local built=()
  GRADE_KERNELS_LABS=""
  for lab in "${labs[@]}"; do
    if [[ -x build/$PRESET/labs/$lab/check${lab%%_*} ]]; then built+=("$lab"); else warn "grade: $lab is not built here: left out"; fi
    if [[ $kernels_labs == *" ${lab%%_*} "* && -x build/$PRESET/labs/$lab/check${lab%%_*}-kernels ]]; then
      GRADE_KERNELS_LABS+=" ${lab%%_*}"
    fi
  done
  labs=("${built[@]}")
  mkdir -p "$out"
  chmod 700 "$out"
  : >"$out/.labkit-grade"
  mkdir -p "$out/sandbox-root" "$out/submissions" "$out/logs" "$out/work"
  grade_make_image "$out/kit" "${labs[@]}"
  # The submissions: one folder or archive each.
  GRADE_FILES=()
  for lab in $(labs_present); do
    while read -r n; do GRADE_FILES+=("labs/$lab/$n"); done < <(grade_student_files "$lab")
  done
  local entry student students=() ignored
  for entry in "$submissions"/*; do
    # A grading's output (this --out inside the folder, or an earlier one's)
    # is no student: graded, it was one named after it ("grades").
    if [[ $entry -ef $out || -f $entry/.labkit-grade ]]; then
      say "grade: ${entry##*/} is the output of a ./lab grade, not a submission: skipped"
      continue
    fi
    # Anything else is said, not skipped silently (a .rar, a .7z).
    if [[ ! -d $entry ]] && ! grade_is_archive "$entry"; then
      warn "grade: ${entry##*/} is neither a folder nor an archive ($GRADE_ARCHIVES): not graded"
      continue
    fi
    student=$(grade_student_name "$entry")
    if [[ " ${students[*]} " == *" $student "* ]]; then
      warn "grade: two submissions are named $student: only the first is graded"
      continue
    fi
    students+=("$student")
    grade_unpack "$entry" "$out/submissions/$student"
    [[ ! -f $out/submissions/$student.problem ]] || warn "grade: $student: $(cat "$out/submissions/$student.problem")"
    ignored=$(wc -l <"$out/submissions/$student.ignored")
    ((ignored == 0)) || say "grade: $student: $ignored other files ignored (only lab.c and your kernels count):" \
      "$(head -n 3 "$out/submissions/$student.ignored" | paste -sd' ' -)$( ((ignored > 3)) && echo ' ...')"
  done
  ((${#students[@]} > 0)) || die "grade: $submissions holds no submission (a folder or an archive per student: $GRADE_ARCHIVES)"
  # The jobs: a student's labs, those asked for or those with a file handed in.
  # A submission with no lab's file (an empty folder, links alone, a broken
  # archive) is lab "-": a row of its own says why nothing of it was graded.
  local work_list=() labs_listed=0
  for student in "${students[@]}"; do
    local listed=${#work_list[@]}
    for lab in "${labs[@]}"; do
      if [[ -n $labs_arg || -d $out/submissions/$student/labs/$lab ]]; then work_list+=("$student $lab"); fi
    done
    labs_listed=$((labs_listed + ${#work_list[@]} - listed))
    ((${#work_list[@]} > listed)) || work_list+=("$student -")
  done
  ((labs_listed > 0)) || die "grade: no submission has a file of the labs graded (${labs[*]})"
  # Once, not per job: without a loopback in the sandbox, lab 10's ranks fail
  # to start, and each verdict would read like the student's fault.
  local lab_with_ranks=""
  for lab in "${labs[@]}"; do [[ -x build/$PRESET/labs/$lab/launch ]] && lab_with_ranks=$lab; done
  if [[ -n $lab_with_ranks ]] && ! command -v ip >/dev/null && ! command -v python3 >/dev/null; then
    warn "grade: neither ip (iproute2) nor python3 here, so the sandbox's loopback stays down and $lab_with_ranks's" \
      "ranks cannot start: its verdicts will be MPI's failure, not the students'; install iproute2 first"
  fi
  local watched=""
  [[ -z $GRADE_KERNELS_LABS ]] || watched=" (and under the kernel sanitizer on sim:0: labs$GRADE_KERNELS_LABS)"
  say "grade: ${#students[@]} submissions, $labs_listed labs to check on ${devices[*]}$watched, $jobs at once" \
    "(sandbox: namespaces, a uid per slot; limits per check: ${GRADE_TIMEOUT} s, $memory, $GRADE_PROCS processes)"
  local start=$EPOCHREALTIME cpu_before item pid slot free=() runs
  GRADE_GPU_ASKED=""
  [[ " ${devices[*]}" != *" sim:"* && " ${devices[*]}" != *" cuda:"* ]] || GRADE_GPU_ASKED=1
  declare -A slot_of=()
  times >"$out/.times"
  cpu_before=$(grade_cpu_seconds "$out/.times")
  for ((slot = 0; slot < jobs; slot++)); do free+=("$slot"); done
  for item in "${work_list[@]}"; do
    read -r student lab <<<"$item"
    while ((${#free[@]} == 0)); do
      pid=""
      wait -n -p pid || true
      [[ -n $pid && -n ${slot_of[$pid]:-} ]] || continue
      free+=("${slot_of[$pid]}")
      unset "slot_of[$pid]"
    done
    slot=${free[0]}
    free=("${free[@]:1}")
    if [[ -f $out/submissions/$student/labs/$lab/lab.c ]]; then
      mapfile -t runs < <(grade_runs "$out" "$lab" "${devices[@]}")
      grade_job "$out" "$student" "$lab" "$slot" "${runs[@]}" &
      slot_of[$!]=$slot
    else # its one row, missing (no runs)
      grade_table_part "$out" "$student" "$lab"
      free+=("$slot")
    fi
  done
  wait
  local wall cpu
  wall=$(awk -v a="${start/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }')
  times >"$out/.times"
  cpu=$(awk -v a="$cpu_before" -v b="$(grade_cpu_seconds "$out/.times")" 'BEGIN { printf "%.1f", b - a }')
  # The table.
  local rows=$out/grades.tsv verdicts=$out/verdicts.tsv parts=()
  for item in "${work_list[@]}"; do parts+=("$out/logs/${item/ //}"); done
  cat "${parts[@]/%//rows.tsv}" >"$rows"
  cat "${parts[@]/%//verdict.tsv}" >"$verdicts"
  grade_write_outputs "$rows" "$out"
  grade_print "$rows" "$verdicts" | tee "$out/grades.txt"
  grade_warn_unchecked "$rows" "${devices[@]}" 2>&1 | tee -a "$out/grades.txt"
  echo
  say "grade: $labs_listed labs checked in $wall s ($cpu CPU-seconds): $(awk -v w="$wall" -v c="$cpu" -v n="$labs_listed" \
    'BEGIN { printf "%.1f s and %.1f CPU-seconds a submission and lab", w / n, c / n }') at -j $jobs" | tee -a "$out/grades.txt"
  say "grade: $out/grades.csv, grades.json, grades.xml (JUnit), grades.txt; each check's log in $out/logs/"
}

# The runs of lab $2's check: "label|device|settings" a line; the devices
# asked for, then the CPU in each of the lab's other environments, then, where
# the image has the lab's check for the kernel sanitizer (grade_make_image)
# and sim:0 is asked for, that check on sim:0 (sim:0.kernels), as ./lab check
# runs it (kernels_after_check).
grade_runs() {
  local out=$1 lab=$2 device name settings
  shift 2
  for device in "$@"; do echo "$device|$device|"; done
  while read -r name settings; do
    [[ -n $name ]] && echo "cpu.$name|cpu|${settings// /,}"
  done <"$out/kit/.grade/${lab%%_*}/check-environments"
  if [[ -f $out/kit/.grade/${lab%%_*}/build-kernels.sh && " $* " == *" sim:0 "* ]]; then
    echo "sim:0.kernels|sim:0|"
  fi
}

# The labs (NN ...) whose check also runs under the kernel sanitizer when
# graded on devices $@: those listed in build/$PRESET/kernels-claims.txt
# (written by the configure, empty without the kernel tools: the debug-asan
# preset) when sim:0 is among the devices, as ./lab check does
# (kernels_claim_here: it runs the claim on sim:0).
grade_kernels_labs() {
  [[ " $* " == *" sim:0 "* ]] || return 0
  kernels_claim_labs
}

# A lab's verdict from its rows ($1): "done" when every run passed, the cpu's
# among them and a GPU's (where a GPU was among the devices, $4), and the
# check under the kernel sanitizer (sim:0.kernels) where it ran, else the
# first thing that did not hold.
grade_lab_verdict() {
  awk -F'\t' -v s="$2" -v l="$3" -v gpu_asked="$4" '
    $1 == s && $2 == l && $4 ~ /(^|\.)(missing|build)$/ { print $5 ": " $7; found = 1; exit }
    $1 == s && $2 == l && $4 ~ /\.run$/ { runs++; if ($5 == "pass") { if ($3 == "cpu") cpu = 1; if ($3 ~ /^(sim|cuda):[0-9]+$/) gpu = 1 }
      else if ($5 != "skipped" && first == "") first = $5 " on " $3 ": " $7
      # The kernel sanitizer watches kernels on a simulated GPU alone: skipped
      # there, it said nothing, and ./lab check would not say done.
      if ($3 ~ /\.kernels$/ && $5 == "skipped" && unwatched == "") unwatched = $3 ": " $7 }
    $1 == s && $2 == l && $5 == "FAIL" && firstclaim == "" { firstclaim = $4 " on " $3 }
    END { if (found) exit
      if (first != "") print "not yet: " first (firstclaim != "" ? " (first failed claim: " firstclaim ")" : "")
      else if (unwatched != "") print "not yet: the check under the kernel sanitizer was skipped on " unwatched
      else if (cpu && (gpu || !gpu_asked)) print "done"
      else print "not yet: the cpu and a GPU must both pass (skipped or absent)" }' "$1" | cut -c1-300
}

# CPU-seconds of the finished children, from the output of times in file $1
# (written by the shell itself: in a $(...) it would count the subshell's).
grade_cpu_seconds() {
  tail -n1 "$1" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, "m"); sub(/s$/, "", t[2]); s += t[1] * 60 + t[2] } printf "%.2f", s }'
}

# Run by itself: the sandbox's inner part (grade_job starts it in new namespaces).
if [[ ${BASH_SOURCE[0]} == "$0" && ${1:-} == --sandbox ]]; then
  set -uo pipefail
  ROOT=$2
  shift 2
  grade_sandbox "$@"
fi
