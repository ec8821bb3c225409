# Lab 05's own given source, the epoch loop (train.c), and the labs' shared
# code it runs (labs/common/): the MLP with its backward pass through your
# step 1, the synthetic digits and the IDX reader (none of them student work).
list(APPEND LAB_SOURCES ${dir}/train.c)
list(APPEND LAB_SHARED lab_common lab_common_backward)

# test05_inputs: that given code against bad inputs (IDX files that lie or are
# no files at all, networks too large for a device), on its own: the test
# 05_training_loop.unit.inputs. It links the skeleton's lab.c only because
# mlp_backward.c and train.c call the student's functions; it never runs them.
labkit_add_objects(lab_test_inputs_${LAB_NN} ${dir} ${dir} ${dir}/test_inputs.c)
labkit_link_program(test${LAB_NN}_inputs lab_test_inputs_${LAB_NN} lab_code_${LAB_NN} lab_given_${LAB_NN})
add_test(NAME ${LAB_NAME}.unit.inputs COMMAND test${LAB_NN}_inputs)
set_tests_properties(${LAB_NAME}.unit.inputs PROPERTIES LABELS unit TIMEOUT 120
                     ENVIRONMENT "LABKIT_SIM_GPUS=2;LABKIT_SIM_MEMORY=1G")
labkit_test_needs(TEST ${LAB_NAME}.unit.inputs LABELS unit TARGETS test${LAB_NN}_inputs)

# The check refuses each call of steps 1 and 3 to 6 in turn (check.c, "Every
# failure passed on", check_capture_calls_refused, check_file_failures): its
# program's calls of them go through its wrappers.
foreach(call op_matmul op_relu op_relu_backward op_column_sum op_softmax_cross_entropy
             op_softmax_cross_entropy_backward op_add op_scale op_axpy op_sgd_momentum
             tensor_copy_from_host_async tensor_copy_from_host_async_i32
             graph_begin_capture graph_end_capture
             safetensors_save safetensors_open safetensors_find safetensors_load_into)
  list(APPEND LAB_CHECK_LINK_OPTIONS -Wl,--wrap=${call})
endforeach()
