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
# for the lab driver (tools/lab/kernels.sh), which reads the cache
set(LABKIT_HAVE_KERNEL_TOOLS ${LABKIT_HAVE_KERNEL_TOOLS} CACHE INTERNAL "the kernel sanitizer and profiler are built")

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

# For labs/CMakeLists.txt: a lab program (labkit_add_program's arguments) whose
# kernel launchers, LAB_KERNEL_SOURCES' .c files, are built for the kernel
# tools; without the .cu launchers (the tools watch the simulated GPU).
function(labkit_add_kernels_program name dir lab_c)
  set(launchers ${LAB_KERNEL_SOURCES})
  list(FILTER launchers INCLUDE REGEX "\\.c$")
  set(LAB_KERNEL_SOURCES "")
  set(LAB_NO_CUDA_KERNELS ON)
  labkit_add_program(${name} ${dir} ${lab_c} ${ARGN})
  labkit_instrument_kernels(${name} ${launchers})
endfunction()

# A lab's programs for the kernel tools, when it has kernel launchers:
#   checkNN-kernels, labNN-kernels   the student's (./lab check NN --kernels,
#                                    ./lab profile NN); built when asked for
#   checkNN-solution-kernels         and its test NN_name.kernels.sim, in the
#   labNN-solution-kernels           suite: the solution's kernels run clean
function(labkit_add_lab_kernel_tools solution)
  set(launchers ${LAB_KERNEL_SOURCES})
  list(FILTER launchers INCLUDE REGEX "\\.c$")
  if(NOT LABKIT_HAVE_KERNEL_TOOLS OR NOT launchers)
    return()
  endif()
  labkit_add_kernels_program(check${LAB_NN}-kernels ${dir} ${dir}/lab.c ${dir}/check.c)
  labkit_add_kernels_program(lab${LAB_NN}-kernels ${dir} ${dir}/lab.c ${dir}/main.c)
  set_target_properties(check${LAB_NN}-kernels lab${LAB_NN}-kernels PROPERTIES EXCLUDE_FROM_ALL ON)
  if(EXISTS ${solution})
    labkit_add_kernels_program(check${LAB_NN}-solution-kernels ${dir} ${solution} ${dir}/check.c)
    labkit_add_kernels_program(lab${LAB_NN}-solution-kernels ${dir} ${solution} ${dir}/main.c)
    set_target_properties(lab${LAB_NN}-solution-kernels PROPERTIES EXCLUDE_FROM_ALL ON)
    labkit_add_check_test(${LAB_NAME}.kernels.sim check${LAB_NN}-solution-kernels sim:0 solution)
  endif()
endfunction()

# A known-wrong version whose patch says what the kernel sanitizer reports:
#   # kernels: out-of-bounds write "c[row * n + col] = sum;"
# (the report's first words, then the text of the line it must name, in the
# patched files). Its check built for the tools must fail its kernels claim
# with that report at that line: test NN_name.kernels.wrong.<mistake>.
function(labkit_add_wrong_kernels patch wrong_dir mistake)
  labkit_patch_field(${patch} "kernels" expected)
  if(NOT expected OR NOT LABKIT_HAVE_KERNEL_TOOLS)
    return()
  endif()
  if(NOT expected MATCHES "^([^\"]+) \"(.+)\"$")
    message(FATAL_ERROR "${patch}: \"# kernels:\" takes the report's first words and the line's text in quotes")
  endif()
  set(kind "${CMAKE_MATCH_1}")
  set(snippet "${CMAKE_MATCH_2}")
  set(program check${LAB_NN}-wrong-${mistake}-kernels)
  labkit_add_kernels_program(${program} ${dir} ${wrong_dir}/lab.c ${dir}/check.c)
  # the plain wrong program's target makes the patched files its launchers include
  add_dependencies(${program}-kernel-objects check${LAB_NN}-wrong-${mistake})
  set(test ${LAB_NAME}.kernels.wrong.${mistake})
  labkit_check_environment("" environment)
  add_test(NAME ${test}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DDEVICE=sim:0 -DDIR=${wrong_dir}
                   "-DKIND=${kind}" "-DSNIPPET=${snippet}" -P ${PROJECT_SOURCE_DIR}/cmake/expect_kernel_report.cmake)
  set_tests_properties(${test} PROPERTIES LABELS wrong TIMEOUT 120 ENVIRONMENT "${environment}")
endfunction()
