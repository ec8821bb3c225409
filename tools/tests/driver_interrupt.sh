#!/usr/bin/env bash
# driver_interrupt.sh: Ctrl-C during ./lab's configure, then during its
# build, of a small real CMake project (a static library shared by two
# programs, as the kit's): each time the command says it was interrupted
# (exit status 130), never that the lab does not build, and the next command
# builds the rest and gives the right verdict.
#
# Ctrl-C is what a terminal sends: SIGINT to the whole foreground process
# group (the driver, cmake, make, the compiler). The configure is caught in a
# pause at the end of CMakeLists.txt; the build while the archiver is writing
# the library (it writes half, then waits), so that a library cut in half
# would be there for the next build to trust.
set -euo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
source "$KIT/tools/tests/fixture.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

dir=$work/kit
make_fixture "$dir"
rm -rf "$dir/stub"
unset LABKIT_PRESET LABKIT_SIM_GPUS LABKIT_SIM_MEMORY LABKIT_GNUPLOT LABKIT_PYTHON OPENBLAS_CORETYPE
export LABKIT_PRESET=cpu-only FIXTURE_MARK=$work/started
mkdir -p "$dir/common"
for f in a b c d; do printf 'int core_%s(void) { return 1; }\n' "$f" >"$dir/common/$f.c"; done
cat >"$dir/common/devices.c" <<'EOF'
#include <stdio.h>
#include <string.h>
int core_a(void);
int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--cuda-count") == 0) printf("0\n");
    return core_a() == 1 ? 0 : 1;
}
EOF
cat >"$dir/labs/04_matmul/check.c" <<'EOF'
#include <stdio.h>
int core_a(void), core_b(void), core_c(void), core_d(void);
int main(int argc, char **argv)
{
    const char *device = argc == 3 ? argv[2] : "cpu";
    const int sum = core_a() + core_b() + core_c() + core_d();
    printf("  %s    the library's four functions answer (%d of 4)\n", sum == 4 ? "ok" : "FAIL", sum);
    printf("04_matmul on %s: %s (1 claim %s)\n", device, sum == 4 ? "PASS" : "FAIL", sum == 4 ? "holds" : "fails");
    return sum == 4 ? 0 : 1;
}
EOF
printf 'int main(void) { return 0; }\n' >"$dir/labs/04_matmul/main.c"
# The archiver writes half a library, says so, and waits to be interrupted
# (FIXTURE_SLOW_AR), or archives for real.
cat >"$dir/slow-ar" <<'EOF'
#!/bin/sh
if [ -n "${FIXTURE_SLOW_AR:-}" ]; then
  for a in "$@"; do case $a in *.a) head -c 100 /dev/zero >"$a" ;; esac; done
  : >"$FIXTURE_MARK"
  sleep 60
fi
exec ar "$@"
EOF
chmod +x "$dir/slow-ar"
cat >"$dir/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(fixture LANGUAGES C)
set(unused "${LABKIT_CUDA}${LABKIT_COVERAGE}")
set(CMAKE_AR ${CMAKE_SOURCE_DIR}/slow-ar)
add_library(labkit_core STATIC common/a.c common/b.c common/c.c common/d.c)
add_executable(labkit-devices common/devices.c)
add_executable(check04 labs/04_matmul/check.c labs/04_matmul/lab.c)
add_executable(lab04 labs/04_matmul/main.c labs/04_matmul/lab.c)
foreach(t labkit-devices check04 lab04)
  target_link_libraries(${t} PRIVATE labkit_core)
endforeach()
set_target_properties(labkit-devices PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/common)
set_target_properties(check04 lab04 PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/labs/04_matmul)
if(DEFINED ENV{FIXTURE_SLOW_CONFIGURE})
  file(TOUCH $ENV{FIXTURE_MARK})
  execute_process(COMMAND sleep 60)
endif()
EOF

# Runs "./lab check 04" in a process group of its own, waits for the mark,
# sends Ctrl-C to the group; the command's output in $work/out, its status in rc.
interrupt() {
  rm -f "$FIXTURE_MARK"
  (cd "$dir" && exec setsid ./lab check 04 >"$work/out" 2>&1) &
  local pid=$! i
  for ((i = 0; i < 300; i++)); do
    [[ -e $FIXTURE_MARK ]] && break
    sleep 0.1
  done
  [[ -e $FIXTURE_MARK ]] || fail "the step to interrupt never started"
  kill -INT -- "-$pid" 2>/dev/null || true
  rc=0
  wait "$pid" || rc=$?
}

expect_interrupted() {
  if ((rc != 130)) || ! grep -q "interrupted (Ctrl-C) while $1" "$work/out" || grep -q 'does not build' "$work/out"; then
    fail "Ctrl-C while $1 gave exit status $rc and:"; sed 's/^/    /' "$work/out"
  else
    echo "ok: Ctrl-C while $1: exit status 130, \"$(grep -m1 -o 'interrupted.*' "$work/out")\""
  fi
}

expect_done() {
  local out
  if out=$(cd "$dir" && ./lab check 04 2>&1) && grep -q 'lab 04: done' <<<"$out"; then
    echo "ok: the next ./lab check 04 after it: $(grep -m1 'lab 04:' <<<"$out")"
  else
    fail "the next ./lab check 04 after $1:"; sed 's/^/    /' <<<"$out"
  fi
}

FIXTURE_SLOW_CONFIGURE=1 interrupt
expect_interrupted configuring
[[ -e $dir/build/cpu-only/.lab-configuring ]] || [[ ! -e $dir/build/cpu-only/Makefile ]] ||
  fail "an interrupted configure left a Makefile without .lab-configuring: the next command would not configure again"

FIXTURE_SLOW_AR=1 interrupt
expect_interrupted building
expect_done "a build interrupted while the library was half written"

((failures == 0)) || { echo "driver_interrupt: $failures failures"; exit 1; }
echo "driver_interrupt: both interruptions said so, and the next command built and checked the lab"
