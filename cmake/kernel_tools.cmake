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

# For labs/CMakeLists.txt: the lab's launchers (LAB_KERNEL_SOURCES' .c files,
# not the .cu ones: the tools watch the simulated GPU) compiled beside the
# kernels of code_dir and built for the kernel tools, into the object library
# `target`. labkit_add_code's options; no LAB_WITH_CUDA, as in a wrong version
# tested on cpu and sim only.
function(labkit_add_instrumented_launchers target code_dir)
  set(launchers ${LAB_KERNEL_SOURCES})
  list(FILTER launchers INCLUDE REGEX "\\.c$")
  labkit_add_code(${target} ${dir} ${code_dir} "" "${launchers}")
  target_compile_options(${target} PRIVATE ${LABKIT_KERNEL_TOOLS_FLAGS})
endfunction()

# A lab's programs for the kernel tools, when it has kernel launchers (called
# by labkit_add_lab, in its scope: LAB_NN, dir, the object libraries):
#   which = yours:     checkNN-kernels, labNN-kernels, the student's
#                      (./lab check NN --kernels, ./lab profile NN), built
#                      only when asked for; `given` their other objects
#   which = solution:  checkNN-solution-kernels, labNN-solution-kernels and
#                      the test NN_name.kernels.sim in the suite: the
#                      solution's kernels run clean
# The check programs and the test only for a lab whose check.c has a kernels
# claim (it calls check_kernels_only()); the experiment's for every lab with
# launchers (./lab profile NN). lab.c is compiled as the lab compiles it (the
# solution's lab_solution_NN; the student's lab.c again, apart from its plain
# launchers).
function(labkit_add_lab_kernel_tools which given)
  set(launchers ${LAB_KERNEL_SOURCES})
  list(FILTER launchers INCLUDE REGEX "\\.c$")
  if(NOT LABKIT_HAVE_KERNEL_TOOLS OR NOT launchers)
    return()
  endif()
  if(which STREQUAL "yours")
    labkit_add_code(lab_code_tools_${LAB_NN} ${dir} ${dir} ${dir}/lab.c "")
    labkit_add_instrumented_launchers(lab_launchers_tools_${LAB_NN} ${dir})
    set(code lab_code_tools_${LAB_NN} lab_launchers_tools_${LAB_NN})
    set(suffix -kernels)
    set_target_properties(${code} PROPERTIES EXCLUDE_FROM_ALL ON)
  else()
    labkit_add_instrumented_launchers(lab_solution_launchers_tools_${LAB_NN} ${LABKIT_SOLUTIONS_DIR}/${LAB_NAME})
    set(code lab_solution_${LAB_NN} lab_solution_launchers_tools_${LAB_NN})
    set(suffix -solution-kernels)
  endif()
  labkit_link_program(lab${LAB_NN}${suffix} lab_main_${LAB_NN} ${code} ${given})
  set_target_properties(lab${LAB_NN}${suffix} PROPERTIES EXCLUDE_FROM_ALL ON)
  # The check only where it has a kernels claim (labkit/check_kernels.h): a
  # check without one would run all its claims instrumented, its timings too.
  file(STRINGS ${dir}/check.c claim REGEX "check_kernels_only\\(\\)")
  if(NOT claim)
    return()
  endif()
  labkit_link_program(check${LAB_NN}${suffix} lab_check_${LAB_NN} ${code} ${given})
  set_property(GLOBAL APPEND PROPERTY LABKIT_KERNELS_CLAIM_LABS ${LAB_NN})
  if(which STREQUAL "yours")
    set_target_properties(check${LAB_NN}${suffix} PROPERTIES EXCLUDE_FROM_ALL ON)
  else()
    labkit_add_check_test(${LAB_NAME}.kernels.sim check${LAB_NN}${suffix} sim:0 solution)
  endif()
endfunction()

# A known-wrong version whose patch says what the kernel sanitizer reports:
#   # kernels: out-of-bounds write "c[row * n + col] = sum;"
# (the report's first words, then the text of the line it must name, in the
# patched files). Its check built for the tools must fail its kernels claim
# with that report at that line: test NN_name.kernels.wrong.<mistake>. A wrong
# kernel that runs clean but whose profiler counts give it away says which
# claim of the kernels check fails instead:
#   # kernels: claim "your copy is coalesced"
function(labkit_add_wrong_kernels patch wrong_dir mistake objects)
  labkit_patch_field(${patch} "kernels" expected)
  if(NOT expected OR NOT LABKIT_HAVE_KERNEL_TOOLS)
    return()
  endif()
  if(NOT expected MATCHES "^([^\"]+) \"(.+)\"$")
    message(FATAL_ERROR "${patch}: \"# kernels:\" takes the report's first words and the line's text in quotes")
  endif()
  set(kind "${CMAKE_MATCH_1}")
  set(snippet "${CMAKE_MATCH_2}")
  file(STRINGS ${dir}/check.c claim REGEX "check_kernels_only\\(\\)")
  if(NOT claim)
    message(FATAL_ERROR "${patch}: \"# kernels:\" needs a kernels claim in labs/${LAB_NAME}/check.c "
                        "(labkit/check_kernels.h), which it has not")
  endif()
  set(plain check${LAB_NN}-wrong-${mistake})
  set(program ${plain}-kernel-tools) # ${plain}-kernels is its kernels' objects
  # the plain program's objects, its launchers built for the tools instead:
  # beside the patched kernels when the patch changes one (the plain
  # program's targets apply the patch first), else the solution's
  list(FILTER objects EXCLUDE REGEX "^(${plain}-kernels|lab_solution_kernels_${LAB_NN})$")
  if(TARGET ${plain}-kernels)
    labkit_add_instrumented_launchers(${program}-launchers ${wrong_dir})
    add_dependencies(${program}-launchers ${plain}-kernels)
    list(APPEND objects ${program}-launchers)
  else()
    list(APPEND objects lab_solution_launchers_tools_${LAB_NN})
  endif()
  labkit_link_program(${program} ${objects})
  set(test ${LAB_NAME}.kernels.wrong.${mistake})
  labkit_check_environment("" environment)
  add_test(NAME ${test}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DDEVICE=sim:0 -DDIR=${wrong_dir}
                   "-DKIND=${kind}" "-DSNIPPET=${snippet}" -P ${PROJECT_SOURCE_DIR}/cmake/expect_kernel_report.cmake)
  set_tests_properties(${test} PROPERTIES LABELS wrong TIMEOUT 120 ENVIRONMENT "${environment}")
  labkit_test_needs(TEST ${test} LABELS wrong TARGETS ${program})
endfunction()

# build/<preset>/kernels-claims.txt: the labs whose checks have a kernels
# claim, "04 07 09", the labs the configure made checkNN-kernels programs
# for, as ./lab reads them (tools/lab/kernels.sh): ./lab check NN --kernels
# runs for those, and ./lab check NN says done there only when the claim
# holds too. Written once every lab is added; empty without the kernel tools.
function(labkit_write_kernels_claims)
  get_property(labs GLOBAL PROPERTY LABKIT_KERNELS_CLAIM_LABS)
  if(labs)
    list(REMOVE_DUPLICATES labs)
    list(SORT labs)
  endif()
  string(REPLACE ";" " " labs "${labs}")
  file(WRITE ${CMAKE_BINARY_DIR}/kernels-claims.txt "${labs}\n")
endfunction()
