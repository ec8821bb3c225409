# Runs a check built with an untouched skeleton and passes only if it fails
# (exit status 1) with a "TODO:" message: the kit's promise that a student who
# has not started sees what to do, not a crash or a false success.
#   cmake -DPROGRAM=path/to/checkNN -DDEVICE=cpu -P expect_todo.cmake
# LAUNCHER: the lab's launcher (LAB_LAUNCHER: lab 10's mpiexec line), or empty.
execute_process(COMMAND ${LAUNCHER} ${PROGRAM} --device ${DEVICE}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 1)
  message(FATAL_ERROR "the skeleton's check exited with ${status}; an untouched skeleton must fail with 1")
endif()
if(NOT "${out}${err}" MATCHES "TODO: ")
  message(FATAL_ERROR "the skeleton's check failed without a \"TODO: \" message")
endif()
