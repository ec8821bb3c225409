# Each lab's check built with its skeleton's unwritten steps turned into
# failures (cmake/inject_failures.cmake): the test NN_name.kit.failing proves
# that ./lab check's verdict then names a claim or the failing call, never an
# empty claim (tools/tests/failing_verdict.sh). Called by labkit_add_lab
# (labs/CMakeLists.txt), whose variables it reads: dir, LAB_NAME, LAB_NN.
function(labkit_add_failing_check)
  set(failing_dir ${CMAKE_CURRENT_BINARY_DIR}/failing/${LAB_NAME})
  add_custom_command(OUTPUT ${failing_dir}/lab.c
    COMMAND ${CMAKE_COMMAND} -DIN=${dir}/lab.c -DOUT=${failing_dir}/lab.c
            -P ${PROJECT_SOURCE_DIR}/cmake/inject_failures.cmake
    DEPENDS ${dir}/lab.c ${PROJECT_SOURCE_DIR}/cmake/inject_failures.cmake
    COMMENT "${LAB_NAME}: the skeleton's steps as failures")
  set(LAB_NO_CUDA_KERNELS ON)
  labkit_add_program(check${LAB_NN}-failing ${dir} ${failing_dir}/lab.c ${dir}/check.c)
  add_test(NAME ${LAB_NAME}.kit.failing
           COMMAND ${PROJECT_SOURCE_DIR}/tools/tests/failing_verdict.sh $<TARGET_FILE:check${LAB_NN}-failing>
                   ${LAB_NAME})
  set_tests_properties(${LAB_NAME}.kit.failing PROPERTIES LABELS kit TIMEOUT 120
                       ENVIRONMENT "${LABKIT_CHECK_ENVIRONMENT}")
endfunction()
