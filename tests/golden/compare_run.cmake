# Runs `dnnsim run SCENARIO --out OUT` and compares OUT/summary.json with EXPECTED byte for byte.
# Regenerate after an intended change with: dnnsim run SCENARIO --out /tmp/x && cp /tmp/x/summary.json EXPECTED
execute_process(COMMAND ${DNNSIM} run ${SCENARIO} --out ${OUT} RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dnnsim run ${SCENARIO} exited with ${status}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/summary.json ${EXPECTED} RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR "${OUT}/summary.json differs from ${EXPECTED}")
endif()
