# Lab 06's given code, compiled once for all its programs: the measurements
# the experiment and the check share (measure.c) and the mixed-precision
# training of step 6 (mixed_mlp.c), on the labs' shared code (labs/common/):
# lab 05's network and its synthetic digits.
list(APPEND LAB_SOURCES ${dir}/measure.c ${dir}/mixed_mlp.c)
list(APPEND LAB_SHARED lab_common)
