# Lab 06's given code, compiled once for all its programs: the measurements
# the experiment and the check share (measure.c), the mixed-precision MLP of
# step 6 (mixed_mlp.c), and lab 05's synthetic digits, which it learns from
# (labs/05_training_loop/data.c and idx.c, its reader of MNIST's files, need
# nothing of lab 05 but their headers).
list(APPEND LAB_SOURCES ${dir}/measure.c ${dir}/mixed_mlp.c ${dir}/../05_training_loop/data.c
     ${dir}/../05_training_loop/idx.c)

# The check sees whether lab_float_to_bf16 calls the library's answer: every
# call of the library's conversions goes through a counting wrapper in check.c.
set(LAB_CHECK_LINK_OPTIONS -Wl,--wrap=float_to_bf16 -Wl,--wrap=float_to_f16 -Wl,--wrap=float_to_tf32
                           -Wl,--wrap=tensor_convert)
