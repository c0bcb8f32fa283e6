# mi_library / mi_test / mi_fuzzer / mi_benchmark, modelled on absl_cc_library.

set(MI_WARNING_FLAGS -Wall -Wextra -Wno-missing-field-initializers)

if(MI_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(MI_FUZZ)
  # Instrument every library for coverage, not only the fuzzer's own file.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# mi_library(NAME name SRCS ... DEPS ...)
function(mi_library)
  cmake_parse_arguments(MI "" "NAME" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${MI_NAME} STATIC ${MI_SRCS})
  target_include_directories(${MI_NAME} PUBLIC
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${MI_NAME} PRIVATE ${MI_WARNING_FLAGS})
  target_link_libraries(${MI_NAME} PUBLIC ${MI_PUBLIC_DEPS} PRIVATE ${MI_DEPS})
endfunction()

# mi_test(NAME name SRCS ... DEPS ...)
function(mi_test)
  if(NOT MI_TESTS)
    return()
  endif()
  cmake_parse_arguments(MI "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${MI_NAME} ${MI_SRCS})
  target_compile_options(${MI_NAME} PRIVATE ${MI_WARNING_FLAGS})
  target_link_libraries(${MI_NAME} PRIVATE ${MI_DEPS} GTest::gtest_main)
  target_compile_definitions(${MI_NAME} PRIVATE
    MI_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${MI_NAME} COMMAND ${MI_NAME})
endfunction()

# mi_fuzzer(NAME name SRCS ... DEPS ... CORPUS dir)
# Under clang with MI_FUZZ: a libFuzzer binary. Otherwise: the same entry
# point linked with a replay main() that runs the corpus (LLVM DUMMY_MAIN),
# registered as a ctest so every build replays seeds and regressions.
function(mi_fuzzer)
  cmake_parse_arguments(MI "" "NAME;CORPUS" "SRCS;DEPS" ${ARGN})
  add_executable(${MI_NAME} ${MI_SRCS})
  target_compile_options(${MI_NAME} PRIVATE ${MI_WARNING_FLAGS})
  target_link_libraries(${MI_NAME} PRIVATE ${MI_DEPS})
  if(MI_FUZZ)
    target_compile_options(${MI_NAME} PRIVATE -fsanitize=fuzzer)
    target_link_options(${MI_NAME} PRIVATE -fsanitize=fuzzer)
  else()
    target_link_libraries(${MI_NAME} PRIVATE mi_fuzz_replay_main)
  endif()
  if(MI_TESTS AND MI_CORPUS)
    # -runs=0: a libFuzzer binary runs the corpus once and stops instead of
    # fuzzing (and writing new inputs into the committed corpus).
    if(MI_FUZZ)
      set(replay_flags -runs=0)
    endif()
    add_test(NAME ${MI_NAME}_replay
      COMMAND ${MI_NAME} ${replay_flags} ${PROJECT_SOURCE_DIR}/${MI_CORPUS})
  endif()
endfunction()

# mi_benchmark(NAME name SRCS ... DEPS ...)
function(mi_benchmark)
  if(NOT MI_BENCH)
    return()
  endif()
  cmake_parse_arguments(MI "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${MI_NAME} ${MI_SRCS})
  target_compile_options(${MI_NAME} PRIVATE ${MI_WARNING_FLAGS})
  target_link_libraries(${MI_NAME} PRIVATE ${MI_DEPS} benchmark::benchmark)
endfunction()

# mi_static_libraries_pic(dir): every static library defined in `dir` and
# below is compiled as position-independent code, so that a shared object
# (the Python extension module) can link it.
function(mi_static_libraries_pic dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      set_property(TARGET ${target} PROPERTY POSITION_INDEPENDENT_CODE ON)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    mi_static_libraries_pic(${subdir})
  endforeach()
endfunction()
