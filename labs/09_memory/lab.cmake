# lab.cmake: lab 09's given code and the launchers of your kernels (read by
# labs/CMakeLists.txt).
#
# given.c (device arrays, float64 references, timing) is compiled once for
# the lab's programs. Your kernels, memory_kernels.cuh, are steps 1 to 3, so
# each program compiles the file beside its own lab.c: labs/09_memory's for
# lab09 and check09, solutions/09_memory's for the -solution programs. The two
# given files that include it are therefore kernel sources, compiled with each
# program:
#  - launch.c, for the simulated GPU and the CPU (always);
#  - launch.cu, for a real GPU, where nvcc was found; launch.c then names its
#    launchers (LAB_WITH_CUDA, which labs/CMakeLists.txt defines for a program
#    that compiles a .cu: a known-wrong version tested on cpu and sim only
#    does not), and without it device_launch says that this program cannot
#    launch on cuda:N.
list(APPEND LAB_SOURCES ${dir}/given.c)
list(APPEND LAB_SHARED lab_common_timing) # time_call and host_copy (labs/common/)
list(APPEND LAB_KERNEL_SOURCES ${dir}/launch.c)
if(LABKIT_HAVE_CUDA)
  list(APPEND LAB_KERNEL_SOURCES ${dir}/launch.cu)
  set_source_files_properties(${dir}/launch.cu PROPERTIES COMPILE_OPTIONS
                              "-Xcompiler=-Wall,-Wextra;--Werror=all-warnings")
endif()
