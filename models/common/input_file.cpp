#include "models/common/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

std::string read_input_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InputError(SourceLocation{path}, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path}, "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(SourceLocation{path}, "cannot read the file");
  return text.str();
}

void create_output_directory(const std::string& path) {
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_directory(path, error))
    throw InputError(SourceLocation{path}, "is a file, not a directory: the outputs need a directory");
  std::filesystem::create_directories(path, error);
  if (error) throw InputError(SourceLocation{path}, "cannot create the output directory: " + error.message());
}

}  // namespace dnnsim
