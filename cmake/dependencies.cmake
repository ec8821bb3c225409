# Finds what the kit builds with: OpenBLAS, cJSON, libffi and threads
# (required), CUDA (optional), gnuplot (optional, only run by the programs); and
# chooses how the simulated GPU switches between the threads of a block.

# ---- OpenBLAS -------------------------------------------------------------
set(BLA_VENDOR OpenBLAS)
find_package(BLAS QUIET)
if(NOT BLAS_FOUND)
  message(FATAL_ERROR
    "OpenBLAS was not found.\n"
    "  Install it with: sudo apt-get install libopenblas-dev   (or: ./lab deps)\n"
    "  then configure again.")
endif()
include(CheckIncludeFile)
check_include_file(cblas.h LABKIT_HAVE_CBLAS_H)
if(NOT LABKIT_HAVE_CBLAS_H)
  message(FATAL_ERROR
    "cblas.h was not found although OpenBLAS was (${BLAS_LIBRARIES}).\n"
    "  Install the headers with: sudo apt-get install libopenblas-dev")
endif()

# ---- cJSON: the JSON headers of safetensors files (labkit/safetensors.h) ------
# Found by its header and library, so that a build of one's own can be given
# with -DCJSON_INCLUDE_DIR=... -DCJSON_LIBRARY=...
find_path(CJSON_INCLUDE_DIR cjson/cJSON.h)
find_library(CJSON_LIBRARY NAMES cjson)
if(NOT CJSON_INCLUDE_DIR OR NOT CJSON_LIBRARY)
  message(FATAL_ERROR
    "cJSON was not found (cjson/cJSON.h and libcjson): the kit reads and writes\n"
    "  network parameters as safetensors files, whose headers it parses with cJSON.\n"
    "  Install it with: sudo apt-get install libcjson-dev   (or: ./lab deps)\n"
    "  then configure again.")
