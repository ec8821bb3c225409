# Lab 02's timed copies (measure.c) are shared by its experiment and its check.
list(APPEND LAB_SOURCES ${dir}/measure.c)
