# Lab 05's own sources, compiled into all four programs: the MLP, the epoch
# loop, the synthetic digits and the IDX reader (none of them student work).
list(APPEND LAB_SOURCES ${dir}/mlp.c ${dir}/train.c ${dir}/data.c ${dir}/idx.c)
