# lab.cmake: the naive kernel's CUDA side (read by labs/CMakeLists.txt).
#
# The naive kernel, naive_kernel.cuh, is the student's work (step 6), so each
# program must run the kernel that sits beside its own lab.c: labs/04_matmul's
# for lab04 and check04, solutions/04_matmul's for lab04-solution and
# check04-solution.
#  - Simulated GPU: lab.c includes "naive_kernel.cuh" with quotes, which look in
#    lab.c's own directory first. Nothing to do here.
#  - Real GPU: nvcc compiles naive_cuda.cu, which includes <naive_kernel.cuh>
#    from the include path, where labs/04_matmul is; the solution programs get
#    their own directory put in front. The programs are made after this file is
#    read, hence cmake_language(DEFER): it runs at the end of labs/CMakeLists.txt.
#    Without CUDA, a C stand-in defines the same launcher, so that the programs
#    link (naive_cuda_absent.c).
if(LABKIT_HAVE_CUDA)
  list(APPEND LAB_SOURCES ${dir}/naive_cuda.cu)
  if(EXISTS ${LABKIT_SOLUTIONS_DIR}/04_matmul/lab.c AND EXISTS ${LABKIT_SOLUTIONS_DIR}/04_matmul/naive_kernel.cuh)
    function(lab04_solution_compiles_its_own_kernel)
      foreach(program lab04-solution check04-solution)
        target_include_directories(${program} BEFORE PRIVATE ${LABKIT_SOLUTIONS_DIR}/04_matmul)
      endforeach()
    endfunction()
    cmake_language(DEFER CALL lab04_solution_compiles_its_own_kernel)
  endif()
else()
  list(APPEND LAB_SOURCES ${dir}/naive_cuda_absent.c)
endif()
