// Checking located input errors in tests: the diagnostics a call throws, and one diagnostic's place
// and message.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"

namespace dnnsim::testing {

// All diagnostics on separate lines, for failure messages.
inline std::string dump(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) text += "\n  " + format_diagnostic(d);
  return text;
}

// The diagnostics of the InputError that `call` must throw.
template <class Call>
std::vector<Diagnostic> diagnostics_thrown_by(Call&& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

// One diagnostic at line:column (1-based) whose message contains `text`.
inline void expect_error(const Diagnostic& d, int line, int column, const std::string& text) {
  EXPECT_EQ(d.location.line, line) << format_diagnostic(d);
  EXPECT_EQ(d.location.column, column) << format_diagnostic(d);
  EXPECT_NE(d.message.find(text), std::string::npos) << "'" << text << "' not in: " << format_diagnostic(d);
}

}  // namespace dnnsim::testing
