// Reading a whole input file for a parser, the one place where a path that cannot be read (missing,
// a directory, unreadable) becomes an InputError at that path. Parsers then read the text: nlohmann's
// stream input reads the stream buffer directly, so a directory opened as an ifstream threw
// std::ios_base::failure past every handler (a fuzzing finding, tests/fuzz/crashers/scenario/).
#pragma once

#include <string>

namespace dnnsim {

// The file's bytes. @throw InputError located at `path` when it is a directory, cannot be opened or
// cannot be read.
[[nodiscard]] std::string read_input_file(const std::string& path);

// Creates an output directory (and its parents) before anything runs, so that a path that cannot be
// one — a file there, no permission — is bad input found before a long simulation, not an internal
// error after it. @throw InputError located at `path`.
void create_output_directory(const std::string& path);

}  // namespace dnnsim
