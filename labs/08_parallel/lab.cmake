# lab.cmake: lab 08's given code, OpenMP, and how its check is built (read by
# labs/CMakeLists.txt).
#
# Given code, compiled once for all the lab's programs:
#  - given.c: the serial loop (your lab 04's step 3), the clocks, OpenBLAS's
#    threads;
#  - products.c (and products.cu in a build with CUDA): step 3's products,
#    by a kernel of their own, on a simulated GPU and on a real one;
#  - replica.c: lab 05's MLP (labs/common/) as one replica, and the epoch
#    loop of data-parallel training, on lab 05's very digits.
# The lab runs your own earlier work (LAB_USES): lab 04's i-k-j loop as its
# serial loop, lab 05's backward pass of a layer in every replica. So your
# programs link your labs/04_matmul and labs/05_training_loop code, and the
# solution's link the solutions'.
if(NOT LABKIT_HAVE_OPENMP)
  set(LAB_UNAVAILABLE "it needs OpenMP (gcc has it; with clang: apt-get install libomp-dev), then configure again")
  return()
endif()
list(APPEND LAB_SOURCES ${dir}/given.c ${dir}/products.c ${dir}/replica.c)
list(APPEND LAB_SHARED lab_common lab_common_backward)
list(APPEND LAB_USES 04 05)
if(LABKIT_HAVE_CUDA)
  list(APPEND LAB_SOURCES ${dir}/products.cu)
  set_source_files_properties(${dir}/products.c PROPERTIES COMPILE_DEFINITIONS PRODUCTS_WITH_CUDA=1)
  set_source_files_properties(${dir}/products.cu PROPERTIES COMPILE_OPTIONS
                              "-Xcompiler=-Wall,-Wextra;--Werror=all-warnings")
endif()
list(APPEND LAB_LIBRARIES OpenMP::OpenMP_C)

# Every lab.c of this lab (the student's, the solution's, the wrong
# versions'), in the experiment and in the check alike, is compiled without
# two facts the optimiser would otherwise use: that an int never shares
# memory with a float (-fno-strict-aliasing), and what each pointer may
# point to (-fno-tree-pta), among them that the block of variables an OpenMP
# loop shares is `restrict`. With them, GCC keeps a loop variable that every
# thread shares (a data race: undefined behaviour) in each thread's register,
# and the results come out right by luck; without them it reads and writes
# the one shared variable in memory, and the check sees the wrong cells. A
# correct lab.c compiles to the very same instructions either way (the
# solution's, with GCC 12 at -O3: the same disassembly). Clang has no
# -fno-tree-pta; there the race may stay hidden.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND LAB_CODE_COMPILE_OPTIONS -fno-strict-aliasing -fno-tree-pta)
endif()

# The check makes the calls of steps 3 and 5 fail in turn (a device's
# products, a wait for a device that reports a failed kernel, its forward and
# backward pass, the weighting of a slice's gradients, a sum across the
# devices, a replica's SGD step), to see that your functions pass
# each failure on, and counts the waits between the devices' passes: its
# programs send those calls to check.c first.
list(APPEND LAB_CHECK_LINK_OPTIONS -Wl,--wrap=queue_products -Wl,--wrap=replica_forward_backward -Wl,--wrap=op_scale
     -Wl,--wrap=all_reduce_sum -Wl,--wrap=device_synchronize -Wl,--wrap=replica_sgd_step)

# OpenMP's settings in the environment, tried on the solution's check (tests
# of the kit): with OMP_DYNAMIC=true, which lets OpenMP give a loop fewer
# threads than it asks for, the check turns it off for itself and holds; with
# OMP_THREAD_LIMIT=1 no loop can have 2 threads, and the check fails by a
# claim that says so, never by an empty one.
if(EXISTS ${LABKIT_SOLUTIONS_DIR}/${LAB_NAME}/lab.c)
  add_test(NAME ${LAB_NAME}.kit.omp_dynamic COMMAND check${LAB_NN}-solution --device cpu)
  set_tests_properties(${LAB_NAME}.kit.omp_dynamic PROPERTIES LABELS kit TIMEOUT 120
                       ENVIRONMENT "${LABKIT_CHECK_ENVIRONMENT};OMP_DYNAMIC=true")
  add_test(NAME ${LAB_NAME}.kit.omp_thread_limit
           COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/expect_caught.sh cpu "OpenMP may start the 3 threads"
                   $<TARGET_FILE:check${LAB_NN}-solution>)
  set_tests_properties(${LAB_NAME}.kit.omp_thread_limit PROPERTIES LABELS kit TIMEOUT 120
                       ENVIRONMENT "${LABKIT_CHECK_ENVIRONMENT};OMP_THREAD_LIMIT=1")
  foreach(test omp_dynamic omp_thread_limit)
    labkit_test_needs(TEST ${LAB_NAME}.kit.${test} LABELS kit TARGETS check${LAB_NN}-solution)
  endforeach()
endif()
