# A skeleton's lab.c with every unwritten step turned into a failure: each
# `return todo("...");` returns fail(STATUS_BAD_ARGUMENT, "injected failure
# (...)") instead, as a student's step that fails would (cmake/failing_check.cmake).
#   cmake -DIN=labs/NN_name/lab.c -DOUT=.../lab.c -P inject_failures.cmake
file(READ ${IN} text)
string(REGEX REPLACE "return todo\\(([^;]*)\\);" "return fail(STATUS_BAD_ARGUMENT, \"injected failure (%s)\", \\1);"
       text "${text}")
if(NOT text MATCHES "injected failure")
  message(FATAL_ERROR "${IN} has no `return todo(...);` to turn into a failure")
endif()
file(WRITE ${OUT} "${text}")
