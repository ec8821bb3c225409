# Each fuzz target built by the kit's own compiler, without libFuzzer, with
# replay.c as its main: the unit test unit.fuzz.<name> runs every seed and
# every crash ever found (fuzz/<name>/seeds, fuzz/<name>/crashes) through it,
# so that a fixed crash stays fixed (under AddressSanitizer in the debug-asan
# preset). Included by the kit's CMakeLists.txt.
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
foreach(name IN LISTS LABKIT_FUZZ_TARGETS)
  add_executable(fuzz_replay_${name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.c ${CMAKE_CURRENT_LIST_DIR}/replay.c)
  labkit_fuzz_target_sources(fuzz_replay_${name} ${name} ${PROJECT_SOURCE_DIR})
  set(inputs "")
  foreach(kind seeds crashes)
    if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${name}/${kind})
      list(APPEND inputs ${CMAKE_CURRENT_LIST_DIR}/${name}/${kind})
    endif()
  endforeach()
  add_test(NAME unit.fuzz.${name} COMMAND fuzz_replay_${name} ${inputs})
  set_tests_properties(unit.fuzz.${name} PROPERTIES LABELS unit TIMEOUT 120
                       ENVIRONMENT_MODIFICATION "LABKIT_SIM_GPUS=unset:;LABKIT_SIM_MEMORY=unset:")
  labkit_test_needs(TEST unit.fuzz.${name} LABELS unit TARGETS fuzz_replay_${name})
endforeach()
