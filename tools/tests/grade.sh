#!/usr/bin/env bash
# kit.grade: ./lab grade on a small class made here, from this build's
# checks (build/<preset>, $1): each submission gets the verdict it must get,
# and the hostile ones harm nothing (the kit, the other submissions, the
# machine). Skipped (77) where the sandbox cannot run (not root, no unshare).
set -euo pipefail
BUILD=$(cd "$1" && pwd)
KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PRESET=${BUILD##*/}
[[ $BUILD == "$KIT/build/$PRESET" ]] || { echo "grade test: $BUILD is not a preset's build of $KIT"; exit 1; }
if (($(id -u) != 0)) || ! unshare --mount --net --pid --fork true 2>/dev/null; then
  echo "skipped: ./lab grade's sandbox needs root and unshare here"
  exit 77
fi
# Lab 02 for most (its check costs 0.1 CPU-second on the cpu, lab 04's 1.3),
# lab 04 for the student's kernel file beside lab.c.
LAB=02_copying NN=02 KLAB=04_matmul
if [[ ! -f $KIT/solutions/$LAB/lab.c || ! -f $KIT/solutions/$KLAB/lab.c ]]; then
  echo "skipped: the class is made from solutions/$LAB and solutions/$KLAB, which this copy does not have"
  exit 77
fi
WORK=$BUILD/kit-grade
rm -rf "$WORK"
mkdir -p "$WORK/class" "$WORK/hostile"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Lab 10 (several processes, started by its launcher) where the build has it.
DLAB=10_distributed DNN=10
[[ -x $BUILD/labs/$DLAB/check$DNN && -f $KIT/solutions/$DLAB/lab.c ]] || DLAB=""

# The sandbox brings its own loopback up with ip, else python3; with neither,
# it stays down, lab 10 cannot be graded and nothing answers at all.
loopback="Connection refused"
if ! command -v ip >/dev/null && ! command -v python3 >/dev/null; then
  echo "note: neither ip nor python3 here: the sandbox's loopback stays down, lab 10 left out"
  loopback="Network is unreachable" DLAB=""
fi

# A service on this machine's loopback: a free port, open until the test ends.
cat >"$WORK/listener.c" <<'C'
#include <arpa/inet.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t size = sizeof a;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (argc != 2 || s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16) ||
        getsockname(s, (struct sockaddr *)&a, &size))
        return 1;
    FILE *f = fopen(argv[1], "w");
    if (!f) return 1;
    fprintf(f, "%d\n", ntohs(a.sin_port));
    fclose(f);
    sleep(900);
    return 0;
}
C
cc -o "$WORK/listener" "$WORK/listener.c" || { echo "grade test: cannot compile the loopback service"; exit 1; }
"$WORK/listener" "$WORK/port.part" &
listener=$!
trap 'kill $listener 2>/dev/null || true' EXIT
for _ in $(seq 300); do [[ -s $WORK/port.part ]] && break; sleep 0.1; done
port=$(cat "$WORK/port.part" 2>/dev/null) && [[ $port =~ ^[0-9]+$ ]] ||
  { echo "grade test: the loopback service did not start"; exit 1; }

# A student's folder with lab 02's files: the solution's (copied now: never
# stored as a submission), or a patched one.
student() { # class name [patch]
  local dir=$WORK/$1/$2/labs/$LAB
  mkdir -p "$dir"
  cp "$KIT/solutions/$LAB/lab.c" "$dir/"
  [[ -z ${3:-} ]] || (cd "$dir" && patch -s -p1 <"$3")
}
# Code run before the check's main, added to the solution's lab.c.
before_main() { # class name code
  student "$1" "$2"
  cat >>"$WORK/$1/$2/labs/$LAB/lab.c" <<C
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
__attribute__((constructor)) static void before_main(void)
{
$3
}
C
}

