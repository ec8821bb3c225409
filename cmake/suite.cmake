# What each test needs built, so that a run of some tests builds only their
# programs (./lab test -L LABEL, -R REGEX; the CI's sanitizer step):
#
#   labkit_test_needs(TEST name LABELS label... TARGETS target...)
#                     the test, its labels (as set_tests_properties gives
#                     them) and the targets whose programs or files it runs
#   labkit_write_suite()                at the end of the top-level CMakeLists
#
# labkit_write_suite() makes a target per label, suite-<label> (suite-unit,
# suite-solution, suite-kit, suite-wrong, suite-gpu, suite-lab), and `suite`
# for every test, and writes <build>/suite-targets.txt, one line per test:
# "<test> <label>[,<label>...] <target>...", which ./lab test reads
# (tools/lab/suite.sh).

define_property(GLOBAL PROPERTY LABKIT_SUITE_LINES BRIEF_DOCS "test and targets, one entry per test"
                FULL_DOCS "labkit_test_needs appends \"<test> <target>...\"; labkit_write_suite reads them.")

function(labkit_test_needs)
  cmake_parse_arguments(T "" "TEST" "LABELS;TARGETS" ${ARGN})
  if(NOT T_TEST OR NOT T_LABELS OR NOT T_TARGETS)
    message(FATAL_ERROR "labkit_test_needs(${ARGN}): give TEST, its LABELS and the TARGETS it runs")
  endif()
  string(REPLACE ";" "," labels "${T_LABELS}")
  string(REPLACE ";" " " targets "${T_TARGETS}")
  set_property(GLOBAL APPEND PROPERTY LABKIT_SUITE_LINES "${T_TEST} ${labels} ${targets}")
endfunction()

function(labkit_write_suite)
  get_property(lines GLOBAL PROPERTY LABKIT_SUITE_LINES)
  set(text "")
  set(all_targets "")
  set(labels "")
  foreach(line IN LISTS lines)
    string(REPLACE " " ";" words "${line}")
    list(POP_FRONT words test test_labels)
    string(REPLACE ";" " " targets "${words}")
    string(APPEND text "${test} ${test_labels} ${targets}\n")
    string(REPLACE "," ";" test_labels "${test_labels}")
    foreach(label IN LISTS test_labels)
      list(APPEND labels ${label})
      list(APPEND suite_${label} ${words})
    endforeach()
    list(APPEND all_targets ${words})
  endforeach()
  list(REMOVE_DUPLICATES labels)
  foreach(label IN LISTS labels)
    list(REMOVE_DUPLICATES suite_${label})
    add_custom_target(suite-${label})
    add_dependencies(suite-${label} ${suite_${label}})
  endforeach()
  list(REMOVE_DUPLICATES all_targets)
  add_custom_target(suite)
  add_dependencies(suite ${all_targets})
  file(WRITE ${CMAKE_BINARY_DIR}/suite-targets.txt "${text}")
endfunction()
