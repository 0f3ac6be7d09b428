# Checks that every registered test carries its area's label, so that
# `ctest -L AREA` (docs/testing.md) runs all of an area: one of AREAS (the
# folders of tests/, and "testing" for the tests of this folder).
# Run by ctest as testing_02_every_test_has_an_area_label.
#   cmake -DCTEST=<ctest> -DBUILD=<build dir> -DAREAS="a;b;..." -P check_labels.cmake
cmake_minimum_required(VERSION 3.25) # IN_LIST in script mode
include(${CMAKE_CURRENT_LIST_DIR}/ctest_registered.cmake)
ctest_registered(json last)
foreach(i RANGE ${last})
  # one test's object first: each string(JSON) call parses its whole input
  string(JSON t GET "${json}" tests ${i})
  string(JSON name GET "${t}" name)
  set(area "")
  string(JSON np ERROR_VARIABLE none LENGTH "${t}" properties)
  if(np)
    math(EXPR plast "${np} - 1")
    foreach(p RANGE ${plast})
      string(JSON pname GET "${t}" properties ${p} name)
      if(pname STREQUAL "LABELS")
        string(JSON nl LENGTH "${t}" properties ${p} value)
        math(EXPR llast "${nl} - 1")
        foreach(l RANGE ${llast})
          string(JSON label GET "${t}" properties ${p} value ${l})
          if(label IN_LIST AREAS)
            set(area ${label})
          endif()
        endforeach()
      endif()
    endforeach()
  endif()
  if(area STREQUAL "")
    message(FATAL_ERROR "${name}: no area label (one of ${AREAS}): `ctest -L AREA` would miss it")
  endif()
endforeach()
math(EXPR n "${last} + 1")
message(STATUS "${n} tests, each with an area label")
