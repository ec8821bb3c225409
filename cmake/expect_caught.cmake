# Runs a check built with a known-wrong version of a lab's solution and passes
# only if the check catches it: exit status 1 and a "FAIL" line whose claim
# begins with CLAIM (the claim the wrong version's patch names). A check that
# passes, crashes, stops elsewhere or blames another claim fails this test.
# A CLAIM "crash in <function>" asks instead for a crash whose report names
# that function of the student's files, with its line.
#   cmake -DPROGRAM=path/to/checkNN-wrong-M -DDEVICE=cpu -DCLAIM="..." -P expect_caught.cmake
# The check stops as soon as that claim fails (LABKIT_CHECK_UNTIL, check.c):
# what it would check after it cannot change this test's verdict.
set(ENV{LABKIT_CHECK_UNTIL} "${CLAIM}")
# LAUNCHER: the lab's launcher (LAB_LAUNCHER: lab 10's mpiexec line), or empty.
execute_process(COMMAND ${LAUNCHER} ${PROGRAM} --device ${DEVICE}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(status EQUAL 77)
  message(FATAL_ERROR "the check skipped ${DEVICE}: it is not here")
endif()
if(CLAIM MATCHES "^crash in ([A-Za-z_][A-Za-z0-9_]*)$")
  # An index past the end of an array stops at its own line (the arrays a check
  # hands to lab.c end at a guard page): such a mistake is caught when the
  # program dies of the signal and its crash report names the function and line.
  set(function ${CMAKE_MATCH_1})
  if(status MATCHES "^[0-9]+$")
    message(FATAL_ERROR "the check exited with ${status}: this known-wrong version must make it crash in ${function}")
  endif()
  string(REGEX MATCH "\ncrash: SIG[A-Z]+" crashed "\n${out}${err}")
  string(REGEX MATCH "\n  ${function} at [^\n]+:[0-9]+" frame "\n${out}${err}")
  if(NOT crashed OR NOT frame)
    message(FATAL_ERROR "the check died (${status}), but no crash report names the line of ${function}")
  endif()
else()
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "the check exited with ${status}: a known-wrong version must make it fail with 1")
  endif()
  string(FIND "${out}" "  FAIL  ${CLAIM}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check failed, but not by the claim \"${CLAIM}\" that must catch this mistake")
  endif()
endif()
