// Files written inline by a test into a temporary directory of its own (tests run in parallel
// processes), removed when the test program ends. Pure: usable from every layer's tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dnnsim::testing {

inline std::string temp_prefix() { return "dnnsim-test-" + std::to_string(::getpid()) + "-"; }

inline std::filesystem::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() / (temp_prefix() + info->name());
  std::filesystem::create_directories(dir);
  return dir;
}

class TempCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ignored))
      if (entry.path().filename().string().rfind(temp_prefix(), 0) == 0)
        std::filesystem::remove_all(entry.path(), ignored);
  }
};
inline ::testing::Environment* const kTempCleanup = ::testing::AddGlobalTestEnvironment(new TempCleanup);

inline std::string write_file(const std::string& name, const std::string& text) {
  const auto path = test_dir() / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace dnnsim::testing
