# Checks that ctest reports a test that needs the shared corpus as skipped,
# never as passed, when the corpus is absent: every registered test whose
# name says "corpus" has SKIP_RETURN_CODE 77 (tests/test_skip.h exits 77).
# Run by ctest as testing_01_tests_without_their_input_report_skipped.
#   cmake -DCTEST=<ctest> -DBUILD=<build dir> -P check_skip.cmake
include(${CMAKE_CURRENT_LIST_DIR}/ctest_registered.cmake)
ctest_registered(json last)
set(found 0)
foreach(i RANGE ${last})
  string(JSON name GET "${json}" tests ${i} name)
  if(NOT name MATCHES "corpus")
    continue()
  endif()
  math(EXPR found "${found} + 1")
  set(skip "")
  string(JSON np ERROR_VARIABLE none LENGTH "${json}" tests ${i} properties)
  if(np)
    math(EXPR plast "${np} - 1")
    foreach(p RANGE ${plast})
      string(JSON pname GET "${json}" tests ${i} properties ${p} name)
      if(pname STREQUAL "SKIP_RETURN_CODE")
        string(JSON skip GET "${json}" tests ${i} properties ${p} value)
      endif()
    endforeach()
  endif()
  if(NOT skip STREQUAL "77")
    message(FATAL_ERROR "${name}: reads the corpus but has no SKIP_RETURN_CODE 77: "
                        "without the corpus ctest would count it as passed")
  endif()
endforeach()
if(found EQUAL 0)
  message(FATAL_ERROR "no test named *corpus* is registered")
endif()
message(STATUS "${found} corpus tests, each reported as skipped when the corpus is absent")
