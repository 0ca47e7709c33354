// The registries as listed (sim/run/registries.hpp): every entry and every declared option documented,
// and docs/scenarios.md's option tables the text `dnnsim list options` generates from the
// declarations (scripts/update-docs rewrites them), so that the reference cannot drift from the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "dnnsim/source_paths.hpp"
#include "sim/run/registries.hpp"

namespace dnnsim {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \n");
  const auto last = text.find_last_not_of(" \n");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

TEST(RegistryDocs, EveryEntryAndOptionIsDocumented) {
  for (const RegistryListing& listing : builtin_registry_listings()) {
    EXPECT_FALSE(listing.what.empty()) << listing.name;
    for (const ListedEntry& entry : listing.entries) {
      EXPECT_FALSE(entry.description.empty()) << listing.name << " " << entry.name;
      EXPECT_FALSE(entry.source.empty()) << listing.name << " " << entry.name;
      for (const OptionSpec& option : entry.options->specs())
        EXPECT_FALSE(option.doc.empty()) << listing.name << " " << entry.name << " " << option.name;
    }
  }
}

TEST(RegistryDocs, TheScenarioReferenceHoldsTheGeneratedOptionTables) {
  std::ifstream file(DNNSIM_SOURCE_DIR "/docs/scenarios.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- BEGIN generated: dnnsim list options -->";
  const std::string end = "<!-- END generated: dnnsim list options -->";
  const auto from = doc.find(begin);
  const auto to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/scenarios.md lacks the generated section's markers";
  ASSERT_NE(to, std::string::npos);
  // The registries' tables, then the calibration backends': those the CLI assembles with its CUDA
  // module, so their text is checked through the binary (docs.generated_options).
  const std::string section = trimmed(doc.substr(from + begin.size(), to - from - begin.size()));
  const std::string registries = trimmed(options_reference(builtin_registry_listings()));
  EXPECT_EQ(section.substr(0, registries.size()), registries)
      << "docs/scenarios.md's option tables differ from the declarations: run scripts/update-docs";
  EXPECT_EQ(trimmed(section.substr(std::min(registries.size(), section.size()))).rfind("### backends", 0), 0U)
      << "the calibration backends' tables follow the registries' (scripts/update-docs)";
}

}  // namespace
}  // namespace dnnsim
