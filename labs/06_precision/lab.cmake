# Lab 06's given code, compiled once for all its programs: the measurements
# the experiment and the check share (measure.c) and the mixed-precision
# training of step 6 (mixed_mlp.c), on the labs' shared code (labs/common/):
# lab 05's network and its synthetic digits.
list(APPEND LAB_SOURCES ${dir}/measure.c ${dir}/mixed_mlp.c)
list(APPEND LAB_SHARED lab_common)

# The check sees whether lab_float_to_bf16 calls the library's answer: every
# call of the library's conversions goes through a counting wrapper in check.c.
set(LAB_CHECK_LINK_OPTIONS -Wl,--wrap=float_to_bf16 -Wl,--wrap=float_to_f16 -Wl,--wrap=float_to_tf32
                           -Wl,--wrap=tensor_convert)
