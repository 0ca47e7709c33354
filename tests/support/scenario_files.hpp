// Scenario YAML written inline in a test and loaded from a temporary file (tests/support/temp_files.hpp).
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim::testing {

inline Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario(write_file("scenario.yaml", yaml), overrides);
}

}  // namespace dnnsim::testing
