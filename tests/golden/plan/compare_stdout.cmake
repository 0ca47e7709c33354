# Runs COMMAND (arguments separated by '|'), which must exit 0, and compares its stdout with the file
# EXPECTED byte for byte (stderr, which has wall times, is not compared).
# Regenerate after an intended change with the command itself: dnnsim plan … > EXPECTED (then re-check
# every number by hand, as tests/golden/plan/README.md says).
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit code ${code}, expected 0\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "stdout differs from ${EXPECTED}\n--- expected:\n${expected}\n--- got:\n${out}")
endif()
