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