student class correct
mkdir -p "$WORK/class/kernels/labs/$KLAB"
cp "$KIT/solutions/$KLAB/lab.c" "$KIT/solutions/$KLAB/naive_kernel.cuh" "$WORK/class/kernels/labs/$KLAB/"
student class wrong "$KIT/solutions/$LAB/wrong/add-across-always-copies.patch"
(cd "$WORK/class" && tar czf wrong-archive.tar.gz -C wrong labs && rm -r wrong)
# Lab 10 with its ranks (and lab 05's step 1, which it uses): right and wrong.
if [[ -n $DLAB ]]; then
  for who in ranks ranks-wrong; do
    mkdir -p "$WORK/class/$who/labs/$DLAB" "$WORK/class/$who/labs/05_training_loop"
    cp "$KIT/solutions/$DLAB/lab.c" "$WORK/class/$who/labs/$DLAB/"
    cp "$KIT/solutions/05_training_loop/lab.c" "$WORK/class/$who/labs/05_training_loop/"
  done
  dwrong=$KIT/solutions/$DLAB/wrong/no-broadcast.patch
  (cd "$WORK/class/ranks-wrong/labs/$DLAB" && patch -s -p1 <"$dwrong")
fi
mkdir -p "$WORK/class/nofile/labs/$LAB" && echo "my notes" >"$WORK/class/nofile/labs/$LAB/notes.txt"
student class nocompile && echo "this is not C;" >>"$WORK/class/nocompile/labs/$LAB/lab.c"
# The deleter aims at the kit, its solutions, and the other submissions (as
# handed in, as copied for their build, their logs).
targets=("$KIT/labs/$LAB/check.c" "$KIT/common/core/include/labkit/tensor.h" "$KIT/solutions/$LAB/lab.c"
  "$BUILD/labs/CMakeFiles/lab_check_$NN.dir/$LAB/check.c.o" "$WORK/class/correct/labs/$LAB/lab.c"
  "$BUILD/kit-grade/out/submissions/correct/labs/$LAB/lab.c" "$BUILD/kit-grade/out/logs/correct/$LAB/cpu.log"
  "$BUILD/kit-grade/out/work/correct-$LAB/labs/$LAB/lab.c")
# Outside the sandbox, with GRADE_TEST_DECOY=DIR, it aims at DIR/<the same
# paths> instead, and stops: the control that proves it does delete and read
# where nothing stops it (the sandbox's env -i never passes that variable).
code="    const char *decoy = getenv(\"GRADE_TEST_DECOY\");
    char path[4096];
