# Lab 01's given code: the published cards (cards.c), which the experiment and
# the check both read, and the layer's release (given.c).
list(APPEND LAB_SOURCES ${dir}/cards.c ${dir}/given.c)

# try_gpu and try_all_gpus answer for the GPUs a process sees, and the library
# counts them once, when the process starts using it: so the check also runs in
# other processes that see other GPUs (the tests 01_devices.solution.cpu.nogpu
# and .onegpu; ./lab check runs them too). CUDA_VISIBLE_DEVICES=-1 hides any
# real GPU, so that each environment is the same on every machine.
set(LAB_CHECK_ENVIRONMENTS nogpu onegpu)
# No GPU at all: every try_gpu(i) is the CPU, try_all_gpus() is [cpu].
set(LAB_CHECK_ENVIRONMENT_nogpu LABKIT_SIM_GPUS=0 CUDA_VISIBLE_DEVICES=-1)
# One GPU: where lesson 000's bug answers the CPU even for try_gpu(0).
set(LAB_CHECK_ENVIRONMENT_onegpu LABKIT_SIM_GPUS=1 CUDA_VISIBLE_DEVICES=-1)

# Steps 1 to 3 are to be written, not borrowed from the library (lab.h): the
# check programs reach the library's own answers through check.c, which counts
# the calls made of them while one of your functions runs.
set(LAB_CHECK_LINK_OPTIONS
    "LINKER:--wrap=try_gpu,--wrap=try_all_gpus,--wrap=fp32_cores_per_multiprocessor,--wrap=peak_fp32_gflops")
