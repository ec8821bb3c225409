# lab.cmake: lab 10's given code, MPI, and how its programs are started (read
# by labs/CMakeLists.txt).
#
# Given code, compiled once for all the lab's programs: train.c, lab 05's
# network (labs/common/) on one rank and the step of data-parallel training
# around your step 3. Its backward pass is your lab 05's step 1 (LAB_USES).
if(NOT LABKIT_HAVE_MPI)
  set(LAB_UNAVAILABLE "it needs MPI (apt-get install openmpi-bin libopenmpi-dev, or ./lab deps), then configure again")
  return()
endif()
list(APPEND LAB_SOURCES ${dir}/train.c ${dir}/nccl_mpi.c)
# nccl_mpi.c: NCCL bootstrapped over MPI on real GPUs, where CMake found CUDA
# and NCCL (cmake/dependencies.cmake); elsewhere its calls say it is not built.
if(LABKIT_HAVE_NCCL)
  set_source_files_properties(${dir}/nccl_mpi.c PROPERTIES COMPILE_DEFINITIONS LAB10_WITH_NCCL=1
                              INCLUDE_DIRECTORIES "${LABKIT_NCCL_INCLUDE_DIR}")
  list(APPEND LAB_LIBRARIES ${LABKIT_NCCL_LIBRARY} CUDA::cudart)
endif()
list(APPEND LAB_SHARED lab_common lab_common_backward)
list(APPEND LAB_USES 05)
list(APPEND LAB_LIBRARIES MPI::MPI_C)

# The check notes what each call of the student's allocates and frees, and
# refuses each allocation and copy of step 3 in turn (check.c, "what your
# calls leave allocated"): its program's calls of these go through its
# wrappers. MPI's own, in its shared library, do not.
foreach(call malloc calloc realloc free tensor_to_host tensor_copy_from_host tensor_copy_from_host_async)
  list(APPEND LAB_CHECK_LINK_OPTIONS -Wl,--wrap=${call})
endforeach()

# Every program of the lab runs as LABKIT_RANKS processes (2 when unset),
# started by FindMPI's mpiexec line: the checks in CTest, ./lab check and
# ./lab run. `launch` beside the programs is that line.
set(LAB_LAUNCHER ${CMAKE_CURRENT_BINARY_DIR}/${LAB_NAME}/launch)
string(REPLACE ";" " " launch_preflags "${MPIEXEC_PREFLAGS}")
file(CONFIGURE OUTPUT ${LAB_LAUNCHER} @ONLY CONTENT [[#!/bin/sh
# Starts a program of lab 10 as LABKIT_RANKS processes (2 when unset), with
# the MPI that the build found (labs/10_distributed/lab.cmake writes it).
# Open MPI keeps its own allocations to the end of the process (about 3400 in
# libmpi and its plugins, none the kit's or the student's): LeakSanitizer
# would fail every rank of a check built with AddressSanitizer on them.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Open MPI 4 (Debian 12's, Ubuntu 24.04's) refuses to start even ranks on this
# machine alone when it finds neither ssh nor rsh (a container, the grading
# sandbox): it only needs one to reach other machines, so name a command that
# is there (never called). MPICH ignores the variable.
if ! command -v ssh >/dev/null 2>&1 && ! command -v rsh >/dev/null 2>&1; then
  export OMPI_MCA_plm_rsh_agent="${OMPI_MCA_plm_rsh_agent:-false}"
fi
exec "@MPIEXEC_EXECUTABLE@" @MPIEXEC_NUMPROC_FLAG@ "${LABKIT_RANKS:-2}" @launch_preflags@ "$@"
]])
file(CHMOD ${LAB_LAUNCHER} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
     WORLD_EXECUTE)

# The checks run with 2 ranks, and again with 3 (./lab check 10 as well):
# with 3, a ring's left and right neighbours are different ranks, and 61 rows
# do not split evenly.
set(LAB_CHECK_ENVIRONMENTS ranks3)
set(LAB_CHECK_ENVIRONMENT_ranks3 LABKIT_RANKS=3)
if(EXISTS ${LABKIT_SOLUTIONS_DIR}/${LAB_NAME}/lab.c)
  labkit_check_environment(ranks3 environment)
  add_test(NAME ${LAB_NAME}.solution.sim.ranks3 COMMAND ${LAB_LAUNCHER} $<TARGET_FILE:check${LAB_NN}-solution>
                                                        --device sim:0)
  set_tests_properties(${LAB_NAME}.solution.sim.ranks3 PROPERTIES LABELS solution SKIP_RETURN_CODE 77 TIMEOUT 120
                       ENVIRONMENT "${environment}")
  labkit_test_needs(TEST ${LAB_NAME}.solution.sim.ranks3 LABELS solution TARGETS check${LAB_NN}-solution)
  # On a machine with one real GPU, one rank: NCCL takes a GPU per rank, and
  # its claim (NCCL bootstrapped over MPI) runs only then. Skipped without a GPU.
  add_test(NAME ${LAB_NAME}.gpu.cuda0.ranks1 COMMAND ${LAB_LAUNCHER} $<TARGET_FILE:check${LAB_NN}-solution>
                                                      --device cuda:0)
  set_tests_properties(${LAB_NAME}.gpu.cuda0.ranks1 PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 120
                       ENVIRONMENT "${LABKIT_CHECK_ENVIRONMENT};LABKIT_RANKS=1")
  labkit_test_needs(TEST ${LAB_NAME}.gpu.cuda0.ranks1 LABELS gpu TARGETS check${LAB_NN}-solution)
endif()