"
code+="    snprintf(path, sizeof path, \"%s$KIT/solutions/$LAB/lab.c\", decoy ? decoy : \"\");
    FILE *f = fopen(path, \"r\");
    printf(\"reader: %s\\n\", f ? \"read the solution\" : strerror(errno));
    if (f) fclose(f);
"
for t in "${targets[@]}"; do
  code+="    snprintf(path, sizeof path, \"%s$t\", decoy ? decoy : \"\");
    if (unlink(path) == 0) printf(\"deleter: deleted %s\\n\", path);
    else printf(\"deleter: could not delete %s: %s\\n\", path, strerror(errno));
"
done
# And the network: a service listening on this machine's loopback (below),
# which the control reaches and the sandbox must not: its namespace has a
# loopback of its own (lab 10's MPI needs one), where nothing listens.
code+="    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons($port)};
    inet_pton(AF_INET, \"127.0.0.1\", &to.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&to, sizeof to) < 0) printf(\"network: %s\\n\", strerror(errno));
    else printf(\"network: connected\\n\");
    if (s >= 0) close(s);
"
code+="    fflush(stdout);
    if (decoy) _exit(0);"
before_main class deleter "$code"
# A lab.c that carries the kit's check library with check_that always true,
# on the wrong version: refused at the link (the control below links it
# anyway and sees the wrong version pass).
student class forger "$KIT/solutions/$LAB/wrong/add-across-always-copies.patch"
sed '/^bool check_that(/,/^{/ s/^{/{\n    holds = true;/' "$KIT/common/harness/src/check.c" >>"$WORK/class/forger/labs/$LAB/lab.c"
# And a check.c of its own, which is ignored.
echo 'int main(void) { return 0; }' >"$WORK/class/forger/labs/$LAB/check.c"
# Lab 02's folder a link to the kit's solutions (it would hand in the answer).
mkdir -p "$WORK/class/linker/labs" && ln -s "$KIT/solutions/$LAB" "$WORK/class/linker/labs/$LAB"
mkdir -p "$WORK/class/includer/labs/$LAB"
echo "#include \"$KIT/solutions/$LAB/lab.c\"" >"$WORK/class/includer/labs/$LAB/lab.c"
# Three of them handed in as the other archives tar reads (told by their names:
# from a pipe, tar cannot tell), one archive that is none, and a file that is
# no submission (said, not graded).
(cd "$WORK/class" && tar cf nofile.tar -C nofile labs && rm -r nofile)
if command -v bzip2 >/dev/null && command -v xz >/dev/null; then
  (cd "$WORK/class" && tar cjf nocompile.tar.bz2 -C nocompile labs && tar cJf includer.tar.xz -C includer labs &&
    rm -r nocompile includer)
fi
echo "not gzip" >"$WORK/class/broken.tgz"
echo "the class's notes" >"$WORK/class/notes.txt"

# The infinite loop and the fork bomb, with short limits.
before_main hostile loop "    volatile unsigned long n = 0;
    for (;;) n++;"
# Each process forks until the cap stops it, says so once, and waits.
before_main hostile forkbomb "    for (;;)
        if (fork() < 0) {
            printf(\"fork bomb: capped: %s\\n\", strerror(errno));
            fflush(stdout);
            for (;;) pause();
        }"

# The memory hog asks for 3 GiB, graded with --memory 1G and the default time
# limit (its line must not race a short one); with GRADE_TEST_DECOY set,
# outside the sandbox, it stops there: the control.
before_main limits hog "    void *p = malloc((size_t)3 << 30);
    printf(\"hog: %s\\n\", p ? \"got 3 GiB\" : \"refused\");
    fflush(stdout);
    free(p);
    if (getenv(\"GRADE_TEST_DECOY\")) _exit(0);"
# And three with no lab's file: an empty folder, a link alone, an archive that
# is none. The hostile class is graded without --labs: each has its row.
mkdir -p "$WORK/hostile/empty" "$WORK/hostile/links/labs"
ln -s "$KIT/solutions/$LAB" "$WORK/hostile/links/labs/$LAB"
echo "not xz" >"$WORK/hostile/broken.tar.xz"
# Its grades go into its own folder (--out), which is no student.

# A check that writes 314 KiB before its own lines: its log keeps 256 KiB, and
# it runs to its end (the cut closed the pipe: SIGPIPE, error-141).
before_main limits chatty "    for (int i = 0; i < 4800; i++)
        printf(\"chatter %058d\\n\", i);"

fingerprint() { # what must stay as it was
  (cd "$KIT" && find labs common solutions tools -type f -print0 | sort -z | xargs -0 sha1sum) | sha1sum
  find "$WORK/class" -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum
  sha1sum "$BUILD/labs/CMakeFiles/lab_check_$NN.dir/$LAB/check.c.o" "$BUILD/labs/$LAB/check$NN"
}
before=$(fingerprint)

cd "$KIT"
export LABKIT_PRESET=$PRESET
# An --out that holds something else is refused, and left as it was.
mkdir -p "$WORK/precious" && echo keep >"$WORK/precious/notes"
if ./lab grade "$WORK/class" --out "$WORK/precious" >"$WORK/precious.out" 2>&1 ||
  ! grep -q 'is not an earlier ./lab grade' "$WORK/precious.out" || [[ $(ls -A "$WORK/precious") != notes ]]; then
  fail "./lab grade --out on a folder of something else: $(cat "$WORK/precious.out")"
fi
# What is refused before anything is graded, with why (exit status 2): limits
# no build runs under (every submission read build-failed, and the run exit 0).
refused() { # why, then ./lab grade's arguments
  local why=$1 out=$WORK/refused.out
  shift
  if ./lab grade "$WORK/class" --labs $NN --out "$WORK/out-refused" "$@" >"$out" 2>&1; then
    fail "./lab grade $* was not refused: $(tail -n 1 "$out")"
  elif ! grep -q "$why" "$out" || [[ -e $WORK/out-refused ]]; then
    fail "./lab grade $* was not refused as it must be ($why): $(head -n 2 "$out")"
  fi
}
refused 'memory 512 is too little for any build: at least 256M' --memory 512
refused 'memory 1M is too little for any build' --memory 1M
refused 'processes 2 is too few for any build: at least 16' --processes 2
# And devices without the cpu, where done needs it (every student read "not
# yet: the cpu and a GPU must both pass").
refused 'devices sim:0 has no cpu, and done needs the cpu and a GPU' --devices sim:0
# A lab.c of the kit that differs from the last commit (a solution copied in,
# not committed) is refused, named: a lab not handed in stands in as the kit's
# build of it, and would be linked into the students' checks. Seen through a
# git directory of its own whose last commit is the kit's with lab 02's lab.c
# changed: the kit itself stays as it is.
if [[ $(git rev-parse --show-toplevel 2>/dev/null) == "$KIT" ]] && git rev-parse -q --verify HEAD >/dev/null; then
  fake=$WORK/fake-git/.git
  git init -q "${fake%/.git}"
  echo "$(git rev-parse --path-format=absolute --git-common-dir)/objects" >"$fake/objects/info/alternates"
  GIT_DIR=$fake git read-tree "$(git rev-parse 'HEAD^{tree}')"
  GIT_DIR=$fake git update-index --cacheinfo "100644,$(echo 'int edited;' | GIT_DIR=$fake git hash-object -w --stdin),labs/$LAB/lab.c"
  GIT_DIR=$fake git update-ref HEAD "$(GIT_DIR=$fake GIT_AUTHOR_NAME=kit.grade GIT_AUTHOR_EMAIL=kit.grade@localhost \
    GIT_COMMITTER_NAME=kit.grade GIT_COMMITTER_EMAIL=kit.grade@localhost git commit-tree -m edited "$(GIT_DIR=$fake git write-tree)")"
  mkdir -p "$WORK/none"
  if GIT_DIR=$fake ./lab grade "$WORK/none" --labs $NN --devices cpu --out "$WORK/out-refused" >"$WORK/edited.out" 2>&1 ||
    ! grep -q "these files of the labs differ from the last commit: labs/$LAB/lab.c\." "$WORK/edited.out" ||
    [[ -e $WORK/out-refused ]]; then
    fail "a kit whose labs/$LAB/lab.c differs from the last commit was not refused, naming it: $(head -n 3 "$WORK/edited.out")"
  fi
fi
# The class and the hostile class graded at once, as two instructors might:
# neither may reach the other (the hostile's fork bomb fills its slot's
# process limit and its sweeps kill everything of its slot's uid; a uid
# shared between the two gradings would fail the class's checks). The class
# names lab 02 twice (02 and 2) and the cpu twice: each counts once.
./lab grade "$WORK/class" --labs $NN,04,${NN#0}${DLAB:+,$DNN} --devices cpu,cpu -j 2 --out "$WORK/out" >"$WORK/class.out" 2>&1 &
class_grading=$!
./lab grade "$WORK/hostile" --devices cpu -j 2 --timeout 1 --processes 24 --out "$WORK/hostile/grades" \
  >"$WORK/hostile.out" 2>&1 || { cat "$WORK/hostile.out"; fail "./lab grade of the hostile class stopped"; }
wait $class_grading || { cat "$WORK/class.out"; fail "./lab grade of the class stopped"; }
# Whether they overlapped is the machine's timing; that their users differ is not.
class_uids=$(cat "$WORK"/out/logs/*/*/uid 2>/dev/null | sort -u || true)
hostile_uids=$(cat "$WORK"/hostile/grades/logs/*/*/uid 2>/dev/null | sort -u || true)
shared_uids=$(comm -12 <(echo "$class_uids") <(echo "$hostile_uids"))
if [[ -z $class_uids || -z $hostile_uids ]]; then
  fail "a grading did not say which users its checks ran as (logs/<student>/<lab>/uid)"
elif [[ -n $shared_uids ]]; then
  fail "two gradings at once ran checks as the same users: $(echo $shared_uids)"
fi
# The limits' class, the hog and a correct one, on a device every run of which
# is skipped (sim:7: the sandbox simulates two): that is said after the table,
# where its rows alone read "skipped".
cp -R "$WORK/class/correct" "$WORK/limits/"
# An earlier grading's output in the folder is no student either.
mkdir -p "$WORK/limits/old-grades/kit/labs/$LAB" && touch "$WORK/limits/old-grades/.labkit-grade" &&
  cp "$KIT/labs/$LAB/lab.c" "$WORK/limits/old-grades/kit/labs/$LAB/"
./lab grade "$WORK/limits" --labs $NN --devices cpu,sim:7 -j 2 --memory 1G --out "$WORK/out-limits" \
  >"$WORK/limits.out" 2>&1 || { cat "$WORK/limits.out"; fail "./lab grade of the limits' class stopped"; }
# Lab 09 graded as ./lab check judges it, where this build has the kernel
# tools: its check for the kernel sanitizer runs on sim:0 too, so a transpose
# whose tile has no padding column (the right values, 31 bank conflicts a
# read: its plain check passes, its kernels claim fails) is not done, and the
# solution is.
MLAB=09_memory MNN=09 mwrong=$KIT/solutions/09_memory/wrong/transpose-tile-unpadded.patch
if [[ " $(cat "$BUILD/kernels-claims.txt" 2>/dev/null) " == *" $MNN "* && -f $mwrong ]] &&
  grep -q '^LABKIT_HAVE_KERNEL_TOOLS:INTERNAL=ON' "$BUILD/CMakeCache.txt"; then
  for who in padded unpadded; do
    mkdir -p "$WORK/memory/$who/labs/$MLAB"
    cp "$KIT/solutions/$MLAB/lab.c" "$KIT/solutions/$MLAB/memory_kernels.cuh" "$WORK/memory/$who/labs/$MLAB/"
  done
  (cd "$WORK/memory/unpadded/labs/$MLAB" && patch -s -p1 <"$mwrong")
  ./lab grade "$WORK/memory" --labs $MNN --devices cpu,sim:0 -j 2 --out "$WORK/out-memory" >"$WORK/memory.out" 2>&1 ||
    { cat "$WORK/memory.out"; fail "./lab grade of lab 09's class stopped"; }
else
  MLAB=""
  echo "note: no kernel tools in this build (or no kernels claim in lab 09): the kernel sanitizer's grade is not tested here"
fi
cat "$WORK/class.out" "$WORK/hostile.out" "$WORK/limits.out" ${MLAB:+"$WORK/memory.out"}
grep -q "grade: sim:7 was never checked (skipped in 3 of 3 runs)" "$WORK/limits.out" ||
  fail "a device never checked (sim:7) is not said after the table"

# The verdict of each: "student<TAB>lab<TAB>verdict" in verdicts.tsv.
expect() { # out student lab pattern
  local got
  got=$(awk -F'\t' -v s="$2" -v l="$3" '$1 == s && $2 == l { print $3 }' "$WORK/$1/verdicts.tsv")
  if [[ $got =~ $4 ]]; then echo "ok    $2, $3: $got" | cut -c1-160; else fail "$2's verdict of $3 is '$got', not /$4/"; fi
}
# The ID of the claim a wrong version's patch says it fails: its start, as a slug.
caught_by() { sed -n 's/^# catches: //p' "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g'; }
wrong_patch=$KIT/solutions/$LAB/wrong/add-across-always-copies.patch
caught=$(caught_by "$wrong_patch")
[[ -n $caught ]] || fail "$wrong_patch names no claim"
expect out correct $LAB '^done$'
expect out correct $KLAB '^missing: '
expect out kernels $KLAB '^done$'
expect out kernels $LAB '^missing: '
expect out wrong-archive $LAB "FAIL.*$NN\\.$caught"
expect out nofile $LAB "^missing: handed in: labs/$LAB/notes.txt"
expect out broken $LAB "^missing: the archive could not be unpacked whole: [^ ;][^;]*; handed in: nothing\$"
grep -q "grade: notes.txt is neither a folder nor an archive" "$WORK/class.out" ||
  fail "a file of the class that is no submission (notes.txt) is not said"
expect out linker $LAB "^missing: handed in: labs/$LAB \\(a link\\)\$"
expect out nocompile $LAB '^build-failed: .*lab.c:[0-9]+.*error'
expect out includer $LAB '^build-failed: .*No such file'
expect out deleter $LAB '^done$'
expect out forger $LAB "^build-failed: .*defines what the kit defines \\(check_"
expect hostile/grades loop $LAB '^not yet: timeout on cpu'
expect hostile/grades forkbomb $LAB '^not yet: timeout on cpu'
expect hostile/grades empty - '^missing: handed in: nothing$'
expect hostile/grades links - "^missing: handed in: labs/$LAB \\(a link\\)\$"
expect hostile/grades broken - '^missing: the archive could not be unpacked whole: [^ ;][^;]*; handed in: nothing$'
grep -q $'^chatty\t'"$LAB"$'\tcpu\t'"$NN"$'.run\tpass\t.*output was cut at 256 KiB' "$WORK/out-limits/grades.tsv" ||
  fail "a check that wrote more than 256 KiB did not pass, its reason saying it was cut: $(grep $'^chatty\t.*\tcpu\t' "$WORK/out-limits/grades.tsv" | cut -f 5- | cut -c1-200)"
chatty_log=$WORK/out-limits/logs/chatty/$LAB/cpu.log
(($(wc -c <"$chatty_log") < 262144 + 8192 + 100)) &&
  grep -q '^grade: the output was cut at 256 KiB; its last 8 KiB follow$' "$chatty_log" &&
  tail -n 1 "$chatty_log" | grep -q ": PASS (" ||
  fail "the log of a check that wrote more than 256 KiB is not its first 256 KiB, a note and its last 8 KiB"
# An --out in the folder of submissions, and an earlier grading's output
# there, are no students.
for o in hostile/grades:grades out-limits:old-grades; do
  ! grep -q "^${o#*:}"$'\t' "$WORK/${o%:*}/verdicts.tsv" || fail "the output of a grading in the class (${o#*:}) was graded as a student"
done
# Lab 02 and the cpu, named twice, were graded once: a student's lab has one
# verdict, and no row is there twice (two jobs of one lab shared a work folder).
dups=$(cut -f1,2 "$WORK/out/verdicts.tsv" | sort | uniq -d; sort "$WORK/out/grades.tsv" | uniq -d)
[[ -z $dups ]] || fail "a lab or a device named twice was graded twice: $(head -n 2 <<<"$dups" | cut -c1-160)"
# Graded on the cpu alone, lab 04 has no run under the kernel sanitizer
# (it watches a simulated GPU): nothing of it in the rows.
! grep -q $'\t[^\t]*\\.kernels\t' "$WORK/out/grades.tsv" || fail "a grade on the cpu alone ran the kernel sanitizer's check"
if [[ -n $MLAB ]]; then
  expect out-memory padded $MLAB '^done$'
  mcaught=$(caught_by "$mwrong")
  expect out-memory unpadded $MLAB "^not yet: fail on sim:0\\.kernels: .*first failed claim: $MNN\\.${mcaught}[^ ]* on sim:0\\.kernels"
  # Its plain check passed on both devices: only the kernels claim tells it.
  for device in cpu sim:0; do
    grep -q $'^unpadded\t'"$MLAB"$'\t'"$device"$'\t'"$MNN.run"$'\tpass\t' "$WORK/out-memory/grades.tsv" ||
      fail "lab 09's unpadded transpose did not pass its plain check on $device"
  done
  grep -q "^\"unpadded\",\"$MLAB\",\"sim:0.kernels\",\"$MNN.${mcaught}[^\"]*\",\"FAIL\"" "$WORK/out-memory/grades.csv" ||
    fail "grades.csv has no FAIL row of the unpadded transpose's kernels claim"
fi
if [[ -n $DLAB ]]; then
  expect out ranks $DLAB '^done$'
  dcaught=$(caught_by "$dwrong")
  expect out ranks-wrong $DLAB "FAIL.*$DNN\\.$dcaught"
  grep -q "(3 ranks" "$WORK/out/logs/ranks/$DLAB/cpu.ranks3.log" ||
    fail "lab 10's ranks3 run did not run 3 ranks: $(head -n 3 "$WORK/out/logs/ranks/$DLAB/cpu.ranks3.log")"
fi
# The claims' rows: an ID each, the wrong one's claim FAIL, in CSV, JSON and JUnit.
grep -q "^\"wrong-archive\",\"$LAB\",\"cpu\",\"$NN.${caught}[^\"]*\",\"FAIL\"" "$WORK/out/grades.csv" ||
  fail "grades.csv has no FAIL row of the wrong submission's claim"
grep -q "\"student\": \"correct\", \"lab\": \"$LAB\", \"device\": \"cpu\", \"claim_id\": \"$NN.run\", \"verdict\": \"pass\"" \
  "$WORK/out/grades.json" || fail "grades.json has no passing run of the correct submission"
grep -q "<testsuite name=\"wrong-archive.$LAB\" tests=\"[0-9]*\" failures=\"2\">" "$WORK/out/grades.xml" ||
  fail "grades.xml does not count the wrong submission's two failures (its claim and its run)"
grep -q "forger: 1 other files ignored.*labs/$LAB/check.c" "$WORK/class.out" ||
  fail "the forger's check.c is not said to be ignored"
# What the hostile ones tried, and that it failed.
n=$(grep -c '^deleter: could not delete ' "$WORK/out/logs/deleter/$LAB/cpu.log" || true)
((n == ${#targets[@]})) || fail "the deleter deleted something: $(grep '^deleter' "$WORK/out/logs/deleter/$LAB/cpu.log")"
grep -q '^reader: No such file or directory' "$WORK/out/logs/deleter/$LAB/cpu.log" ||
  fail "the deleter read the solution: $(grep '^reader' "$WORK/out/logs/deleter/$LAB/cpu.log")"
grep -q "^network: $loopback" "$WORK/out/logs/deleter/$LAB/cpu.log" ||
  fail "the sandbox's network is more or less than a loopback of its own: $(grep '^network' "$WORK/out/logs/deleter/$LAB/cpu.log")"
grep -q '^fork bomb: capped: Resource temporarily unavailable' "$WORK/hostile/grades/logs/forkbomb/$LAB/cpu.log" ||
  fail "the fork bomb was not capped by the process limit"
# (The control first: a machine that refuses 3 GiB to anyone proves nothing.)
control=$(GRADE_TEST_DECOY=1 "$WORK/out-limits/work/hog-$LAB/check$NN" --device cpu 2>&1 | grep -m1 '^hog') || true
if [[ $control == 'hog: got 3 GiB' ]]; then
  grep -q '^hog: refused' "$WORK/out-limits/logs/hog/$LAB/cpu.log" ||
    fail "the hog's 3 GiB were not refused under --memory 1G: $(grep '^hog' "$WORK/out-limits/logs/hog/$LAB/cpu.log")"
else
  echo "note: this machine refuses 3 GiB outside the sandbox too (${control:-no line}): --memory is not tested here"
fi
# The controls: outside the sandbox, the deleter deletes and reads (its
# copy of the targets), and the forger, linked as the kit links a check,
# passes although it is the wrong version.
decoy=$WORK/decoy
for t in "${targets[@]}" "$KIT/solutions/$LAB/lab.c"; do mkdir -p "$decoy${t%/*}" && echo x >"$decoy$t"; done
GRADE_TEST_DECOY=$decoy "$WORK/out/work/deleter-$LAB/check$NN" --device cpu >"$WORK/decoy.out" 2>&1 || true
n=$(grep -c '^deleter: deleted ' "$WORK/decoy.out" || true)
((n == ${#targets[@]})) && grep -q '^reader: read the solution' "$WORK/decoy.out" &&
  grep -q '^network: connected' "$WORK/decoy.out" ||
  fail "the deleter's control did not delete and read its decoys, or reach the loopback's service: $(head -n 3 "$WORK/decoy.out")"
ROOT=$KIT
PRESET=$PRESET
source "$KIT/tools/lab/grade.sh"
# Makefiles' link commands name their objects in a response file (@file):
# the image's build must name each one (a build with Makefiles and CUDA
# graded nothing, silently, when it did not).
printf 'a.o b.o\nc.o\n' >"$WORK/objects.rsp"
words=$(grade_link_words "$WORK" cc @objects.rsp -o x @absent.rsp | paste -sd' ')
[[ $words == "cc a.o b.o c.o -o x @absent.rsp" ]] || fail "grade_link_words gave \"$words\""
{ read -r dir && read -r command; } < <(cd "$KIT" && grade_link_command "check$NN" "build/$PRESET")
# A response file's words in its place (Makefiles), then the shell's own
# words: Ninja quotes -L"/usr/local/cuda/...", a response file its libraries.
read -ra tokens <<<"$command"
mapfile -t tokens < <(grade_link_words "$dir" "${tokens[@]}")
eval "tokens=(${tokens[*]})"
link=() forged=("$WORK/out/work/forger-$LAB"/obj/*.o) seen=0 next=""
for t in "${tokens[@]}"; do
  if [[ $next == o ]]; then link+=("$WORK/forged-check$NN"); next=""; continue; fi
  [[ $t == -o ]] && next=o
  if [[ $t == *lab_code_$NN.dir/* ]]; then
    ((seen++)) || link+=("${forged[@]}")
    continue
  fi
  link+=("$t")
done
(cd "$dir" && "${link[@]}") >"$WORK/forged.out" 2>&1 && "$WORK/forged-check$NN" --device cpu >>"$WORK/forged.out" 2>&1 ||
  true
grep -q "^$LAB on cpu: PASS" "$WORK/forged.out" ||
  fail "the forger's control did not pass when linked without the symbol check: $(tail -n 3 "$WORK/forged.out")"
# A kit whose path holds a space: its image's build script names each path
# whole (it said S=/a kit/.submission, and every submission was build-failed).
# The script is made for the kit seen at "$WORK/a kit" (a link), then run
# where the image stands at that path, on lab 02's skeleton (as root, outside
# the sandbox: its S is checked first, so that it never writes to /obj).
spaced="$WORK/a kit"
rm -rf "$spaced" "$WORK/spaced-image" && mkdir -p "$WORK/spaced-image/.grade/$NN"
ln -s "$KIT" "$spaced"
(ROOT=$spaced && grade_build_script "$WORK/spaced-image" $NN check$NN "build/$PRESET" obj build.sh kit-symbols >/dev/null) ||
  fail "no build script for a kit whose path holds a space"
rm "$spaced" && mv "$WORK/spaced-image" "$spaced"
mkdir -p "$spaced/.submission/labs/$LAB" && cp "$KIT/labs/$LAB/lab.c" "$spaced/.submission/labs/$LAB/"
s=$(cd "$WORK" && sh -c "$(grep -m1 '^S=' "$spaced/.grade/$NN/build.sh")"$'\nprintf %s "$S"' 2>/dev/null) || true
if [[ $s != "$spaced/.submission" ]]; then
  fail "a kit whose path holds a space: its build script sets S to '$s': $(grep -m1 '^S=' "$spaced/.grade/$NN/build.sh")"
elif ! sh "$spaced/.grade/$NN/build.sh" >"$WORK/spaced.out" 2>&1 || [[ ! -x $spaced/.submission/check$NN ]]; then
  fail "a kit whose path holds a space: the build script fails: $(tail -n 3 "$WORK/spaced.out")"
fi
# A re-run into the limits' output that fails (a folder with no submission)
# leaves nothing of the run before it that would read as its grades.
mkdir -p "$WORK/none"
if ./lab grade "$WORK/none" --labs $NN --devices cpu --out "$WORK/out-limits" >"$WORK/none.out" 2>&1 ||
  ! grep -q 'holds no submission' "$WORK/none.out"; then
  fail "./lab grade of a folder with no submission: $(tail -n 2 "$WORK/none.out")"
fi
left=$(cd "$WORK/out-limits" && ls -d grades.* verdicts.tsv logs/* 2>/dev/null | paste -sd' ' -) || true
[[ -z $left ]] || fail "a failed re-run left the output of the run before it: $left"
# Nothing harmed: the kit, the class, and no process of the slots left.
[[ $(fingerprint) == "$before" ]] || fail "a file of the kit or of the class changed"
if ps -e -o uid= | awk '$1 >= 2000000000 && $1 < 2000001000' | grep -q .; then
  fail "processes of the grading slots are left: $(ps -e -o uid=,pid=,comm= | awk '$1 >= 2000000000' | head -n 3)"
fi
((fails == 0)) || { echo "$fails checks failed"; exit 1; }
echo "kit.grade: every verdict as expected, nothing harmed"
