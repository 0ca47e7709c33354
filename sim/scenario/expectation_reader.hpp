// The target of an expectation, written alike in a scenario's `expectations:` (docs/scenarios.md) and
// a comparison file's `expect:` (docs/regress.md); each reader takes what names the metric itself.
#pragma once

#include "models/common/yaml_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// Reads `value`, `compare` (approx, at_most, at_least), `tolerance` (a number ≥ 0, absolute, or "N%",
// relative to |value|), `source` and `known_gap` from `map` into `expectation`; every problem located.
void read_expectation_target(YamlReader& reader, MapReader& map, Expectation& expectation);

// For a metric never negative (never_negative_field, summary_fields.hpp), `expectation`'s value below
// zero is a mistake (a sign typed by accident: `at_most` could never pass, `at_least` always would),
// reported at the value.
void refuse_negative_target(YamlReader& reader, MapReader& map, const Expectation& expectation,
                            const std::string& metric);

}  // namespace dnnsim
