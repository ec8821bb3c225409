# Lab 02's given code, compiled once for its four programs: given.c (the slow
# norm log, its inputs, the layer's forward pass) and measure.c (counting and
# timing copies).
list(APPEND LAB_SOURCES ${dir}/given.c ${dir}/measure.c)
