# Included by the checks of what ctest registered (check_skip.cmake,
# check_labels.cmake): ctest_registered(JSON LAST) sets JSON to
# `ctest --show-only=json-v1` of the build BUILD and LAST to the index of its
# last test.
function(ctest_registered json_var last_var)
  execute_process(COMMAND ${CTEST} --show-only=json-v1 WORKING_DIRECTORY ${BUILD}
    OUTPUT_VARIABLE json RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ctest --show-only failed: ${rc}")
  endif()
  string(JSON n LENGTH "${json}" tests)
  math(EXPR last "${n} - 1")
  set(${json_var} "${json}" PARENT_SCOPE)
  set(${last_var} ${last} PARENT_SCOPE)
endfunction()
