# Runs a program whose kernels were built for the kernel tools and passes only
# when it passes itself (exit 0) and the kernel sanitizer watched some launches
# and reported nothing: its summary at exit says "kernel sanitizer: 0 reports in
# N launches watched" with N > 0. A program that watched no launch proves
# nothing, and fails. Reports in the kernels named in KNOWN_WRONG (a program's
# own known-wrong kernels, run to be caught) are expected: each of them must
# have one, and no other kernel may.
#   cmake -DPROGRAM=path/to/program -DDEVICE=sim:0 [-DKNOWN_WRONG=k1,k2] -P expect_clean_kernels.cmake
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" KNOWN_WRONG "${KNOWN_WRONG}")
execute_process(COMMAND ${PROGRAM} ${DEVICE} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the program exited with ${status}")
endif()
string(REGEX MATCH "kernel sanitizer: ([0-9]+) reports in ([0-9]+) launches watched" summary "${err}")
if(NOT summary)
  message(FATAL_ERROR "no summary of the kernel sanitizer: were its kernels built for the kernel tools?")
endif()
set(watched ${CMAKE_MATCH_2})
string(REGEX MATCHALL "kernel sanitizer: [a-z -]+ of [a-z]+ memory in [A-Za-z0-9_]+|kernel sanitizer: race on [a-z]+ memory in [A-Za-z0-9_]+|kernel sanitizer: read of uninitialized shared memory in [A-Za-z0-9_]+|kernel sanitizer: the launch failed: [A-Za-z0-9_]+"
       reports "${err}")
set(wrong_reported "")
foreach(report IN LISTS reports)
  string(REGEX REPLACE ".* ([A-Za-z0-9_]+)$" "\\1" kernel "${report}")
  if(NOT kernel IN_LIST KNOWN_WRONG)
    message(FATAL_ERROR "the kernel sanitizer reported a problem in ${kernel}, a kernel that is right: ${report}")
  endif()
  list(APPEND wrong_reported ${kernel})
endforeach()
foreach(kernel IN LISTS KNOWN_WRONG)
  if(NOT kernel IN_LIST wrong_reported)
    message(FATAL_ERROR "the kernel sanitizer said nothing of ${kernel}, a known-wrong kernel")
  endif()
endforeach()
if(watched EQUAL 0)
  message(FATAL_ERROR "the kernel sanitizer watched no launch: nothing was checked")
endif()
