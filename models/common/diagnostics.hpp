// Located input diagnostics: every problem in a user's file is reported as
//   FILE:LINE:COL: error: what was expected
// and all problems of a file are collected before anything is reported (parse → validate → build,
// as astra-network-analytical's NetworkParser and or-tools' parameters_validation do).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace dnnsim {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
};

struct Diagnostic {
  SourceLocation location;
  std::string message;
};

// "file:line:col: error: message" (line and column omitted when unknown).
[[nodiscard]] std::string format_diagnostic(const Diagnostic& diagnostic);

// Bad user input: carries every diagnostic found. Thrown by parsers and validators, caught only by
// the CLI, which prints them and exits with code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  InputError(SourceLocation location, std::string message);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// What the CLI prints for bad input, and the Python module's exception text: every diagnostic on its
// own line, then "N errors; nothing was simulated".
[[nodiscard]] std::string format_input_error(const InputError& error);

// Collects diagnostics while a file is read, so that a reader can go on after the first problem.
class DiagnosticSink {
 public:
  void error(SourceLocation location, std::string message);
  void append(const std::vector<Diagnostic>& diagnostics);
  [[nodiscard]] bool empty() const { return diagnostics_.empty(); }
  [[nodiscard]] std::size_t size() const { return diagnostics_.size(); }
  // Puts `prefix` before the message of every diagnostic from the `first`-th on: a reader of one
  // part of a file (an entry's options) names that part in what the generic readers reported.
  void prefix_from(std::size_t first, const std::string& prefix);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // Throws InputError with everything collected, if anything was, in file order (by file, line,
  // column; stable, so problems at one place keep the order they were found in), as a compiler
  // reports them; a problem found twice (a file two sections read) once.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> diagnostics_;
};

// The candidate closest to `word` by edit distance, if close enough to be a plausible typo; empty
// otherwise. Used for "unknown key 'bandwith'; did you mean 'bandwidth'?".
[[nodiscard]] std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// What `word` may stand for: the up to four candidates it begins ("H100" for H100-SXM and H100-PCIe),
// else the closest_match, else nothing.
[[nodiscard]] std::vector<std::string> meant_by(const std::string& word, const std::vector<std::string>& candidates);

// "'x'", "'x' or 'y'": names as a message offers them.
[[nodiscard]] std::string quoted_alternatives(const std::vector<std::string>& names);

// "; did you mean 'x'?" (or "'x' or 'y'" for a name that begins several) or "; expected one of: a, b, c" —
// the tail of an unknown-name message.
[[nodiscard]] std::string suggestion_suffix(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace dnnsim
