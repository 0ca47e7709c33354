// Shared by the fuzz targets (tests/fuzz/fuzz_*.cpp, docs/testing.md). Each target defines
// LLVMFuzzerTestOneInput over one parser; the contract it checks is the project's: every input is
// read or refused with an InputError (located diagnostics). Any other exception escapes and is a
// finding (libFuzzer reports it as a crash), as are sanitizer reports, hangs and memory blow-ups.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "models/common/diagnostics.hpp"

namespace dnnsim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Readers that take a path get the input through one file per process and target, rewritten for every
// input (paths inside it resolve against the temporary folder, where nothing else is).
// They are removed at exit, so that the smoke in every CI run leaves nothing behind.
inline std::string write_input(std::string_view text, const std::string& name) {
  struct Written {
    std::set<std::string> paths;
    ~Written() {
      for (const std::string& path : paths) std::remove(path.c_str());
    }
  };
  static Written written;
  const std::string path = "/tmp/dnnsim-fuzz-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  written.paths.insert(path);
  return path;
}

// Runs `parse`; an InputError is the expected refusal of a bad input.
template <class Parse>
int expect_read_or_refused(Parse&& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    if (e.diagnostics().empty()) throw;  // a refusal must say why
  }
  return 0;
}

}  // namespace dnnsim::fuzz
