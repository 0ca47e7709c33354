// Every registry of an extension point under the name `dnnsim list` and `dnnsim.list` give it, each
// entry with its description, source and declared options (models/common/options.hpp): one table
// for the CLI, the Python module and the option tables of docs/scenarios.md, which are generated
// from it (options_reference) and checked against it by a test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/options.hpp"

namespace dnnsim {

struct ListedEntry {
  std::string name;
  std::string description;
  std::string source;
  std::shared_ptr<const OptionSchema> options;
};

struct RegistryListing {
  std::string name;  // as `dnnsim list NAME` takes it
  std::string what;  // one line: what the entries are and the scenario key (or flag) that names one
  std::vector<ListedEntry> entries;
};

// The hardware catalog's lines beside the registries' in `dnnsim list` and `dnnsim.list()`.
inline constexpr const char* kGpusWhat = "the hardware catalog's GPUs: `cluster.node_types.<type>.gpu`";
inline constexpr const char* kLinksWhat =
    "the hardware catalog's links: `link` of a `nic`, `gpu_link`, `pcie` or interconnect link mapping";

template <class Registry>
[[nodiscard]] RegistryListing listing_of(std::string name, std::string what, const Registry& registry) {
  RegistryListing listing{std::move(name), std::move(what), {}};
  for (const auto& entry : registry.entries())
    listing.entries.push_back(ListedEntry{entry.name, entry.description, entry.source, entry.options});
  return listing;
}

// The built-in registries in listing order (the calibration backends, which the CLI loads with the
// CUDA module, excepted: `dnnsim list backends`).
[[nodiscard]] const std::vector<RegistryListing>& builtin_registry_listings();

// `dnnsim list NAME`: each entry's name, description and source, and with `options` its options.
[[nodiscard]] std::string format_listing(const RegistryListing& listing, bool options);

// The options of every entry that declares any, as Markdown: a heading per registry and a table per
// entry (options_markdown), what docs/scenarios.md holds between its "generated options" markers.
[[nodiscard]] std::string options_reference(const std::vector<RegistryListing>& listings);

}  // namespace dnnsim
