# The unit tests of the harness: its clock helpers, the command line, files read and written safely, results tables and figures,
# progress lines, and what a known-wrong version's check may leave out. Included by CMakeLists.txt in this directory.
#
# Each test runs in this directory's build folder, makes its own temporary
# directory there (mkdtemp) and removes it when done. test_results draws real
# figures when gnuplot is installed and skips only that part when it is not.
foreach(io_test timer cli file_safety results progress check)
  add_executable(test_${io_test} ${CMAKE_CURRENT_LIST_DIR}/test_${io_test}.c)
  target_link_libraries(test_${io_test} PRIVATE labkit)
  add_test(NAME unit.${io_test} COMMAND test_${io_test})
  set_tests_properties(unit.${io_test} PROPERTIES LABELS unit)
  labkit_test_needs(TEST unit.${io_test} LABELS unit TARGETS test_${io_test})
endforeach()

# test_results draws with a lab-style script of its own and the shared style,
# as a lab program does (labs/CMakeLists.txt), and names a simulated GPU.
target_compile_definitions(test_results PRIVATE
  LAB_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plot_example.gp"
  LABKIT_PLOT_STYLE="${LABKIT_PLOT_STYLE}")
set_tests_properties(unit.results PROPERTIES ENVIRONMENT "LABKIT_SIM_GPUS=1;LABKIT_SIM_MEMORY=64M")
# test_check says where a claim on a second GPU is tried: two simulated GPUs
# and no real one, whatever the machine has.
set_tests_properties(unit.check PROPERTIES ENVIRONMENT "LABKIT_SIM_GPUS=2;CUDA_VISIBLE_DEVICES=-1")

# Parameters saved to safetensors files and loaded back, on each device (the
# same tests on cuda:0, label gpu, skipped where there is none); then a file the
# kit wrote read by safetensors' own Python loader, skipped (77) where no
# python3 has safetensors with torch or numpy (LABKIT_PYTHON picks one).
add_executable(test_safetensors ${CMAKE_CURRENT_LIST_DIR}/test_safetensors.c)
target_link_libraries(test_safetensors PRIVATE labkit)
labkit_unit_test(NAME unit.safetensors.cpu COMMAND test_safetensors cpu SIM_GPUS 2)
labkit_unit_test(NAME unit.safetensors.sim COMMAND test_safetensors sim:0 SIM_GPUS 2)
labkit_unit_test(NAME gpu.safetensors.cuda0 COMMAND test_safetensors cuda:0 SIM_GPUS 2 LABELS gpu)
labkit_unit_test(NAME unit.safetensors.pytorch COMMAND test_safetensors cpu pytorch SIM_GPUS 2)

# A crash report that arrives at once and names the line, however broken the
# program (labkit/crash.h): built with debug information, as the labs are, so
# that addr2line can name the lines. Children crash on purpose; each has 30 s.
add_executable(test_crash ${CMAKE_CURRENT_LIST_DIR}/test_crash.c)
target_link_libraries(test_crash PRIVATE labkit)
target_compile_definitions(test_crash PRIVATE _GNU_SOURCE)
target_compile_options(test_crash PRIVATE -g)
labkit_unit_test(NAME unit.crash COMMAND test_crash SIM_GPUS 1)
