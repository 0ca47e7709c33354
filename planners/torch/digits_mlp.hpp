// The non-convex proxy of the statistical-efficiency calibration (models/sync/proxy_training.hpp),
// built with libtorch inside the plugin (planners/jobs/marl/torch_plugin.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "models/sync/proxy_training.hpp"

namespace dnnsim {

// A one-hidden-layer tanh network on the digits, 64 pixels + bias → `hidden` → 10 (+ bias), its
// weights drawn once from `seed`.
[[nodiscard]] std::unique_ptr<ProxyModel> make_digits_mlp(const DigitsData& data, int hidden, std::uint64_t seed);

}  // namespace dnnsim
