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
  labkit_add_code(check${LAB_NN}-failing-lab ${dir} ${dir} ${failing_dir}/lab.c "")
  set(kernels "")
  if(TARGET lab_solution_kernels_${LAB_NN})
    set(kernels lab_solution_kernels_${LAB_NN})
  endif()
  labkit_link_program(check${LAB_NN}-failing lab_check_${LAB_NN} check${LAB_NN}-failing-lab ${kernels} ${given})
  add_test(NAME ${LAB_NAME}.kit.failing
           COMMAND ${PROJECT_SOURCE_DIR}/tools/tests/failing_verdict.sh $<TARGET_FILE:check${LAB_NN}-failing>
                   ${LAB_NAME})
  set_tests_properties(${LAB_NAME}.kit.failing PROPERTIES LABELS kit TIMEOUT 120
                       ENVIRONMENT "${LABKIT_CHECK_ENVIRONMENT}")
  labkit_test_needs(TEST ${LAB_NAME}.kit.failing LABELS kit TARGETS check${LAB_NN}-failing)
endfunction()
