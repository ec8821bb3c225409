list(APPEND LAB_SOURCES ${dir}/workloads.c)