endif()
file(STRINGS ${CJSON_INCLUDE_DIR}/cjson/cJSON.h LABKIT_CJSON_VERSION_LINES
     REGEX "^#define CJSON_VERSION_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE "[^0-9;]*([0-9]+)[^;]*" "\\1" LABKIT_CJSON_VERSION "${LABKIT_CJSON_VERSION_LINES}")
string(REPLACE ";" "." LABKIT_CJSON_VERSION "${LABKIT_CJSON_VERSION}")
add_library(labkit::cjson UNKNOWN IMPORTED)
set_target_properties(labkit::cjson PROPERTIES
  IMPORTED_LOCATION ${CJSON_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${CJSON_INCLUDE_DIR})

# ---- libffi: the calls of a kernel's threads on the simulated GPU --------------
# A kernel whose threads meet at a barrier runs each thread as a fiber, which
# calls the kernel with its launch's arguments through libffi
# (common/core/src/sim/coop_call.c). Found like cJSON: -DFFI_INCLUDE_DIR=...
# -DFFI_LIBRARY=... name a build of one's own.
find_path(FFI_INCLUDE_DIR ffi.h PATH_SUFFIXES ffi)
find_library(FFI_LIBRARY NAMES ffi)
if(NOT FFI_INCLUDE_DIR OR NOT FFI_LIBRARY)
  message(FATAL_ERROR
    "libffi was not found (ffi.h and libffi): the simulated GPU calls the kernels\n"
    "  whose threads meet at barriers (__syncthreads, warp shuffles) through it.\n"
    "  Install it with: sudo apt-get install libffi-dev   (or: ./lab deps)\n"
    "  then configure again.")
endif()
file(STRINGS ${FFI_INCLUDE_DIR}/ffi.h LABKIT_FFI_VERSION_LINE REGEX "^ *libffi [0-9.]+" LIMIT_COUNT 1)
string(REGEX REPLACE "^ *libffi ([0-9.]+).*" "\\1" LABKIT_FFI_VERSION "${LABKIT_FFI_VERSION_LINE}")
add_library(labkit::ffi UNKNOWN IMPORTED)
set_target_properties(labkit::ffi PROPERTIES
  IMPORTED_LOCATION ${FFI_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${FFI_INCLUDE_DIR})

# ---- the switch between a block's threads on the simulated GPU ----------------
# Hand-written for x86-64 and aarch64 (src/sim/fiber_switch_*.S: tens of
# nanoseconds), POSIX's swapcontext elsewhere (a system call per switch,
# microseconds). -DLABKIT_FIBER_SWITCH=ucontext picks the latter anywhere.
set(LABKIT_FIBER_SWITCH auto CACHE STRING "How the simulated GPU switches between threads: auto, asm or ucontext")
set_property(CACHE LABKIT_FIBER_SWITCH PROPERTY STRINGS auto asm ucontext)
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" labkit_processor)
set(LABKIT_FIBER_ASM "")
if(labkit_processor MATCHES "^(x86_64|amd64)$")
  set(LABKIT_FIBER_ASM x86_64)
elseif(labkit_processor MATCHES "^(aarch64|arm64)$")
  set(LABKIT_FIBER_ASM aarch64)
endif()
if(LABKIT_FIBER_SWITCH STREQUAL "ucontext" OR NOT LABKIT_FIBER_ASM)
  if(LABKIT_FIBER_SWITCH STREQUAL "asm")
    message(FATAL_ERROR "LABKIT_FIBER_SWITCH=asm: there is no hand-written switch for ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  set(LABKIT_FIBER_ASM "")
else()
  enable_language(ASM)
endif()

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

# ---- OpenMP (optional): lab 08's loops on every core -------------------------
# Only lab 08's programs use it (labs/08_parallel/lab.cmake). GCC ships it
# (libgomp, with the compiler); clang needs libomp-dev. Without it lab 08 is
# not built, and the summary says why.
find_package(OpenMP QUIET COMPONENTS C)
set(LABKIT_HAVE_OPENMP OFF)
if(OpenMP_C_FOUND)
  set(LABKIT_HAVE_OPENMP ON)
endif()

# ---- MPI (optional): lab 10's training over processes ------------------------
# Only lab 10's programs use it (labs/10_distributed/lab.cmake), through
# FindMPI's C component: Open MPI or MPICH, whichever mpicc/mpiexec is first on
# the PATH (Debian's alternatives). The kit installs Open MPI (./lab deps): with
# more ranks than cores (3 ranks on a 2-core laptop) its waiting ranks yield
# the core, where MPICH's spin (lab 10's README, "Which MPI"). Without MPI,
# lab 10 is not built, and the summary says why.
find_package(MPI QUIET COMPONENTS C)
set(LABKIT_HAVE_MPI OFF)
set(LABKIT_MPI_NAME "")
if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
  set(LABKIT_HAVE_MPI ON)
  # Which implementation: its launcher says so ("mpiexec (OpenRTE) 4.1.4",
  # "HYDRA build details: Version: 4.0.2").
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE mpiexec_version ERROR_VARIABLE mpiexec_version
                  TIMEOUT 20)
  if(mpiexec_version MATCHES "Open MPI|OpenRTE")
    string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" version "${mpiexec_version}")
    set(LABKIT_MPI_NAME "Open MPI ${version}")
    # As root Open MPI refuses to start without --allow-run-as-root, and it
    # refuses more ranks than cores without --oversubscribe (with it, a
    # waiting rank yields its core): the suite runs 3 ranks on 2 cores.
    if(NOT MPIEXEC_PREFLAGS MATCHES "oversubscribe")
      set(MPIEXEC_PREFLAGS --allow-run-as-root --oversubscribe CACHE STRING "flags before the program in mpiexec's line" FORCE)
    endif()
  elseif(mpiexec_version MATCHES "HYDRA")
    string(REGEX MATCH "Version: +[0-9.]+" version "${mpiexec_version}")
    string(REGEX REPLACE "Version: +" "" version "${version}")
    set(LABKIT_MPI_NAME "MPICH ${version}")
  else()
    set(LABKIT_MPI_NAME "MPI ${MPI_C_VERSION}")
  endif()
  string(REPLACE ";" " " LABKIT_MPIEXEC_LINE "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} N ${MPIEXEC_PREFLAGS}")
endif()

# ---- CUDA (optional) --------------------------------------------------------
set(LABKIT_HAVE_CUDA OFF)
if(LABKIT_CUDA)
  # CMake looks for nvcc on PATH only; Debian and NVIDIA's installers often leave
  # it at /usr/local/cuda/bin.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(LABKIT_NVCC nvcc)
    if(NOT LABKIT_NVCC)
      set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # The GPUs plugged in here, as nvidia-smi names them: real code for each
    # one's compute capability, plus its PTX (never CMake's "native": it fails
    # where no GPU is plugged in). Where there is none, the CUDA code is only
    # compiled, not run, unless the build is carried to a GPU: then PTX for
    # Turing (compute_75, the oldest CUDA 13 supports), which every newer GPU
    # compiles when a program first loads it (the driver keeps the result in
    # ~/.nv/ComputeCache). One PTX compiles in about a third of the time of
    # the five real architectures a portable build would need, and nvcc is
    # most of a build's time on two cores.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(labkit_gpu_architectures "")
      find_program(LABKIT_NVIDIA_SMI nvidia-smi)
      if(LABKIT_NVIDIA_SMI)
        execute_process(COMMAND ${LABKIT_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                        OUTPUT_VARIABLE labkit_compute_caps ERROR_QUIET RESULT_VARIABLE labkit_smi_status
                        TIMEOUT 20)
        if(labkit_smi_status EQUAL 0)
          string(REGEX MATCHALL "[0-9]+\\.[0-9]+" labkit_compute_caps "${labkit_compute_caps}")
          foreach(cap IN LISTS labkit_compute_caps)
            string(REPLACE "." "" cap "${cap}")
            if(cap GREATER_EQUAL 75)
              list(APPEND labkit_gpu_architectures ${cap})
            endif()
          endforeach()
          list(REMOVE_DUPLICATES labkit_gpu_architectures)
        endif()
      endif()
      if(NOT labkit_gpu_architectures)
        set(labkit_gpu_architectures 75-virtual)
      endif()
      set(CMAKE_CUDA_ARCHITECTURES "${labkit_gpu_architectures}" CACHE STRING
          "CUDA architectures: those of the GPUs found when first configured, or Turing PTX where none")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    find_package(CUDAToolkit REQUIRED)
    set(LABKIT_HAVE_CUDA ON)
    # NCCL, NVIDIA's collectives (the all-reduce of data-parallel training on
    # real GPUs): optional; without it the all-reduce goes through the host.
    find_path(LABKIT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(LABKIT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    set(LABKIT_HAVE_NCCL OFF)
    if(LABKIT_NCCL_INCLUDE_DIR AND LABKIT_NCCL_LIBRARY)
      set(LABKIT_HAVE_NCCL ON)
      file(STRINGS ${LABKIT_NCCL_INCLUDE_DIR}/nccl.h nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
      string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
             LABKIT_NCCL_VERSION "${nccl_version_lines}")
    endif()
  endif()
endif()

find_program(LABKIT_GNUPLOT gnuplot)
