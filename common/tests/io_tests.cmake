# The unit tests of the harness: its clock helpers, CSV files, plots, the
# command line, and files read and written safely. Included by CMakeLists.txt
# in this directory.
#
# Each test runs in this directory's build folder, makes its own temporary
# directory there (mkdtemp) and removes it when done. test_plot draws real
# figures when gnuplot is installed and skips only that part when it is not.
foreach(io_test timer csv plot cli file_safety)
  add_executable(test_${io_test} ${CMAKE_CURRENT_LIST_DIR}/test_${io_test}.c)
  target_link_libraries(test_${io_test} PRIVATE labkit)
  add_test(NAME unit.${io_test} COMMAND test_${io_test})
  set_tests_properties(unit.${io_test} PROPERTIES LABELS unit)
endforeach()
