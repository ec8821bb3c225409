# The fuzz targets, each fuzz/fuzz_<name>.c with its seeds, crashes ever found
# and dictionary in fuzz/<name>/ (both builds read this list: fuzz/CMakeLists.txt
# with libFuzzer, fuzz/tests.cmake for the unit tests' replays).
set(LABKIT_FUZZ_TARGETS safetensors idx cli device)

# What a target needs beyond the library: the labs' IDX reader for idx
# (labs/common/, lab 05's digits).
function(labkit_fuzz_target_sources target name root)
  if(name STREQUAL "idx")
    target_sources(${target} PRIVATE ${root}/labs/common/idx.c ${root}/labs/common/data.c)
    target_include_directories(${target} PRIVATE ${root}/labs/common)
  endif()
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  target_link_libraries(${target} PRIVATE labkit)
endfunction()
