# Runs a check built with a known-wrong version of a lab's solution and passes
# only if the check catches it: exit status 1 and a "FAIL" line whose claim
# begins with CLAIM (the claim the wrong version's patch names). A check that
# passes, crashes, stops elsewhere or blames another claim fails this test.
#   cmake -DPROGRAM=path/to/checkNN-wrong-M -DDEVICE=cpu -DCLAIM="..." -P expect_caught.cmake
# The check stops as soon as that claim fails (LABKIT_CHECK_UNTIL, check.c):
# what it would check after it cannot change this test's verdict.
set(ENV{LABKIT_CHECK_UNTIL} "${CLAIM}")
execute_process(COMMAND ${PROGRAM} --device ${DEVICE}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(status EQUAL 77)
  message(FATAL_ERROR "the check skipped ${DEVICE}: it is not here")
endif()
if(NOT status EQUAL 1)
  message(FATAL_ERROR "the check exited with ${status}: a known-wrong version must make it fail with 1")
endif()
string(FIND "${out}" "  FAIL  ${CLAIM}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the check failed, but not by the claim \"${CLAIM}\" that must catch this mistake")
endif()
