# kernel_tools.cmake: programs whose kernels the kernel sanitizer and the memory
# profiler watch (labkit/kernel_sanitizer.h, labkit/kernel_profile.h).
#
# The files that hold kernels for the simulated GPU (a launcher .c that
# includes a .cuh after labkit/cuda_emulation.h) are compiled a second time
# with GCC's ThreadSanitizer instrumentation, but the program is linked without
# its runtime: the __tsan_* callbacks that every load, store and atomic of the
# kernel calls are the kit's own (common/core/src/sim/ktools.c). Function entry
# and exit are not instrumented (the tools need the accesses only);
# -fsanitize-coverage=trace-pc marks every basic block, for the profiler's
# divergent branches. nvcc's side is untouched: the .cu launchers never get
# these flags. -Wno-tsan: GCC warns that __threadfence()'s fence is not
# instrumented, which the simulated GPU does not need.
#
# Only with GCC, and not in a build that is already instrumented (AddressSanitizer
# cannot be combined with it; gcov's counters would count the tools' calls).
set(LABKIT_KERNEL_TOOLS_FLAGS -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
    -fsanitize-coverage=trace-pc -Wno-tsan -gdwarf-4)
set(LABKIT_HAVE_KERNEL_TOOLS OFF)
set(LABKIT_KERNEL_TOOLS_WHY "")
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set(LABKIT_KERNEL_TOOLS_WHY "they need GCC's -fsanitize=thread instrumentation (the compiler is ${CMAKE_C_COMPILER_ID})")
elseif(CMAKE_C_FLAGS MATCHES "-fsanitize")
  set(LABKIT_KERNEL_TOOLS_WHY "this build is instrumented already (${CMAKE_C_FLAGS})")
elseif(LABKIT_COVERAGE)
  set(LABKIT_KERNEL_TOOLS_WHY "this is the coverage build")
else()
  set(LABKIT_HAVE_KERNEL_TOOLS ON)
endif()

# labkit_instrument_kernels(<target> <source>...): compiles each <source> for
# the kernel tools, with <target>'s own include directories, definitions and
# options, into <target> (which must not list them itself).
function(labkit_instrument_kernels target)
  if(NOT LABKIT_HAVE_KERNEL_TOOLS)
    message(FATAL_ERROR "labkit_instrument_kernels(${target}): no kernel tools here: ${LABKIT_KERNEL_TOOLS_WHY}")
  endif()
  set(objects ${target}-kernel-objects)
  add_library(${objects} OBJECT ${ARGN})
  target_include_directories(${objects} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
  target_compile_definitions(${objects} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
  target_compile_options(${objects} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_OPTIONS>
                         ${LABKIT_KERNEL_TOOLS_FLAGS})
  # the kit's headers (labkit/cuda_emulation.h) and its _GNU_SOURCE
  target_link_libraries(${objects} PRIVATE labkit_core)
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
endfunction()
