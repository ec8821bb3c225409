# lab.cmake: the launchers of your kernel (read by labs/CMakeLists.txt).
#
# Your kernel, naive_kernel.cuh, is step 6's work, so each program compiles the
# one beside its own lab.c: labs/04_matmul's for lab04 and check04,
# solutions/04_matmul's for the -solution programs. The two given files that
# include it are therefore kernel sources, compiled with each program:
#  - naive_launch.c, for the simulated GPU (always);
#  - naive_launch.cu, for a real GPU, where nvcc was found; naive_launch.c then
#    names its launcher (LAB_WITH_CUDA, which labs/CMakeLists.txt defines for a
#    program that compiles a .cu), and without it device_launch says that this
#    program cannot launch on cuda:N.
list(APPEND LAB_KERNEL_SOURCES ${dir}/naive_launch.c)
if(LABKIT_HAVE_CUDA)
  list(APPEND LAB_KERNEL_SOURCES ${dir}/naive_launch.cu)
  set_source_files_properties(${dir}/naive_launch.cu PROPERTIES COMPILE_OPTIONS
                              "-Xcompiler=-Wall,-Wextra;--Werror=all-warnings")
endif()

# The check counts the calls to the library's products made inside your loops
# and your launch (they must be your own work): every call to op_matmul and
# cblas_sgemm in a check program goes through the check's counting wrapper.
# Every call to device_get_properties goes through the harness's (check.h,
# check_pretend_unknown_peak), which can report a
# peak of 0 (unknown), as no device here does: lab_fraction_of_peak must then
# give 0. And every call to device_launch through one that keeps the grid and
# the blocks of your launch, which the check compares with the sizes of c.
set(LAB_CHECK_LINK_OPTIONS
    "-Wl,--wrap=op_matmul,--wrap=cblas_sgemm,--wrap=device_get_properties,--wrap=device_launch")
