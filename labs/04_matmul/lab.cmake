# lab.cmake: the naive kernel's CUDA side (read by labs/CMakeLists.txt).
#
# The naive kernel, naive_kernel.cuh, is the student's work (step 6), so each
# program runs the kernel that sits beside its own lab.c: labs/04_matmul's for
# lab04 and check04, solutions/04_matmul's for the -solution programs.
#  - Simulated GPU: lab.c includes "naive_kernel.cuh" with quotes, which look in
#    lab.c's own directory first.
#  - Real GPU: nvcc compiles naive_cuda.cu, which includes <naive_kernel.cuh>
#    from the include path, where each program has its lab.c's directory first.
#    Without CUDA, a C stand-in defines the same launcher, so that the programs
#    link (naive_cuda_absent.c).
if(LABKIT_HAVE_CUDA)
  list(APPEND LAB_KERNEL_SOURCES ${dir}/naive_cuda.cu)
else()
  list(APPEND LAB_KERNEL_SOURCES ${dir}/naive_cuda_absent.c)
endif()
