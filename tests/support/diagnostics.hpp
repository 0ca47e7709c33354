// Checking located input errors in tests: the diagnostics a call throws, and one diagnostic's place
// and message.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <source_location>
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

// One expected diagnostic: its line and column (1-based) and a part of its message.
struct Located {
  int line;
  int column;
  std::string text;
};

// Exactly the `expected` diagnostics, in order, each checked as expect_error does. A count that differs
// is a fatal failure of this call (with every diagnostic dumped): wrap the call in
// ASSERT_NO_FATAL_FAILURE where the test goes on to read the diagnostics. Failures name the caller's
// line too.
inline void expect_errors(const std::vector<Diagnostic>& diagnostics, const std::vector<Located>& expected,
                          const std::source_location& caller = std::source_location::current()) {
  const ::testing::ScopedTrace trace(caller.file_name(), static_cast<int>(caller.line()), "expect_errors");
  ASSERT_EQ(diagnostics.size(), expected.size()) << dump(diagnostics);
  for (std::size_t i = 0; i < expected.size(); ++i)
    expect_error(diagnostics[i], expected[i].line, expected[i].column, expected[i].text);
}

}  // namespace dnnsim::testing
